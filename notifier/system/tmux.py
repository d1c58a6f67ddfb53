"""tmux, asked through its own command line: which pane a process runs in, the clients attached to
a server, what a pane shows.

Facts used (checked with the real pi 0.73.1 and 1.6.0 in tmux): a process in tmux has ``TMUX``
("socket,server pid,session index") and ``TMUX_PANE`` in its environment, and the pane's own
process is one of its ancestors; a pane's terminal window is the one running a tmux *client*
(``list-clients``). A stale ``TMUX_PANE`` is not believed: the server is asked.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from notifier.core.text import number
from notifier.system.processes import ancestors, look_at_terminal, run


@dataclass(frozen=True, slots=True)
class TmuxPane:
    """A tmux pane, and the session and window it is in (of the server at ``socket``)."""

    socket: str
    session: str
    window: str  # the window index, as tmux prints it
    window_id: str  # "@N"
    pane: str  # "%N"

    def obj(self) -> dict[str, Any]:
        return {"socket": self.socket, "session": self.session, "window": self.window, "pane": self.pane}


@dataclass(frozen=True, slots=True)
class TmuxClient:
    """A terminal attached to a tmux session (its tty and process), and when it was last used."""

    tty: str
    pid: int
    session: str
    activity: int


def tmux(socket: str, *args: str, input: str | None = None) -> str | None:
    """What ``tmux -S socket args…`` printed; ``None`` when it failed or could not run."""
    result = run(["tmux", "-S", socket, *args], input=input)
    if result is None or result.returncode != 0:
        return None
    return result.stdout


# The pane's lines as tmux holds them, checked by tmux itself in the instant it sends a key:
# ``#{C/r:REGEX}`` (tmux >= 3.2) is the number of the first line of the pane that matches.
_ERE_SPECIAL = re.compile(r"([.\[\]()*+?{}|^$\\])")
SHOWING_SINCE = (3, 2)
_PAD = " \t"
_SENT, _CHANGED = "pi-notifier:sent", "pi-notifier:changed"


def _format_literal(text: str) -> str:
    """``text`` as literal characters inside a tmux format (never a format, a command or a
    separator: ``#`` ``,`` and ``}`` are escaped)."""
    return text.replace("#", "##").replace(",", "#,").replace("}", "#}")


def showing(screen: Sequence[str], wanted: range) -> str:
    """A tmux format that is 1 while the pane (not in a mode) shows the lines ``wanted`` of
    ``screen`` (a capture of it, one string a line) as they were, else 0. tmux finds the first
    line of the pane that reads so: each distinct line is checked where it first appears."""
    cond = "#{==:#{pane_in_mode},0}"
    first: dict[str, int] = {}
    # (only the spaces a capture pads with are cut: a no-break space a tool draws, as an empty
    # input's cursor cell, is a character of the line, which [[:space:]] does not match)
    for n, line in enumerate(screen):
        first.setdefault(line.rstrip(_PAD), n)
    for body in dict.fromkeys(screen[n].rstrip(_PAD) for n in wanted if n < len(screen)):
        if not body.strip():
            continue
        pattern = "^" + _ERE_SPECIAL.sub(r"\\\1", body) + "[[:space:]]*$"
        cond = f"#{{&&:{cond},#{{==:#{{C/r:{_format_literal(pattern)}}},{first[body] + 1}}}}}"
    return cond


@functools.cache
def version() -> tuple[int, int] | None:
    """The tmux version (major, minor) that ``tmux -V`` names; ``None``: not known."""
    result = run(["tmux", "-V"])
    m = re.search(r"(\d+)\.(\d+)", result.stdout if result is not None else "")
    return (int(m.group(1)), int(m.group(2))) if m else None


def send_if(pane: TmuxPane, condition: str, keys: tuple[str, ...] = (), buffer: str | None = None) -> bool | None:
    """Press ``keys`` (or paste ``buffer``, loaded before) in the pane only if the tmux format
    ``condition`` is true there, checked by the server in the same step as it sends: no key
    of another client comes between. True: sent; False: the condition did not hold (nothing
    sent); None: tmux failed."""
    if buffer is not None:
        action = f"paste-buffer -d -p -r -b {buffer} -t {pane.pane}"
    else:
        action = f"send-keys -t {pane.pane} -- " + " ".join(keys)
    out = tmux(
        pane.socket, "if-shell", "-F", "-t", pane.pane, condition,
        f"{action} ; display-message -p {_SENT}", f"display-message -p {_CHANGED}",
    )  # fmt: skip
    return {_SENT: True, _CHANGED: False}.get((out or "").strip())


def load_buffer(pane: TmuxPane, text: str) -> str | None:
    """``text`` into a paste buffer of ours (read from standard input, never from tmux's command
    line): its name, or None when tmux failed."""
    buffer = f"pi-notifier-{os.getpid()}"
    return buffer if tmux(pane.socket, "load-buffer", "-b", buffer, "-", input=text) is not None else None


def unread_input(tty: str) -> int | None:
    """How many bytes typed into the terminal ``tty`` (a pane's) its program has not read yet;
    None: not known (the terminal is only looked at: :func:`look_at_terminal`)."""
    import fcntl  # (POSIX only, as tmux is)
    import struct
    import termios

    def unread(fd: int) -> int:
        return int(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0])

    return look_at_terminal(tty, unread)


def _rows(socket: str, fields: tuple[str, ...], *args: str) -> list[list[str]]:
    """tmux's rows of ``fields`` (format variables, one row a line, tab-separated) for ``args``
    (the format is the last argument); rows of another shape are left out."""
    out = tmux(socket, *args, "\t".join(f"#{{{f}}}" for f in fields))
    return [row for line in (out or "").splitlines() if len(row := line.split("\t")) == len(fields)]


_PANE = ("session_name", "window_index", "window_id", "pane_id", "pane_pid")


def tmux_pane_of(env: Mapping[str, str], pid: int) -> TmuxPane | None:
    """The tmux pane process ``pid`` (with environment ``env``) runs in, checked against the
    server: ``None`` outside tmux, or when the pane now runs something else."""
    value, pane = env.get("TMUX"), env.get("TMUX_PANE")
    if not value or not pane:
        return None
    socket = value.split(",")[0]
    rows = _rows(socket, _PANE, "display-message", "-p", "-t", pane)
    if not rows:
        return None
    session, window, window_id, pane_id, pane_pid = rows[0]
    if pane_id != pane or number(pane_pid) not in ancestors(pid):
        return None  # (a stale TMUX_PANE, or that pane now runs something else)
    return TmuxPane(socket, session, window, window_id, pane_id)


def tmux_clients(socket: str) -> list[TmuxClient]:
    """The server's clients, most recently active first."""
    fields = ("client_tty", "client_pid", "client_session", "client_activity")
    clients = [
        TmuxClient(tty, pid, session, number(activity) or 0)
        for tty, pid_text, session, activity in _rows(socket, fields, "list-clients", "-F")
        if (pid := number(pid_text)) is not None
    ]
    return sorted(clients, key=lambda c: c.activity, reverse=True)


def client_pane(client: TmuxClient, socket: str) -> str | None:
    """The id of the pane the client shows."""
    out = tmux(socket, "display-message", "-c", client.tty, "-p", "#{pane_id}")
    return out.strip() if out else None


def capture(pane: TmuxPane) -> str | None:
    """The visible text of the pane (no escapes)."""
    return tmux(pane.socket, "capture-pane", "-p", "-t", pane.pane)


def invoking_client(socket: str, env: Mapping[str, str]) -> str | None:
    """The tty of the client of the tmux server at ``socket`` that this command was run from (a
    shell in one of its panes, or a key binding's ``run-shell``: ``TMUX`` names the server), the
    one the user typed in; None when the command runs outside that server."""
    inside = env.get("TMUX", "").split(",")[0]
    if not inside or os.path.realpath(inside) != os.path.realpath(socket):
        return None
    tty = (tmux(socket, "display-message", "-p", "#{client_tty}") or "").strip()
    return tty or None
