"""Shared helpers: where the real pi captures are, and waiting for a condition with a deadline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import pytest
from hypothesis import settings

from .user_state import blamed, changes, held, listing, places

if TYPE_CHECKING:
    from notifier.system.supervisor import Worker

# Property tests judge what comes out, never how fast: hypothesis's 200 ms per example would fail a
# correct example on a loaded CI machine (speed is measured in bench/).
settings.register_profile("pi-notifier", deadline=None)
# `make check`, the fast inner loop (pytest --hypothesis-profile=check): a fifth of the examples,
# also of a test that asks for its own count (tests/strategies.py `examples`); `make test` and CI
# run them all.
settings.register_profile("check", settings.get_profile("pi-notifier"), max_examples=20)
settings.load_profile("pi-notifier")

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")

# The invoking user's folders, as they were when pytest started: before anything below moves them.
USER_ENV = {k: v for k, v in os.environ.items() if k == "HOME" or k.startswith(("XDG_", "PI_CODING_AGENT"))}
_USER_PLACES = places(USER_ENV)
_USER_BEFORE = listing(_USER_PLACES)
# A folder for the whole run: whatever copies os.environ before a test's own folders exist
# (module constants, session and module fixtures) gets this, never the user's own.
_RUN_HOME = Path(tempfile.mkdtemp(prefix="pi-notifier-run-home-"))
# Every process the run starts carries this mark (a server that leaves the run's process tree
# too); the user's own pi-notifier and pis do not. The user's places that processes outside the
# run hold open as it starts: what changes there meanwhile is theirs (tests/user_state.py).
RUN_MARK = ("PI_NOTIFIER_TEST_RUN", str(_RUN_HOME))
os.environ[RUN_MARK[0]] = RUN_MARK[1]
_USER_BUSY = held(_USER_PLACES, RUN_MARK)
# The run's temporary folders: pytest's (set once the first test asks for one) and _RUN_HOME.
_RUN_FOLDERS = [str(_RUN_HOME)]
HOME_VARIABLES = ("XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")


def _private(base: Path, setenv: Callable[[str, str], None]) -> None:
    for name in HOME_VARIABLES:
        setenv(name, str(base / name.lower()))
    runtime = base / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    setenv("XDG_RUNTIME_DIR", str(runtime))
    setenv("HOME", str(base))


_private(_RUN_HOME, os.environ.__setitem__)
for _name in ("PI_CODING_AGENT_DIR", "PI_CODING_AGENT_SESSION_DIR"):
    os.environ.pop(_name, None)
# Nor the user's desktop and tmux (run from a terminal of theirs): no test, nor an app it starts,
# shows them a notification or an icon, raises their windows or selects their panes. The desktop
# layer brings a display and a bus of its own (tests/desktop/conftest.py); a tmux started without
# -S gets a server of this run's.
USER_DESKTOP = (
    "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "TMUX_PANE", "SWAYSOCK", "I3SOCK",
    "HYPRLAND_INSTANCE_SIGNATURE", "KITTY_LISTEN_ON", "KITTY_WINDOW_ID", "WEZTERM_PANE", "WEZTERM_UNIX_SOCKET",
)  # fmt: skip
for _name in USER_DESKTOP:
    os.environ.pop(_name, None)
(_RUN_HOME / "tmux").mkdir(mode=0o700)
os.environ["TMUX_TMPDIR"] = str(_RUN_HOME / "tmux")


# The layers, by what a test needs from the machine (docs/testing.md §1; markers in pyproject.toml),
# e.g. `pytest -m "processes and not hostile"`; `make check` runs pure and fixtures.
LAYERS = {"unit": "pure", "fixtures": "fixtures", "processes": "processes", "desktop": "desktop", "live": "live"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Each test is marked with its folder's layer; those of tests/hostile (hostile inputs, on
    any layer's means) with ``hostile``."""
    tests = ROOT / "tests"
    for item in items:
        parts = item.path.relative_to(tests).parts if item.path.is_relative_to(tests) else ()
        folder = parts[0] if len(parts) > 1 else ""
        if folder in LAYERS:
            item.add_marker(LAYERS[folder])
        elif folder == "hostile":
            item.add_marker("hostile")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """The run fails if it touched the user's own pi-notifier files: what the tests could have
    changed there, not what the user's own pi-notifier and pis write meanwhile (tests/user_state.py)."""
    found = changes(_USER_BEFORE, listing(_USER_PLACES))
    busy = {**held(_USER_PLACES, RUN_MARK), **_USER_BUSY} if found else {}
    marks = [os.path.join(folder, "") for folder in {*_RUN_FOLDERS, *map(os.path.realpath, _RUN_FOLDERS)}]
    touched = blamed(found, _USER_PLACES, busy, marks)
    shutil.rmtree(_RUN_HOME, ignore_errors=True)
    if len(touched) < len(found):
        holders = ", ".join(sorted(set(busy.values())))
        _say(session, f"{len(found) - len(touched)} changes in the user's pi-notifier files left to their own processes ({holders})", red=False)
    if touched:
        _say(session, "the tests touched the user's own pi-notifier files:\n  " + "\n  ".join(map(str, touched[:20])), red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _say(session: pytest.Session, message: str, red: bool) -> None:
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(message, red=red)
    else:
        print(message, file=sys.stderr)


@pytest.fixture(autouse=True, scope="session")
def _run_folders(tmp_path_factory: pytest.TempPathFactory) -> None:
    """pytest's temporary folder of this run, for the guard above."""
    _RUN_FOLDERS.append(str(tmp_path_factory.getbasetemp()))


def _find_fixtures() -> Path | None:
    env = os.environ.get("PI_NOTIFIER_FIXTURES")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT / "tests" / "data" / "pi-sessions")
    for c in candidates:
        if (c / "README.md").exists():
            return c
    return None


FIXTURES = _find_fixtures()


def wait_for(
    predicate: Callable[[], T | None | Literal[False]], timeout: float = 10.0, what: str = "condition"
) -> T:
    """Poll ``predicate`` until it returns something truthy; fail after ``timeout`` seconds.
    The value returned is that truthy value: never ``None`` or ``False`` (so a predicate
    ``lambda: x and x.items`` types as ``x.items``'s type)."""
    deadline = time.monotonic() + timeout
    delay = 0.002
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(delay)
        delay = min(delay * 2, 0.05)


@pytest.fixture
def fixtures() -> Path:
    if FIXTURES is None:
        pytest.fail("the real pi captures (tests/data/pi-sessions) are missing")
    return FIXTURES


@pytest.fixture
def worker() -> Iterator[Worker]:
    """A started outputs-thread :class:`Worker`, stopped (and its end awaited) after the test."""
    from notifier.system.supervisor import Worker

    stopping = threading.Event()
    started = Worker("test", stopping)
    started.start()
    yield started
    stopping.set()
    assert started.sync(5)


def scenario(name: str) -> dict[str, Any]:
    assert FIXTURES is not None
    loaded: dict[str, Any] = json.loads((FIXTURES / name / "scenario.json").read_text())
    return loaded


@pytest.fixture(autouse=True)
def private_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test (and every app it starts) gets its own HOME, config, state and runtime folders."""
    base = tmp_path_factory.mktemp("home")
    _private(base, monkeypatch.setenv)
    monkeypatch.delenv("PI_CODING_AGENT_DIR", raising=False)
    monkeypatch.delenv("PI_CODING_AGENT_SESSION_DIR", raising=False)
    return base


def cli(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run `python -m notifier ARGS` to completion (a CompletedProcess with text output). Its
    output is buffered, as where people run it (PYTHONUNBUFFERED, set on some machines, would
    hide output a command forgets to flush)."""
    env = dict(os.environ if env is None else env)
    env.pop("PYTHONUNBUFFERED", None)
    return subprocess.run(
        [sys.executable, "-m", "notifier", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        cwd=ROOT,
    )


def json_paths(obj: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Where every value inside the JSON value ``obj`` is (dict keys and list indexes)."""
    inner = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    return [p for k, v in inner for p in [(*at, k), *json_paths(v, (*at, k))]]


def wrong_type(value: Any) -> Any:
    """A JSON value of another type than ``value`` (what a writer of typed values never writes there)."""
    if isinstance(value, list):
        return {}
    if isinstance(value, dict):
        return []
    return "x" if isinstance(value, (bool, int, float)) else 7  # (7 for a string or a null)
