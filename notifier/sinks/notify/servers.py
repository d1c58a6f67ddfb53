"""What each notification server shows of a notification's actions, and the actions chosen for it.

Pure: the server is described by what it said of itself (``GetServerInformation``: name, vendor,
version; ``GetCapabilities``). What is known of each, as measured on the real servers (see
docs/testing.md, the desktop layer):

- GNOME Shell (43): a click on the banner sends ``default``; the banner shows at most 3 buttons.
- KDE Plasma (5.27): a click sends ``default``; its buttons sit in a right-to-left ``Flow`` that
  wraps with the last actions on the top row, so only one row keeps our order: at most 3 buttons,
  and no more than fit one row of its popup (measured: "Deploy to production" + "Roll back the
  release" fit; three 11-letter capitalised labels wrap); its reply button comes last whatever the
  order sent. It offers an inline reply field (capability ``inline-reply``, signal
  ``NotificationReplied``).
- xfce4-notifyd (0.7): the ``default`` action is drawn as a button, and a click on the bubble body
  only dismisses it (closed, reason 2, no ``ActionInvoked``): the default is that button.
- Every other server: the spec's reading (a click on the bubble sends ``default``; buttons for the
  rest, as many as it draws).

Each was measured on one version (above); no rule depends on the version yet, so each applies to
every version of its server until another version is measured to differ (the version is kept in
:class:`Server` for that). What a server can do at all comes from its capabilities: no buttons
without ``actions``, no reply field without ``inline-reply`` (Plasma before 5.18).

The choice: the most useful first (answers, the reply field, going to the session where only a
button can, the window, snooze), never more buttons than the server shows, no label twice."""

from __future__ import annotations

from dataclasses import dataclass

Actions = tuple[tuple[str, str], ...]  # (action id, label), in the order the server shows them

DEFAULT = "default"  # the spec's action for a click on the bubble
REPLY = "inline-reply"  # KDE's inline reply field (its label is the field's button)
REPLY_LABEL = "Answer…"
REPLY_HINTS = {
    "x-kde-reply-placeholder-text": "Type your answer",
    "x-kde-reply-submit-button-text": "Send answer",
}
PLASMA_ROW_PX = 360  # one row of Plasma 5.27's popup: an estimated 341 px of buttons fit, 402 px wrapped
# Rank of an action by how useful it is from a bubble; unknown ids (another caller's) after these.
_RANK = {"answer": 0, REPLY: 1, DEFAULT: 2, "goto": 2, "show": 3, "snooze": 4}


@dataclass(frozen=True)
class Server:
    """A notification server as it describes itself (names and version as it said them)."""

    name: str = ""
    vendor: str = ""
    version: str = ""
    capabilities: frozenset[str] = frozenset()

    @classmethod
    def of(cls, info: tuple[str, ...], capabilities: tuple[str, ...]) -> Server:
        name, vendor, version = (list(info) + ["", "", ""])[:3]
        return cls(name, vendor, version, frozenset(capabilities))


@dataclass(frozen=True)
class Shows:
    """What a server draws of the actions: at most ``buttons`` buttons (None: as many as are sent);
    ``default_button``: the ``default`` action is a button (and no click on the bubble reaches it);
    ``reply``: an inline reply field; ``row_px``: they must fit one row of that width."""

    buttons: int | None = None
    default_button: bool = False
    reply: bool = False
    row_px: int | None = None  # the buttons must fit one row this wide (estimated: :func:`width`)


def shows(server: Server) -> Shows:
    """What ``server`` shows, from its name, version and capabilities."""
    name = server.name.casefold()
    reply = REPLY in server.capabilities
    if name == "gnome-shell":
        return Shows(buttons=3)  # (js/ui/messageTray.js: MAX_NOTIFICATION_BUTTONS, 3.x to 43 at least)
    if name == "plasma" or server.vendor.casefold() == "kde":
        return Shows(buttons=3, reply=reply, row_px=PLASMA_ROW_PX)
    if name == "xfce notify daemon" or name.startswith("xfce4-notifyd"):
        return Shows(default_button=True)
    return Shows(reply=reply)


def summary(server: Server) -> str:
    """What pi-notifier's notifications offer on ``server``, for ``doctor``."""
    if "actions" not in server.capabilities:
        return "no buttons (it has no actions): the tray and the window answer"
    what = shows(server)
    if what.default_button:
        said = "'Go to session' is a button (a click on the bubble only dismisses it)"
    else:
        said = "a click goes to the session"
    said += (
        "; "
        + (f"at most {what.buttons} buttons" if what.buttons else "every button")
        + ", the most useful first"
    )
    if what.reply:
        said += "; free-text answers typed into the notification"
    return said


def choose(actions: Actions, server: Server, takes_text: bool = False) -> Actions:
    """The actions to send ``server`` for a notification that offers ``actions`` (the ``default``
    one: a click goes to the session), in the order to show them. ``takes_text``: its question can
    be answered with free text (``answer --text``), so a reply field is offered where there is one.
    Servers without the ``actions`` capability get none."""
    if "actions" not in server.capabilities:
        return ()
    what = shows(server)
    offered = list(actions)
    if takes_text and what.reply:
        offered.append((REPLY, REPLY_LABEL))
    default = [a for a in offered if a[0] == DEFAULT][:1]
    buttons = [a for a in offered if a[0] != DEFAULT and not (a[0] == "goto" and default)]
    if what.default_button:
        buttons += default  # it is a button there: ranked with the others
    buttons.sort(key=lambda a: _RANK.get(a[0].split(":", 1)[0], len(_RANK)))  # (stable: order kept)
    # a label twice: the first kept, except that the default's button (the only way to the
    # session there) is kept over an option that reads the same
    seen = {_key(label) for action, label in buttons if what.default_button and action == DEFAULT}
    chosen: list[tuple[str, str]] = []
    for action, label in buttons:
        key = _key(label)
        if key in seen and not (what.default_button and action == DEFAULT):
            continue
        seen.add(key)
        chosen.append((action, label))
    if what.buttons is not None:
        chosen = chosen[: what.buttons]
    if what.row_px is not None:
        row = 0
        for n, (_, label) in enumerate(chosen):
            row += width(label)
            if n and row > what.row_px:  # (the first button always: alone it cannot wrap)
                chosen = chosen[:n]
                break
    if what.default_button:
        return tuple(chosen)
    return (*default, *chosen)


def _key(label: str) -> str:
    return " ".join(label.casefold().split())


def width(label: str) -> int:
    """A button's width in pixels, estimated for a 10 pt sans font: capitals and wide letters 10,
    others 7, and 24 of padding and spacing (Plasma 5.27 here: "Show", "Snooze 15 min",
    "Answer…" took about 250)."""
    return 24 + sum(10 if c.isupper() or c in "mwMW@%" else 7 for c in label)
