"""The start-up read (from the end, only as far as needed) against a full read of the same file
through the normal reducer: both must give the same session state."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from notifier import tail
from notifier.core.board import Board
from notifier.core.reducer import SessionReducer
from notifier.core.text import clean
from notifier.pi.parse import QuestionCatalog
from notifier.sessions import BoardReader, EngineOptions
from notifier.tail import Tailer, name_before

NOW = 1_900_000_000.0


def files(tools: tuple[str, ...] = ()) -> BoardReader:
    """The engine's session files (what ``Engine.reader`` is), on their own."""
    options = EngineOptions(["/nonexistent"], QuestionCatalog(list(tools)), liveness=False)
    return BoardReader(options, Board(liveness=False), wall=lambda: NOW)


def full_read(path: Path, tools: tuple[str, ...] = ()) -> SessionReducer:
    """Every line of the file, in order, through the normal reducer (what `BoardReader.read` does live)."""
    e = files(tools)
    reducer = SessionReducer()
    data = path.read_bytes()
    lines = data.split(b"\n")[:-1]  # an unfinished last line is not read yet
    for event in [x for line in lines for x in e.line_events(str(path), line, NOW)]:
        reducer.apply(event)
    return reducer


def startup_read(
    path: Path, tools: tuple[str, ...] = (), first: int | None = None, cap: int | None = None
) -> tuple[SessionReducer, Tailer]:
    """What the engine's start-up read gives (``first``, ``cap``: its windows, if not its own)."""
    e = files(tools)
    tailer = Tailer(str(path))
    if first is None and cap is None:
        found = e.load(tailer)
        assert found is not None
        reducer = found
    else:
        fd = os.open(path, os.O_RDONLY)
        try:
            reducer = tail.startup_read(
                fd, os.fstat(fd), tailer, tailer.max_line, lambda line: e.line_events(str(path), line, NOW),
                first=first or tail.FIRST_WINDOW, cap=tail.CAP if cap is None else cap,
            )  # fmt: skip
        finally:
            os.close(fd)
    if reducer.name is None and not tailer.name_checked and tailer.window_start > 0:  # as for askers
        with path.open("rb") as fh:
            name = name_before(fh.fileno(), tailer.window_start)
        if name:
            reducer.name = clean(name, 200) or None
    return reducer, tailer


def state(r: SessionReducer) -> dict[str, Any]:
    return {
        "sid": r.session_id,
        "cwd": r.cwd,
        "name": r.name,
        "state": r.state,
        "base": r.base,
        "pending": list(r.pending.items()),
        "running": list(r.running.items()),
        "tool": r.current_tool,
        "updated_at": r.updated_at,
        "header": r.has_header,
    }


def assert_same(path: Path, tools: tuple[str, ...] = (), first: int | None = None, cap: int | None = None) -> Tailer:
    fast, tailer = startup_read(path, tools, first, cap)
    assert state(fast) == state(full_read(path, tools))
    size = path.stat().st_size
    data = path.read_bytes()
    assert tailer.offset == size and tailer.partial == data[data.rfind(b"\n") + 1 :]
    return tailer


def jline(obj: dict[str, Any]) -> bytes:
    return (json.dumps(obj, separators=(",", ":")) + "\n").encode()
