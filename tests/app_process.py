"""Runs the real app (`python -m notifier …`) as a subprocess and collects its JSON events."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Any

from .conftest import ROOT, wait_for


class AppProcess:
    def __init__(self, *args: str, env: dict[str, str] | None = None, argv: list[str] | None = None) -> None:
        self.proc = subprocess.Popen(
            argv or [sys.executable, "-m", "notifier", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=dict(os.environ if env is None else env),
        )
        self.events: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            with self._lock:
                self.events.append(obj)

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._lock:
                self.stderr.append(line.rstrip("\n"))

    def of(self, event: str) -> list[dict[str, Any]]:
        with self._lock:
            return [e for e in self.events if e["event"] == event]

    def wait(self, event: str, count: int = 1, timeout: float = 20) -> list[dict[str, Any]]:
        def check() -> list[dict[str, Any]] | None:
            if self.proc.poll() is not None and len(self.of(event)) < count:
                raise AssertionError(f"app exited ({self.proc.returncode}): " + "\n".join(self.stderr[-20:]))
            found = self.of(event)
            return found if len(found) >= count else None

        return wait_for(check, timeout, f"{count}×{event} (stderr: {self.stderr[-5:]})")

    def log_has(self, fragment: str, timeout: float = 20) -> str:
        def check() -> str | None:
            with self._lock:
                return next((line for line in self.stderr if fragment in line), None)

        return wait_for(check, timeout, f"log line containing {fragment!r}")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        return self.proc.returncode

    def __enter__(self) -> AppProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
