"""The configuration's keys: each with its default, its documentation, its check
(:mod:`.checks`) and its documented range (docs/configuration.md lists them all)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from notifier.config import checks as c

# difflib is imported where a misspelt key needs it: status loads this module (1 ms).


@dataclass(frozen=True, slots=True)
class Key:
    """One configuration key: its name, default, documentation, check and documented range."""

    name: str
    default: Any
    doc: str
    check: Callable[[Any], Any]
    allowed: str  # the documented range (docs/configuration.md, error messages)


SCHEMA: tuple[Key, ...] = (
    Key("sessions_dirs", [], "pi session folders to watch; empty = pi's own default",
        c.folders, f"up to {c.MAX_LIST} absolute paths (or ~/…)"),
    Key("question_tools", [], "extra tool names (or glob patterns: 'mcp__*__ask*') to treat as questions",
        c.tool_names,
        f"up to {c.MAX_LIST} names or glob patterns: letters, digits, `_ . : / @ + - * ? [ ] !`, 1–128 characters"),
    Key("ignore_tools", [], "question tool names (or glob patterns) never to treat as questions",
        c.tool_names, f"up to {c.MAX_LIST} names, as `question_tools`"),
    Key("liveness", "auto", "'auto': a question whose pi is no longer running is 'abandoned'; 'off'",
        c.choice("auto", "off"), '`"auto"`, `"off"`'),
    Key("settle_ms", 250, "a question answered within this many ms raises no notification",
        c.whole(0, 60000), "whole number 0–60000"),
    Key("remind_after", [10, 30], "minutes after which a still-pending question is notified again",
        c.minutes,
        f"up to {c.REMIND_COUNT} numbers, each {c.REMIND_MIN:g}–{c.REMIND_MAX} (a week); `[]` = no reminders"),
    Key("notify_on", ["needs_input"], "also notify when a turn finishes ('idle') or fails ('failed')",
        c.notify_on, '`"needs_input"`, `"idle"`, `"failed"`'),
    Key("quiet_hours", "", "daily window without notifications, e.g. '22:00-07:00' (the icon still changes)",
        c.quiet, '`"HH:MM-HH:MM"` (start ≠ end) or `""`'),
    Key("notifications.backend", "auto", "'auto', 'dbus', 'plyer', 'powershell' or 'none'",
        c.choice("auto", "dbus", "plyer", "powershell", "none"),
        '`"auto"`, `"dbus"`, `"plyer"`, `"powershell"`, `"none"`'),
    Key("notifications.show_text", True, "false hides the question text in notifications (privacy)",
        c.boolean, "`true`, `false`"),
    Key("notifications.expire", "never",
        "'never': a question's notification stays until answered; or seconds before it closes",
        c.expire, f'`"never"` or a whole number 1–{c.EXPIRE_MAX_S}'),
    Key("notifications.skip_when_focused", True,
        "no notification for a session whose terminal (and tmux pane) you are looking at; reminders still come",
        c.boolean, "`true`, `false`"),
    Key("notifications.sound", "default",
        "the sound of a notification that needs an answer: 'default' (the sound theme's "
        "message-new-instant), 'none', a sound name of the theme, or a sound file (the server plays it)",
        c.sound,
        '`"default"`, `"none"`, a sound name (letters, digits, `-` `_` `.`, up to 64) or an absolute path'),
    Key("tray.backend", "auto", "'auto', 'gtk', 'appindicator', 'xorg' or 'none'",
        c.choice("auto", "gtk", "appindicator", "xorg", "none"),
        '`"auto"`, `"gtk"`, `"appindicator"`, `"xorg"`, `"none"`'),
    Key("history.retention_days", 90, "days of question history to keep",
        c.whole(1, 3650), "whole number 1–3650"),
    Key("remotes", [], "other machines whose pi sessions join the board ([[remotes]] tables)", c.remotes,
        f"up to {c.MAX_REMOTES} tables: `name` + `ssh` (destination) or `command` (list); `ssh_options` (list)"),
    Key("push.urls", [], "apprise URLs a still-unanswered question is pushed to (phone, chat)", c.push_urls,
        "up to 16 URLs such as `\"ntfy://my-topic\"`"),
    Key("push.after", 5.0, "minutes a question waits unanswered before it is pushed (0 = at once)",
        c.push_after, f"a number 0–{c.REMIND_MAX}"),
    Key("push.when", "always", "'always', or 'away': only while the desktop is idle or locked",
        c.choice("always", "away"), '`"always"`, `"away"`'),
)
KEYS = {k.name: k for k in SCHEMA}


def suggest(key: str, known: Iterable[str]) -> str | None:
    """The known key a misspelled ``key`` most likely means ("quiet_hour" → "quiet_hours",
    "show_txt" → "notifications.show_text", "notification.sound" → "notifications.sound"), or
    None when none is close."""
    import difflib

    known = list(known)
    last = key.rsplit(".", 1)[-1]
    same_name = [k for k in known if k.rsplit(".", 1)[-1] == last]
    if same_name:
        return same_name[0]
    close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
    if close:
        return close[0]
    by_name = {k.rsplit(".", 1)[-1]: k for k in known}
    close = difflib.get_close_matches(last, list(by_name), n=1, cutoff=0.75)
    return by_name[close[0]] if close else None
