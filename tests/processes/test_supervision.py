"""Nothing an output or a failing engine step does may make the app stop telling: failures are
injected into the real engine (real watcher, real files) and the next question must get through."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from collections.abc import Iterable
from pathlib import Path

import pytest

from notifier.app import App
from notifier.config import Config
from notifier.control import request
from notifier.core.model import Snapshot, Transition
from notifier.core.reducer import Event
from notifier.engine import Batch
from notifier.store import Store

from ..conftest import wait_for
from ..harness import Harness
from ..writer import append, ask, header, user


class Boom(BaseException):
    """Not an Exception: what an ``except Exception`` would let through and kill the thread."""


class Raising:
    """An output that fails on every call, with two kinds of Exception in turn (a bug in an
    output is an Exception; a BaseException that is not one is a request to stop, which no
    output swallows: see the next test)."""

    def __init__(self) -> None:
        self.calls = 0

    def ready(self, info: object, snapshot: Snapshot) -> None:
        raise RuntimeError("ready broke")

    def publish(self, batch: Batch) -> None:
        self.calls += 1
        raise (RuntimeError("output broke") if self.calls % 2 else LookupError("output broke harder"))


def test_a_failing_output_is_contained_logged_once_per_kind_and_the_others_go_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    bad = Raising()
    h = Harness([tmp_path], outputs=[bad])
    good = h.collected
    with h:
        for i in range(4):
            append(tmp_path / f"s{i}.jsonl", header(), user(), ask(f"q{i}", f"Question {i}?"))

            def arrived(i: int = i) -> bool:
                return len(good.of("needs_input")) > i

            wait_for(arrived, 10, f"question {i} at the good output")
        assert bad.calls >= 4 and h.engine.failed is None and h.engine.restarts == 0
        report = h.engine.health.report()["sink Raising"]
        assert report["count"] >= 5 and ("LookupError" in report["error"] or "RuntimeError" in report["error"])
    failures = [r for r in caplog.records if "Raising output failed" in r.getMessage()]
    assert len(failures) == 2  # RuntimeError once, LookupError once: not once per call
    assert {r.exc_info[0] for r in failures if r.exc_info} == {RuntimeError, LookupError}


class Stopping:
    """An output that raises SystemExit (not an Exception) once, when the first question comes."""

    def __init__(self) -> None:
        self.raised = False

    def ready(self, info: object, snapshot: Snapshot) -> None:
        pass

    def publish(self, batch: Batch) -> None:
        if batch.transitions and not self.raised:
            self.raised = True
            raise SystemExit("an output asked to stop")


def test_an_output_raising_system_exit_is_not_swallowed_but_the_supervisor_records_it(tmp_path: Path) -> None:
    """No output's catch hides a SystemExit / KeyboardInterrupt: it ends the engine's run, and
    the supervisor records it as the engine's failure, restarts it, and questions go on."""
    stopping = Stopping()
    with Harness([tmp_path], outputs=[stopping]) as h:
        append(tmp_path / "a.jsonl", header(), user(), ask("qa", "Asked as it stopped?"))
        wait_for(lambda: h.engine.restarts == 1, 15, "the engine restarted")
        report = h.engine.health.report()
        assert "SystemExit" in report["engine"]["error"] and "sink Stopping" not in report
        # (the output after it missed that transition; the snapshot after the restart has it)
        wait_for(lambda: [q.tool_call_id for _, q in h.collected.snapshot.pending] == ["qa"], 10, "qa listed")
        append(tmp_path / "b.jsonl", header(), user(), ask("qb", "And the next one?"))
        (t,) = h.wait("needs_input", 1)
        assert t.question.tool_call_id == "qb" and h.engine.failed is None


def test_an_engine_step_that_raises_a_base_exception_restarts_the_engine_and_loses_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Harness([tmp_path]) as h:
        local = h.engine.board.local
        real_apply = local.apply
        armed = {"left": 1}

        def apply(key: str, events: Iterable[Event], now: float, initial: bool = False) -> list[Transition]:
            if armed["left"] and key.endswith("a.jsonl"):
                armed["left"] -= 1
                raise Boom("injected")
            return real_apply(key, events, now, initial)

        monkeypatch.setattr(local, "apply", apply)
        append(tmp_path / "a.jsonl", header(), user(), ask("qa", "Asked while it broke?"))
        # the question of the batch that failed is read again after the restart: not lost
        (first,) = h.wait("needs_input", 1, timeout=15)
        assert first.question.tool_call_id == "qa" and h.engine.restarts == 1
        append(tmp_path / "b.jsonl", header(), user(), ask("qb", "And the next one?"))
        wait_for(
            lambda: [t.question.tool_call_id for t in h.collected.of("needs_input")] == ["qa", "qb"],
            10,
            "the next question",
        )
        report = h.engine.health.report()["engine"]
        assert report["count"] == 1 and "Boom" in report["error"] and report["recovered"]
        assert any("the engine failed" in r.getMessage() for r in caplog.records)


def test_a_file_that_keeps_breaking_the_engine_is_ignored_and_the_others_still_tell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    poison = tmp_path / "poison.jsonl"
    with Harness([tmp_path]) as h:
        engine = h.engine
        real_line_events = engine.reader.line_events

        def line_events(path: str, line: bytes, now: float) -> list[Event]:
            if path == str(poison):
                raise Boom("always")
            return real_line_events(path, line, now)

        # (every line, whether a new file is read from its end or a followed one goes on, is read here)
        monkeypatch.setattr(engine.reader, "line_events", line_events)
        append(poison, header(), user(), ask("qp", "Poison?"))
        # fails reading it, fails again reading it again from its tail, then skips past it
        wait_for(lambda: engine.restarts >= 2 and engine.failed is None, 30, "two restarts")
        append(tmp_path / "fine.jsonl", header(), user(), ask("qf", "Fine?"))
        (t,) = h.wait("needs_input", 1, timeout=15)
        assert t.question.tool_call_id == "qf"
        append(poison, ask("qp2", "Still poison?"))
        wait_for(lambda: str(poison) in engine.reader.ignored, 30, "the file to be ignored")
        append(tmp_path / "fine.jsonl", ask("qf2", "Still fine?"))
        h.wait("needs_input", 2, timeout=15)
        assert [t.question.tool_call_id for t in h.collected.of("needs_input")] == ["qf", "qf2"]


def test_the_running_app_reports_its_health_and_doctor_shows_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In-process app: an output (the history) breaks; the control channel's health answer and
    what the tray shows say so, and `doctor` (a separate process) prints it."""
    config = Config()
    config.values["sessions_dirs"] = [str(tmp_path)]
    config.values["liveness"] = "off"
    app = App(config, json_out=False, notify=False)
    bad = Raising()
    monkeypatch.setattr(Store, "publish", lambda self, batch: bad.publish(batch))
    try:
        app.start()
        app.serve()
        wait_for(lambda: app.engine is not None and app.engine.ready_event.is_set(), 20, "ready")
        append(tmp_path / "s.jsonl", header(), user(), ask("q1", "Healthy?"))
        wait_for(lambda: app.snapshot().pending_count == 1, 10, "the question")
        wait_for(lambda: bad.calls >= 1, 10, "the broken output to be called")
        reply = request({"cmd": "health"})
        assert reply and reply["ok"] and "sink Store" in reply["problems"]
        assert reply["problems"]["sink Store"]["count"] >= 1
        assert any("sink Store failed" in line for line in app.ui_state().health)
        out = subprocess.run(
            [sys.executable, "-m", "notifier", "doctor"], capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 1, out.stderr  # a [FAIL] line: doctor exits 1
        assert "[FAIL] running app: sink Store: failed" in out.stdout, out.stdout
    finally:
        app.shutdown()
    out = subprocess.run(
        [sys.executable, "-m", "notifier", "doctor"], capture_output=True, text=True, timeout=60
    )
    assert "running app: none is running" in out.stdout


def test_doctor_says_when_the_running_app_watches_another_sessions_folder(tmp_path: Path) -> None:
    """The sessions folder as a command sees it now (pi's settings.json changed since the app
    started, say) is not the one the running app watches: doctor says so (it named the new folder
    as if the app watched it), and says nothing where they agree."""
    watched, elsewhere = tmp_path / "watched", tmp_path / "elsewhere"
    config = Config()
    config.values["sessions_dirs"] = [str(watched)]
    config.values["liveness"] = "off"
    app = App(config, json_out=False, notify=False)
    try:
        app.start()
        app.serve()
        wait_for(lambda: app.engine is not None and app.engine.ready_event.is_set(), 20, "ready")

        def doctor(folder: Path) -> str:
            args = [sys.executable, "-m", "notifier", "doctor", "--sessions-dir", str(folder)]
            return subprocess.run(args, capture_output=True, text=True, timeout=60).stdout

        assert "running app: it watches" not in doctor(watched)
        said = doctor(elsewhere)
        assert (
            f"[note] running app: it watches {watched}; the sessions folder is {elsewhere} as this command sees it"
            " (command line): if pi writes there now, restart the app"
        ) in said, said
    finally:
        app.shutdown()


def test_a_run_without_tray_or_windows_draws_nothing(tmp_path: Path) -> None:
    """A headless run (no tray icon, no window can attach) has no outputs thread (nothing to draw, no notifier): its questions reach
    the outputs that are there, and nothing is drawn for nobody."""
    config = Config()
    config.values["sessions_dirs"] = [str(tmp_path)]
    config.values["liveness"] = "off"
    app = App(config, json_out=False, notify=False)
    before = {t for t in threading.enumerate() if t.name == "pi-notifier-outputs"}  # (other tests' ending)
    try:
        app.start(tray=None, windows=False)
        wait_for(lambda: app.engine is not None and app.engine.ready_event.is_set(), 20, "ready")
        append(tmp_path / "s.jsonl", header(), user(), ask("q1", "Anyone drawing?"))
        wait_for(lambda: app.snapshot().pending_count == 1, 10, "the question")
        wait_for(lambda: app.store.history(), 10, "the question in the history (its output had it)")
        assert app.engine is not None and app.redraw not in app.engine.outputs
        assert {t for t in threading.enumerate() if t.name == "pi-notifier-outputs"} <= before
    finally:
        app.shutdown()
