"""What one notification says and offers (pure): its title and body for a planner notice, the
actions a server is sent (as that server shows them), and the rest of the ``Notify`` call (hints,
how long it stays).

Every untrusted string goes through the one sanitizer and its escaping (:mod:`notifier.core.text`):
entities for servers that render markup, look-alike characters for those that do not advertise it
(some render it anyway).

What each notification server shows of a notification's actions, as measured on the real servers
(see docs/testing.md, the desktop layer), the server described by what it said of itself
(``GetServerInformation``: name, vendor, version; ``GetCapabilities``):

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
button can, the window, snooze), never more buttons than the server shows, no label twice.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from notifier import APP_NAME
from notifier.core.model import Notice, Question, SessionRef
from notifier.core.text import clean, duration, last_folder, markup

Actions = tuple[tuple[str, str], ...]  # (action id, label), in the order the server shows them

DEFAULT = "default"  # the spec's action for a click on the bubble
REPLY = "inline-reply"  # KDE's inline reply field (its label is the field's button)
REPLY_LABEL = "Answer…"
REPLY_HINTS = {
    "x-kde-reply-placeholder-text": "Type your answer",
    "x-kde-reply-submit-button-text": "Send answer",
}
PLASMA_ROW_PX = 360  # one row of Plasma 5.27's popup: an estimated 341 px of buttons fit, 402 px wrapped
# xfce4-notifyd 0.7 widens its bubble to its one row of buttons (an estimated 1,024 px drew 1,281 px,
# off a 1,280 px screen): this keeps it near 800 px
XFCE_ROW_PX = 640
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
class Abilities:
    """What a server draws of the actions: at most ``buttons`` buttons (None: as many as are sent);
    ``default_button``: the ``default`` action is a button (and no click on the bubble reaches it);
    ``reply``: an inline reply field; ``row_px``: they must fit one row of that width."""

    buttons: int | None = None
    default_button: bool = False
    reply: bool = False
    row_px: int | None = None  # the buttons must fit one row this wide (estimated: :func:`width`)


def abilities(server: Server) -> Abilities:
    """What ``server`` can show of the actions, from its name, version and capabilities."""
    name = server.name.casefold()
    reply = REPLY in server.capabilities
    if name == "gnome-shell":
        return Abilities(buttons=3)  # (js/ui/messageTray.js: MAX_NOTIFICATION_BUTTONS, 3.x to 43 at least)
    if name == "plasma" or server.vendor.casefold() == "kde":
        return Abilities(buttons=3, reply=reply, row_px=PLASMA_ROW_PX)
    if name == "xfce notify daemon" or name.startswith("xfce4-notifyd"):
        return Abilities(default_button=True, row_px=XFCE_ROW_PX)
    return Abilities(reply=reply)


def offer_line(server: Server) -> str:
    """What pi-notifier's notifications offer on ``server``, for ``doctor``."""
    if "actions" not in server.capabilities:
        return "no buttons (it has no actions): the tray and the window answer"
    can = abilities(server)
    click = "'Go to session' is a button (a click on the bubble only dismisses it)"
    buttons = "the buttons one row holds" if can.row_px else "every button"
    buttons = f"at most {can.buttons} buttons" if can.buttons else buttons
    said = f"{click if can.default_button else 'a click goes to the session'}; {buttons}, the most useful first"
    return said + ("; free-text answers typed into the notification" if can.reply else "")


def choose(actions: Actions, server: Server, takes_text: bool = False) -> Actions:
    """The actions to send ``server`` for a notification that offers ``actions`` (the ``default``
    one: a click goes to the session), in the order to show them. ``takes_text``: its question can
    be answered with free text (``answer --text``), so a reply field is offered where there is one.
    Servers without the ``actions`` capability get none."""
    if "actions" not in server.capabilities:
        return ()
    can = abilities(server)
    offered = [*actions, *([(REPLY, REPLY_LABEL)] if takes_text and can.reply else [])]
    default = [a for a in offered if a[0] == DEFAULT][:1]
    buttons = [a for a in offered if a[0] != DEFAULT and not (a[0] == "goto" and default)]
    if can.default_button:
        buttons += default  # it is a button there: ranked with the others
    buttons.sort(key=lambda a: _RANK.get(a[0].split(":", 1)[0], len(_RANK)))  # (stable: order kept)
    chosen = _fit(_distinct(buttons, default, can.default_button), can)
    return chosen if can.default_button else (*default, *chosen)


def _distinct(
    buttons: list[tuple[str, str]], default: list[tuple[str, str]], default_button: bool
) -> list[tuple[str, str]]:
    """No label twice. An answer that reads like another action (the ``default`` one included,
    which some servers list by its label) is not offered: a click on it could mean either (the
    window and the terminal still answer it). Of the others the first is kept, except that the
    default's button (the only way to the session where it is a button) is kept over any that
    reads the same."""
    keys = Counter(_key(label) for _, label in {*buttons, *default})
    seen = {_key(label) for action, label in buttons if default_button and action == DEFAULT}
    chosen: list[tuple[str, str]] = []
    for action, label in buttons:
        key = _key(label)
        if action.startswith(ANSWER_PREFIX) and keys[key] > 1:
            continue
        if key in seen and not (default_button and action == DEFAULT):
            continue
        seen.add(key)
        chosen.append((action, label))
    return chosen


def _fit(chosen: list[tuple[str, str]], can: Abilities) -> Actions:
    """As many of the buttons as the server shows (and as fit its one row). Where the session's
    default is a button (its one way to the session) it stays: the least useful after it go
    first, then the answers, all of them (the window and the terminal still answer)."""
    chosen = chosen[: can.buttons]
    if can.row_px is not None:
        if can.default_button:  # (ranked: the answers, the default, then the others)
            answers = [a for a in chosen if a[0].startswith(ANSWER_PREFIX)]
            after = len(chosen) - 1 - next((i for i, a in enumerate(chosen) if a[0] == DEFAULT), len(chosen) - 1)
            tries = [chosen[: len(chosen) - n] for n in range(after + 1)] + [[a for a in chosen if a not in answers]]
            chosen = next((t for t in tries if sum(width(label) for _, label in t) <= can.row_px), tries[-1])
        rows = accumulate(width(label) for _, label in chosen)
        # (the first always: alone it cannot wrap)
        chosen = chosen[: next((n for n, row in enumerate(rows) if n and row > can.row_px), len(chosen))]
    return tuple(chosen)


def _key(label: str) -> str:
    return " ".join(label.casefold().split())


def width(label: str) -> int:
    """A button's width in pixels, estimated for a 10 pt sans font: capitals and wide letters 10,
    others 7, and 24 of padding and spacing (Plasma 5.27 here: "Show", "Snooze 15 min",
    "Answer…" took about 250)."""
    return 24 + sum(10 if c.isupper() or c in "mwMW@%" else 7 for c in label)


# ---- the notice's text ----

OPTIONS_SHOWN = 6
TEXT_LIMIT = 300
OPTION_ACTIONS = 3  # a question with at most this many options offers each as a button
ANSWER_PREFIX = "answer:"  # action "answer:2": the question's option 2 (from 1)
SOUND_NEEDS_ANSWER = "message-new-instant"  # the freedesktop sound theme's name for it


@dataclass(frozen=True)
class Message:
    title: str
    body: str
    critical: bool = False
    sticky: bool = False  # needs an answer: stays on screen until answered (notifications.expire)
    # Where the server supports actions: "default" is a click on the bubble (a question's goes to
    # its session; these, a summary's, open the window).
    # What a server is sent of them, in which order, is chosen for it (:func:`choose`).
    actions: Actions = (("default", "Show"), ("snooze", "Snooze 15 min"))
    takes_text: bool = False  # its question can be answered with free text (a reply field, where offered)
    silent: bool = False  # a change to a bubble on screen: no sound (``suppress-sound``)


def who(ref: SessionRef) -> str:
    """Names a session in a title: its project folder and its name, after the remote's
    ("devbox · webshop · billing refactor"; "webshop" when it has no name)."""
    text = " · ".join(dict.fromkeys(n for n in (clean(last_folder(ref.cwd), 60), clean(ref.name, 80)) if n)) or "pi"
    return f"{clean(ref.host, 64)} · {text}" if ref.host else text


def option_actions(q: Question, show_text: bool) -> Actions:
    """Each option of a question as a button, where that answer can be given from here (by the
    question's shape, whatever its tool: :attr:`Question.answerable`): never for
    an extension dialog (a permission gate is answered in the window, after its whole command was
    shown), a form of several questions, a multi-select, or with the text hidden (privacy)."""
    if not show_text or not q.answerable or len(q.items) != 1:
        return ()
    item = q.items[0]
    if item.multi or not item.options or len(item.options) > OPTION_ACTIONS:
        return ()
    return tuple((f"{ANSWER_PREFIX}{n}", clean(o.label, 40) or str(n)) for n, o in enumerate(item.options, 1))


def takes_text(q: Question, show_text: bool) -> bool:
    """The question can be answered with free text from here, as ``answer --text`` does: by its
    shape, whatever its tool (one question, one pick, with a free-text row); never an extension
    dialog (a permission gate), nor with the text hidden (privacy)."""
    return show_text and q.answerable_by_text


def session_actions(options: Actions = ()) -> Actions:
    """A notification about one session: a click goes to it (labelled for servers that draw it
    as a button); buttons: its question's ``options``, show the window, snooze."""
    return (("default", "Go to session"), *options, ("show", "Show"), ("snooze", "Snooze 15 min"))


TURNS = {  # a turn's notices, nothing to answer: (the title after the session's name, the body)
    "idle": ("finished its turn", "pi is waiting for your next instruction"),
    "failed": ("stopped with an error", "The run ended with an error"),
}


def render(notice: Notice, show_text: bool, markup_ok: bool) -> Message:
    """Title and body for a notice. Titles are never markup (some servers render it anyway)."""
    if notice.kind in ("burst", "startup"):
        return _several(notice, show_text, markup_ok)
    item = notice.items[0]
    if notice.kind in TURNS:
        what, body = TURNS[notice.kind]
        return Message(markup(f"{who(item.ref)} {what}", entities=False), body, actions=session_actions())
    q = item.question
    lines = []
    if notice.kind == "reminder" or notice.waited_s >= 60:  # reminders, and questions first seen late
        lines.append(f"Waiting for {duration(notice.waited_s)}")
    lines += _question_lines(q, markup_ok) if show_text else ["pi is waiting for your answer"]
    if q.count > 1:
        lines.append(f"+{q.count - 1} more question{'s' if q.count > 2 else ''}")
    return Message(
        markup(f"{who(item.ref)} needs an answer", entities=False),
        "\n".join(lines),
        notice.critical,
        sticky=True,
        actions=session_actions(option_actions(q, show_text)),
        takes_text=takes_text(q, show_text),
    )


def _several(notice: Notice, show_text: bool, markup_ok: bool) -> Message:
    """A burst, or what start-up found: one notification for several questions."""
    items = notice.items
    sessions = len({i.ref.key for i in items})
    title = f"{sessions} pi sessions need answers" if sessions > 1 else f"{who(items[0].ref)}: {len(items)} questions"
    lines = []
    for item in items[:5]:
        proj = markup(item.project, entities=markup_ok)
        lines.append(f"{proj} — {markup(item.question.text, 80, entities=markup_ok)}" if show_text else proj)
    if len(items) > 5:
        lines.append(f"+{len(items) - 5} more")
    # one session: a click goes to it (as for a single question); several: the window
    actions = session_actions() if sessions == 1 else Message.actions
    return Message(markup(title, 120, entities=False), "\n".join(lines), notice.critical, sticky=True, actions=actions)


def _question_lines(q: Question, markup_ok: bool) -> list[str]:
    """The question's text (after its header) and its options, where they fit."""
    text = clean(q.text, TEXT_LIMIT)
    if q.header and q.header != q.text:
        text = f"[{clean(q.header, 40)}] {text}"
    lines = [markup(text, entities=markup_ok)]
    options = [clean(o, 40) for o in q.options]
    if options and len(options) <= OPTIONS_SHOWN and sum(len(o) for o in options) <= 160:
        lines.append(markup(" · ".join(options), entities=markup_ok))
    return lines


# ---- the rest of the Notify call ----

Hints = dict[str, tuple[str, Any]]  # name → (D-Bus signature, value)


def notify_args(message: Message, server: Server, expire: str | int, sound: str) -> tuple[list[str], Hints, int]:
    """The actions (flat: key, label, key, label…), hints and expire timeout (ms; -1: the server's
    default) of ``message`` on ``server``, with ``notifications.expire`` and
    ``notifications.sound``."""
    chosen = choose(message.actions, server, message.takes_text)
    timeout = -1  # the server's default for what needs no answer
    hints: Hints = {"category": ("s", "im.received"), "desktop-entry": ("s", APP_NAME)}
    if any(action == REPLY for action, _ in chosen):
        hints.update({k: ("s", v) for k, v in REPLY_HINTS.items()})
    critical = message.critical
    if message.sticky:  # needs an answer: its own sound (notifications.sound), but not for a change
        timeout = expire_ms(expire)
        hints.update(sound_hints("none" if message.silent else sound))
        if timeout == 0:
            # stays until answered: servers that ignore expire_timeout (GNOME) keep only critical
            # notifications on screen, and 'resident' keeps it there after an action
            hints["resident"] = ("b", True)
            critical = True
    hints["urgency"] = ("y", 2 if critical else 1)
    return [x for pair in chosen for x in pair], hints, timeout


def sound_hints(sound: str) -> Hints:
    """The freedesktop sound hints for ``notifications.sound``: "default" → the sound theme's
    "message-new-instant"; "none" → silence (``suppress-sound``); a path → ``sound-file``;
    anything else → that ``sound-name``. Servers that play no sounds ignore them."""
    if sound == "none":
        return {"suppress-sound": ("b", True)}
    if sound.startswith(("/", "~")):
        return {"sound-file": ("s", os.path.expanduser(sound))}
    return {"sound-name": ("s", SOUND_NEEDS_ANSWER if sound == "default" else sound)}


def expire_ms(expire: str | int) -> int:
    """The Notify ``expire_timeout`` for a needs-answer notification: 0 = until closed."""
    return 0 if expire == "never" else int(expire) * 1000
