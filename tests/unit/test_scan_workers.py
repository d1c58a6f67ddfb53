"""Sharing a cold start-up read between forked workers: the result is the one a single process
gets, whatever the number of workers, and a worker that fails or dies only costs time."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from notifier.engine import scan_workers
from notifier.engine.scan_workers import _HEAD, FRAME, MIN_FILES, TOKEN_SIZE, chunks, share_out, workers_for

from ..conftest import FIXTURES

PARENT = os.getpid()
CAPTURES = sorted(p for p in FIXTURES.rglob("*.jsonl") if "timeline" not in p.name) if FIXTURES else []
linux_only = pytest.mark.skipif(not hasattr(os, "fork") or os.name != "posix", reason="fork")
PATIENCE = 60.0  # seconds a test waits for another process before it fails (never reached when all is well)


def _read(item: str) -> tuple[str, int, bool]:
    return item, len(item), os.getpid() != PARENT


def _run(
    items: Sequence[str],
    read: Callable[[str], object],
    workers: int,
    then: Callable[[list[str]], None] | None = None,
) -> tuple[dict[str, object], list[str]]:
    """What reached ``take`` (item → value) and what was left to the caller, in order; every
    item is handled exactly once. ``then(here so far)``: after each item the caller handles."""
    taken: dict[str, object] = {}
    here: list[str] = []
    handled: set[str] = set()

    def take(item: str, value: object) -> None:
        assert item not in handled
        handled.add(item)
        taken[item] = value

    def mine(item: str) -> None:
        assert item not in handled
        handled.add(item)
        here.append(item)
        if then is not None:
            then(here)

    share_out(items, read, take, mine, workers)
    assert len(handled) == len(items) and handled == set(items)
    return taken, here


def _wait_readable(fd: int, what: str) -> None:
    ready, _, _ = select.select([fd], [], [], PATIENCE)
    assert ready, f"no {what} after {PATIENCE} s"


def _names(n: int) -> list[str]:
    return [f"item-{i}-" * (i % 7) + str(i) for i in range(n)]


@linux_only
@pytest.mark.parametrize("workers", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 101, 1000])
def test_every_item_is_handled_once_whatever_the_number_of_workers_and_items(workers: int, n: int) -> None:
    items = _names(n)
    taken, here = _run(items, _read, workers)
    assert all(taken[item] == (item, len(item), True) for item in taken)  # (read by a worker)
    if workers == 1:
        assert here == items and not taken  # (no fork at all)


def test_chunks_cover_the_items_in_order_smaller_at_the_end_bigger_when_many() -> None:
    bounds = chunks(5000, 2, 32768)
    sizes = [b - a for a, b in zip(bounds, bounds[1:], strict=False)]
    assert bounds[0] == 0 and bounds[-1] == 5000 and min(sizes) >= 1
    assert sizes[0] == FRAME and max(sizes) == FRAME and sizes[-1] <= FRAME // 8  # (the last ones short)
    assert sizes == sorted(sizes, reverse=True)
    for n, processes, most in [
        (10_000_000, 8, 32768),
        (100_000, 2, 2048),
        (5000, 2, 16),
        (5000, 3, 1),
        (7, 8, 1),
    ]:
        bounds = chunks(n, processes, most)
        assert bounds[0] == 0 and bounds[-1] == n and len(bounds) - 1 <= most
        assert all(a < b for a, b in zip(bounds, bounds[1:], strict=False))
    assert chunks(0, 2, 100) == [0]
    assert chunks(3, 2, 100) == [0, 3]  # (one chunk: fewer items than the smallest chunk)


@linux_only
def test_so_many_items_that_chunks_grow_are_handled_once_each() -> None:
    items = [str(i) for i in range(scan_workers._MOST_CHUNKS * FRAME * 2)]
    bounds = chunks(len(items), 3, scan_workers._MOST_CHUNKS)
    assert bounds[1] > FRAME  # (their numbers would not fit in one page otherwise)
    taken, here = _run(items, _read, 3)
    assert all(taken[item] == (item, len(item), True) for item in taken)


@linux_only
def test_chunk_numbers_that_do_not_fit_in_the_pipe_are_read_by_the_caller(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import fcntl

    r, w = os.pipe()
    room = fcntl.fcntl(w, fcntl.F_GETPIPE_SZ) // TOKEN_SIZE  # (what the module's pipe will hold too)
    os.close(r)
    os.close(w)
    one_each = lambda n, processes, most: list(range(n + 1))  # noqa: E731
    monkeypatch.setattr(scan_workers, "chunks", one_each)
    items = _names(room + 1000)
    taken, here = _run(items, _read, 2)
    assert set(items[room:]) <= set(here)  # (claimed by nobody, read by the caller in the end)


def _failing(mode: str, signal_fd: int, after: int = FRAME + 6) -> Callable[[str], object]:
    """A ``read`` that fails the way ``mode`` says in each worker, at the ``after``-th item that
    worker reads (in its second chunk), having first written that item down ``signal_fd``."""
    count = [0]  # (each worker has its own, copied by the fork)

    def read(item: str) -> object:
        count[0] += 1
        if count[0] != after or os.getpid() == PARENT:
            return _read(item)
        os.write(signal_fd, item.encode() + b"\n")
        frame = scan_workers._frame
        if mode == "raises":
            raise RuntimeError("a bug meeting odd data")
        if mode == "exits":
            os._exit(3)
        if mode == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "cannot travel":
            return object()
        if mode == "garbage":
            scan_workers._frame = lambda chunk, values: (
                frame(chunk, values)[:_HEAD] + b"\xff" * (len(frame(chunk, values)) - _HEAD)
            )
        if mode == "too few values":
            scan_workers._frame = lambda chunk, values: frame(chunk, values[:-1])
        if mode == "no such chunk":
            scan_workers._frame = lambda chunk, values: frame(chunk + 60000, values)
        if mode == "a chunk twice":
            scan_workers._frame = lambda chunk, values: frame(chunk, values) * 2
        if mode == "nothing sent":  # (it claims chunk after chunk and sends none of them)
            scan_workers._frame = lambda chunk, values: b""
        if mode == "half a frame":  # (then it leaves, as if all was well)
            scan_workers._frame = lambda chunk, values: frame(chunk, values)[:-3]
            scan_workers._claim = lambda queue, count: os._exit(0)
        return _read(item)

    return read


FAILURES = [
    "raises",
    "exits",
    "killed",
    "cannot travel",
    "garbage",
    "too few values",
    "no such chunk",
    "a chunk twice",
    "nothing sent",
    "half a frame",
    "too much",
]


@linux_only
@pytest.mark.parametrize("workers", [2, 3])
@pytest.mark.parametrize("mode", FAILURES)
def test_a_worker_that_fails_costs_only_time(
    mode: str, workers: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each worker fails in its second chunk while the caller waits on its first item (so the
    workers get chunks to fail in): what a worker sent whole before is taken, the rest is read
    by the caller, every item exactly once."""
    if mode == "too much":
        monkeypatch.setattr(scan_workers, "_RESULT_LIMIT", 1000)  # (less than FRAME items' worth)
    signal_r, signal_w = os.pipe()
    items = _names(3000)
    try:

        def first_wait_for_a_failure(here: list[str]) -> None:
            if len(here) == 1:
                _wait_readable(signal_r, "worker reaching its failure")

        taken, here = _run(items, _failing(mode, signal_w), workers, first_wait_for_a_failure)
        os.close(signal_w)
        signal_w = -1
        failed_at = os.read(signal_r, 1 << 16).decode().split()
    finally:
        os.close(signal_r)
        if signal_w >= 0:
            os.close(signal_w)
    assert failed_at and all(taken[item] == (item, len(item), True) for item in taken)
    if mode == "too much":  # (refused at its first chunk)
        assert not taken
    elif mode == "a chunk twice":  # (taken once: its second copy was refused)
        assert all(item in taken for item in failed_at) and len(taken) >= FRAME
    else:  # (what it sent before, taken; the chunk it failed in, read by the caller)
        assert all(item in here for item in failed_at) and len(taken) >= FRAME


@linux_only
def test_a_slow_worker_leaves_more_of_the_work_to_the_caller() -> None:
    """The worker stops on its first item until the caller has done most of the items: the
    caller, finding chunk after chunk unclaimed, reads them all but the worker's."""
    items = _names(1000)
    most = len(items) - 3 * FRAME
    started_r, started_w = os.pipe()
    go_r, go_w = os.pipe()

    went = [False]  # (in the worker: its copy)

    def read(item: str) -> object:
        if os.getpid() != PARENT and not went[0]:
            went[0] = True
            os.write(started_w, b"s")
            _wait_readable(go_r, "go from the caller")
        return _read(item)

    def caller(here: list[str]) -> None:
        if len(here) == 1:
            _wait_readable(started_r, "worker starting")  # (it holds a chunk now, and waits)
        if len(here) == most:
            os.write(go_w, b"g")

    try:
        taken, here = _run(items, read, 2, caller)
    finally:
        for fd in (started_r, started_w, go_r, go_w):
            os.close(fd)
    assert len(here) >= most and 1 <= len(taken) <= len(items) - most  # (a static half each: 500)


@linux_only
def test_a_caller_that_fails_leaves_no_worker_behind(monkeypatch: pytest.MonkeyPatch) -> None:
    pids: list[int] = []
    spawn = scan_workers.spawn

    def spawn_and_note(send: Callable[[Callable[[bytes], None]], None]) -> tuple[int, int] | None:
        spawned = spawn(send)
        if spawned is not None:
            pids.append(spawned[0])
        return spawned

    monkeypatch.setattr(scan_workers, "spawn", spawn_and_note)

    def fail(*args: object) -> None:
        raise RuntimeError("the caller fails")

    with pytest.raises(RuntimeError, match="the caller fails"):  # (reading or taking: whichever is first)
        share_out(_names(1000), _read, fail, fail, 3)
    assert len(pids) == 2
    for pid in pids:  # (killed and reaped: no such process left)
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)


def test_no_fork_for_few_files_or_beside_another_thread() -> None:
    assert workers_for(MIN_FILES - 1) == 1
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, daemon=True)
    other.start()
    try:
        assert workers_for(100_000) == 1  # a fork would copy only this thread, not its locks
    finally:
        stop.set()
        other.join()


SEVERAL_CORES = hasattr(os, "sched_getaffinity") and len(os.sched_getaffinity(0)) >= 2

# Run in a fresh process: the test process has other threads, beside which no fork is made.
COMPARE = """
import json, sys, time
from notifier.core.board import Board
from notifier.engine.files import SessionFiles
from notifier.engine.options import EngineOptions
from notifier.engine.scan_workers import workers_for
from notifier.sinks.jsonout import status_obj

def scan(root, shared):
    files = SessionFiles(EngineOptions([root], liveness=False), Board(liveness=False), time.time)
    files.scan(root, initial=True, shared=shared)
    files.fill_names()
    tailers = {p: repr((t.state(), t.ident, t.window_start, t.name_checked)) for p, t in files.tailers.items()}
    return status_obj(files.board.snapshot(0.0)), tailers

root = sys.argv[1]
workers = workers_for(int(sys.argv[2]))
alone, shared = scan(root, False), scan(root, True)
named = sum(1 for v in shared[0]["sessions"] if (v["name"] or "").startswith("the session "))
print(json.dumps({"workers": workers, "same": alone == shared, "files": len(alone[1]), "named": named}))
"""


@pytest.mark.skipif(not SEVERAL_CORES, reason="one core")
def test_many_files_on_several_cores_are_shared() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "from notifier.engine.scan_workers import workers_for; print(workers_for(99999))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert int(out.stdout) >= 2


def _tree(root: Path, count: int) -> None:
    """``count`` session files: the real captures, and every prefix of them (unfinished last
    lines included), in folders of a few levels."""
    n = 0
    while n < count:
        for capture in CAPTURES:
            data = capture.read_bytes()
            cut = (n * 7919) % (len(data) + 1) if n >= len(CAPTURES) else len(data)
            folder = root / f"--project{n % 13}--" / ("deep" * (n % 3))
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{n:05d}_{capture.stem}.jsonl").write_bytes(data[:cut])
            n += 1
            if n == count:
                break
    for k in range(20):  # asking sessions whose name was set long before the part read at start-up
        lines = [
            {"type": "session", "version": 3, "id": f"named-{k}", "cwd": f"/work/named{k}"},
            {"type": "session_info", "id": "i", "name": f"the session {k}"},
            *[{"type": "label", "id": f"l{j}", "label": "x" * 200} for j in range(400)],
            {
                "type": "message",
                "id": "q",
                "timestamp": "2026-01-01T00:00:05.000Z",
                "message": {
                    "role": "assistant",
                    "stopReason": "toolUse",
                    "content": [{"type": "toolCall", "id": f"q{k}", "name": "question", "arguments": {"question": "?"}}],
                },
            },
        ]
        (root / f"--named{k}--.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


@linux_only
@pytest.mark.skipif(not SEVERAL_CORES, reason="one core")
def test_a_shared_scan_equals_a_scan_in_one_process(tmp_path: Path) -> None:
    if not CAPTURES:
        pytest.fail("the real pi captures (tests/data/pi-sessions) are missing")
    count = MIN_FILES * 2
    _tree(tmp_path, count)
    (tmp_path / "--project0--" / "not-utf8-\udcff.jsonl").write_bytes(b'{"type":"session","id":"x"}\n\xff\n')
    os.mkfifo(tmp_path / "--project1--" / "fifo.jsonl")
    out = subprocess.run(
        [sys.executable, "-c", COMPARE, str(tmp_path), str(count)], capture_output=True, text=True, check=True
    )
    result = json.loads(out.stdout)
    assert result == {"workers": result["workers"], "same": True, "files": count + 21, "named": 20}
    assert result["workers"] >= 2  # (else the comparison proved nothing)


BESIDE = """
import json, os, sys
from notifier.engine.scan_workers import beside
mode = sys.argv[1]
pids, here = [], []
def work():
    pids.append(os.getpid())
    if mode == "fail" and os.getpid() != parent:
        raise RuntimeError("the child fails")
    return [os.getpid(), "plain"]
parent = os.getpid()
result = beside(work, lambda: here.append(os.getpid()))
print(json.dumps({"result": result, "parent": parent, "here": here, "work_here": pids}))
"""


@linux_only
@pytest.mark.parametrize("mode", ["ok", "fail"])
def test_work_beside_the_caller_runs_in_a_child_or_else_in_the_caller(mode: str) -> None:
    out = subprocess.run([sys.executable, "-c", BESIDE, mode], capture_output=True, text=True, check=True)
    r = json.loads(out.stdout)
    assert r["here"] == [r["parent"]]  # what the caller does meanwhile, it does itself
    if mode == "ok":  # done by a child, sent back
        assert r["result"][0] != r["parent"] and r["result"][1] == "plain" and r["work_here"] == []
    else:  # the child failed: the caller did the work itself
        assert r["result"] == [r["parent"], "plain"] and r["work_here"] == [r["parent"]]
