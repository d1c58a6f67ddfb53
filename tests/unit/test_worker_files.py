"""The outputs thread's files (notifier.system.supervisor.Worker.watch): a file's reader runs on the
worker's thread when that file is ready, never on the rounds that other work wakes it for (jobs,
other files), and, with ``every``, also that often when nothing comes; unwatched, never again."""

from __future__ import annotations

import os

from notifier.system.supervisor import Worker

from ..conftest import wait_for


def test_a_reader_runs_only_when_its_file_is_ready(worker: Worker) -> None:
    r, w = os.pipe()
    reads: list[bytes] = []

    def read() -> None:
        assert worker.on_thread
        reads.append(os.read(r, 100))

    try:
        worker.watch(r, read)
        for _ in range(20):  # rounds for jobs: the quiet file's reader is not called
            worker.put(lambda: None)
        assert worker.sync(5) and reads == []
        os.write(w, b"said")
        wait_for(lambda: reads == [b"said"], 5, "the reader, once the file was ready")
        worker.unwatch(r)
        os.write(w, b"again")
        assert worker.sync(5)
        worker.put(lambda: None)
        assert worker.sync(5) and reads == [b"said"]
    finally:
        os.close(r)
        os.close(w)


def test_a_file_watched_every_so_often_is_read_when_nothing_comes(worker: Worker) -> None:
    r, w = os.pipe()
    calls: list[int] = []
    try:
        worker.watch(r, lambda: calls.append(1), every=0.02)
        wait_for(lambda: len(calls) >= 3, 5, "reads on the timer alone")
        worker.unwatch(r)
        assert worker.sync(5)
        seen = len(calls)
        worker.put(lambda: None)
        assert worker.sync(5) and len(calls) == seen
    finally:
        os.close(r)
        os.close(w)
