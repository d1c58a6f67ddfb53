"""Sharing a cold start-up read between forked workers: the result is the one a single process
gets, whatever the number of workers, and a worker that fails or dies only costs time."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from notifier.engine.scan_workers import MIN_FILES, share_out, shares, workers_for

from ..conftest import FIXTURES

PARENT = os.getpid()
CAPTURES = sorted(p for p in FIXTURES.rglob("*.jsonl") if "timeline" not in p.name) if FIXTURES else []
linux_only = pytest.mark.skipif(not hasattr(os, "fork") or os.name != "posix", reason="fork")


def _read(item: str) -> tuple[str, int, bool]:
    return item, len(item), os.getpid() != PARENT


def _run(items: list[str], read: object, workers: int) -> tuple[dict[str, object], list[str]]:
    """What reached ``take`` (item → value) and what was left to the caller, in order."""
    taken: dict[str, object] = {}
    here: list[str] = []

    def take(item: str, value: object) -> None:
        assert item not in taken and item not in here
        taken[item] = value

    def mine(item: str) -> None:
        assert item not in taken and item not in here
        here.append(item)

    share_out(items, read, take, mine, workers)  # type: ignore[arg-type]
    return taken, here


@linux_only
@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_every_item_is_handled_once_whatever_the_number_of_workers(workers: int) -> None:
    items = [f"item-{i}-" * (i % 7) + str(i) for i in range(101)]
    taken, here = _run(items, _read, workers)
    parts = shares(len(items), workers)
    assert here == [items[i] for i in parts[0]]  # the caller's share, done first
    assert taken == {items[i]: (items[i], len(items[i]), True) for part in parts[1:] for i in part}


@pytest.mark.parametrize("workers", [1, 2, 3, 8])
def test_shares_cover_every_item_once_the_caller_taking_a_little_less(workers: int) -> None:
    parts = shares(1000, workers)
    assert sorted(i for part in parts for i in part) == list(range(1000))
    assert len(parts) == workers
    if workers > 1:
        assert len(parts[0]) < min(len(p) for p in parts[1:])
        assert max(len(p) for p in parts[1:]) - min(len(p) for p in parts[1:]) <= 1


def _fails_in_one_worker(item: str) -> tuple[str, int]:
    if item == "boom" and os.getpid() != PARENT:
        raise RuntimeError("a bug meeting odd data")
    return item, len(item)


def _dies_in_one_worker(item: str) -> tuple[str, int]:
    if item == "boom" and os.getpid() != PARENT:
        os._exit(3)
    return item, len(item)


def _sends_what_cannot_travel(item: str) -> object:
    return object() if item == "boom" and os.getpid() != PARENT else item


@linux_only
@pytest.mark.parametrize("read", [_fails_in_one_worker, _dies_in_one_worker, _sends_what_cannot_travel])
def test_a_worker_that_fails_leaves_only_its_share_to_the_caller(read: object) -> None:
    items = [str(i) for i in range(30)]
    parts = shares(len(items), 3)
    items[parts[1][1]] = "boom"  # in the share of the first worker
    taken, here = _run(items, read, 3)
    assert here == [items[i] for i in parts[0]] + [items[i] for i in parts[1]]
    assert sorted(taken) == sorted(items[i] for i in parts[2])  # the other worker did its share


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


@linux_only
@pytest.mark.parametrize("read", [_fails_in_one_worker, _dies_in_one_worker, _sends_what_cannot_travel])
def test_what_a_failing_worker_sent_before_is_taken_the_rest_read_by_the_caller(read: object) -> None:
    """A worker sends FRAME items at a time; when it fails, the frames it sent are taken and
    only the rest of its share is left to the caller."""
    from notifier.engine.scan_workers import FRAME

    items = [str(i) for i in range(6 * FRAME)]
    parts = shares(len(items), 2)
    items[parts[1][FRAME + 5]] = "boom"  # in the worker's second frame
    taken, here = _run(items, read, 2)
    assert here == [items[i] for i in parts[0]] + [items[i] for i in parts[1][FRAME:]]
    assert sorted(taken) == sorted(items[i] for i in parts[1][:FRAME])
