"""``pi-notifier snooze [WHAT] [DURATION]``, ``mute WHAT``, ``unmute WHAT``: the tray's and the
window's snoozes and mutes, from the command line. WHAT is ``all``, a project (as the window
names it) or a SESSION (as ``goto`` takes it). Sent to the running app when there is one (it
saves them); without one, saved in the state store, where the app finds them when it starts and
the headless run that notifies (``run --no-tray``: it follows the store) applies them at once."""

from __future__ import annotations

import argparse
import re
import time

from notifier.cli.parser import fail, out, sessions_of
from notifier.config import Config, ConfigError
from notifier.core.commands import Mute, Snooze, to_obj
from notifier.core.model import SessionView, Snapshot
from notifier.core.planner import not_duration, snooze_words
from notifier.core.text import clean, duration, project_name, project_names

# A word meant as a DURATION (it is none): said so, rather than taken for a project nobody has
_LIKE_DURATION = re.compile(r"[+-]?\.?\d|(forever|never|always|inf|infinity|nan)$", re.IGNORECASE)


def target(snapshot: Snapshot, what: str | None) -> tuple[str | None, str | None, str]:
    """WHAT → (session key, project, how to say it); both None: all. A project is a name the
    window shows as one (a session's name, else its folder's) or a session's folder's name; else
    WHAT is a SESSION."""
    from notifier.core.commands import label

    if what is None or what == "all":
        return None, None, "every session"
    if what in projects_of(snapshot):
        return None, what, f"project {clean(what, 80)}"
    view = _session(snapshot, what)
    return view.ref.key, None, f"session {label(view)}"


def _session(snapshot: Snapshot, what: str) -> SessionView:
    """The session WHAT names (as ``goto`` takes it); one that names none is a ConfigError, one
    that names several stays goto.Ambiguous."""
    from notifier.actions import goto

    try:
        return goto.pick(snapshot, what)[0]
    except goto.Refused as exc:  # "next" with nothing waiting
        raise ConfigError(str(exc)) from None
    except goto.Ambiguous:
        raise
    except goto.BadSession:
        if _LIKE_DURATION.match(what):
            raise ConfigError(f"{not_duration(what)}, nor a project or session") from None
        named = f"no project or session is called {clean(what, 80)!r}"
        raise ConfigError(f"{named} (pi-notifier status lists them)") from None


def projects_of(snapshot: Snapshot) -> set[str]:
    """Every name a project goes by (:attr:`notifier.core.model.Item.projects`)."""
    return {name for v in snapshot.sessions for name in project_names(v.ref.name, v.ref.cwd, v.ref.host)}


def deliver(config: Config, command: Snooze | Mute) -> str:
    """To the running app, else into the state store (where a headless run that notifies finds
    it at once). How it went, in a few words."""
    from notifier.control import request

    reply = request(to_obj(command))
    if reply is not None:
        why = clean(reply.get("error"), 200)
        if reply.get("sent"):  # (it may yet be applied: never "not done")
            raise RuntimeError(f"sent to the running app, which did not confirm it ({why}); it applies it once it"
                               " answers again: pi-notifier status says whether it did")
        if not reply.get("ok"):
            raise RuntimeError(f"the running app refused it: {why}")
        return ""
    from notifier.app import save_silence

    try:
        save_silence(command)
    except OSError as exc:
        raise RuntimeError(f"not saved (no app runs to take it): {clean(exc, 300)}; start pi-notifier, or"
                           " make its state folder writable") from None
    return _notifier_said(config)


def _notifier_said(config: Config) -> str:
    """Who applies a choice saved in the store now: the headless run that notifies the folders
    of ``config``, if one does, else the app when it starts."""
    from notifier.instance import Notifying
    from notifier.system import paths

    try:
        pid = Notifying(paths.runtime_dir(), config["sessions_dirs"]).headless()
    except OSError:  # (no runtime folder of ours: nothing runs from one)
        pid = None
    if pid is None:
        return " (saved: pi-notifier is not running; it applies when it starts)"
    return f" (saved; the headless run notifying (pid {pid or '?'}) applies it now)"


def cmd_snooze(args: argparse.Namespace, config: Config) -> int:
    """snooze [WHAT] [DURATION], mute WHAT, unmute WHAT|all: what was done printed; 0 done, 1 not
    delivered, 2 bad usage (a bad DURATION, a WHAT that names several sessions; one that names
    nothing is a ConfigError, said by main)."""
    try:
        if args.command == "snooze":
            what, seconds = snooze_words(list(args.words), time.time())
            said = _snooze(config, what, seconds, time.time())
        else:
            said = _mute(config, args.what, args.command == "mute")
    except ValueError as exc:  # (goto.Ambiguous is one)
        return fail(2, exc)
    except (RuntimeError, OSError) as exc:
        return fail(1, exc)
    out(said, "\n")
    return 0


def _snooze(config: Config, what: str | None, seconds: float, now: float) -> str:
    """Snooze WHAT for ``seconds`` (0: resume)."""
    session, project, said = target(sessions_of(config, what)[1], what)
    note = deliver(config, Snooze(now + seconds if seconds > 0 else 0.0, session, project))
    if seconds <= 0:
        return f"{'resumed every session' if what in (None, 'all') else 'resumed ' + said}{note}"
    ends = time.localtime(now + seconds)
    until = time.strftime("%H:%M" if ends[:3] == time.localtime(now)[:3] else "%a %d %b %H:%M", ends)
    return f"snoozed {said} for {length(seconds)} (until {until}){note}"


def length(seconds: float) -> str:
    """How long a snooze lasts: as ``duration`` says it (which rounds down, as an age may) but
    with the seconds under an hour and the hours and minutes past a day: "1 min 30 s",
    "1 d 5 h 21 min" (to the minute from an hour up)."""
    s = round(seconds)
    if 60 <= s < 3600 and s % 60:
        return f"{duration(s)} {s % 60} s"
    if s > 86400 and s % 86400:
        return f"{duration(s)} {duration(s % 86400)}"
    return duration(s)


def _mute(config: Config, what: str, on: bool) -> str:
    from notifier.store import saved_silences
    from notifier.system import paths

    muted = saved_silences(paths.state_dir(), time.time()).muted
    if what == "all":
        if on:
            raise ConfigError("mute takes a project or a session (to hold back everything for a while: snooze)")
        notes = [deliver(config, Mute(project, False)) for project in sorted(muted)]
        names = ", ".join(clean(p, 80) for p in sorted(muted)) or "nothing (no project was muted)"
        return f"unmuted {names}{notes[-1] if notes else ''}"
    project = what
    snapshot = sessions_of(config, what)[1] if what not in muted else None
    if snapshot is not None and what not in projects_of(snapshot):
        ref = _session(snapshot, what).ref  # a session's project: what the window's Mute project mutes
        project = project_name(ref.name, ref.cwd, ref.host)
    if not on and project not in muted:
        return f"project {clean(project, 80)} is not muted"
    return f"{'muted' if on else 'unmuted'} project {clean(project, 80)}{deliver(config, Mute(project, on))}"
