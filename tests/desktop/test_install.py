"""Installed as users install it: the built wheel, non-editable, in a fresh virtual environment,
run from outside the repository. Everything it reads at run time must come from the wheel."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from notifier import __version__
from notifier.control import request

from ..conftest import ROOT, USER_ENV, wait_for
from .services import Dunst, Monitor

# pip reuses the user's download cache (their HOME as it was when pytest started).
PIP_CACHE = os.environ.get("PIP_CACHE_DIR") or os.path.join(USER_ENV.get("HOME") or "~", ".cache", "pip")


def _run(
    cmd: list[str], timeout: float, env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env, cwd=cwd)
    assert r.returncode == 0, f"{cmd[:4]} failed:\n{r.stdout[-2000:]}\n{r.stderr[-4000:]}"
    return r


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The `pi-notifier` executable of a fresh venv holding only the built wheel and its deps."""
    tmp = tmp_path_factory.mktemp("install")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_USER")}
    env["PIP_CACHE_DIR"] = PIP_CACHE
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    # Built from a copy of the tree, so the build leaves nothing behind in the checkout.
    src = tmp / "src"
    shutil.copytree(ROOT / "notifier", src / "notifier", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    dist = tmp / "dist"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), str(src)], 600, env=env)
    (wheel,) = dist.glob("pi_notifier-*.whl")
    venv = tmp / "venv"
    _run([sys.executable, "-m", "venv", str(venv)], 300, env=env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], 900, env=env)
    exe = venv / "bin" / "pi-notifier"
    assert exe.exists()
    yield exe


def _env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(extra or {})
    return env


def test_installed_wheel_is_whole(installed: Path, tmp_path: Path) -> None:
    venv = installed.parent.parent
    r = _run([str(installed), "--version"], 60, cwd=tmp_path, env=_env())
    assert r.stdout.strip() == f"pi-notifier {__version__}"
    # It runs from the venv, not from the checkout.
    r = _run(
        [str(venv / "bin" / "python"), "-c", "import notifier, sys; print(notifier.__file__)"],
        60,
        cwd=tmp_path,
        env=_env(),
    )
    assert r.stdout.strip().startswith(str(venv)), r.stdout
    r = subprocess.run(
        [str(installed), "doctor"], capture_output=True, text=True, timeout=120, cwd=tmp_path, env=_env()
    )
    assert "Traceback" not in r.stderr and "sessions folder" in r.stdout, r.stdout + r.stderr
    assert r.returncode in (0, 1), r.stderr

    # Autostart: the entry runs the installed executable by absolute path (no systemd --user
    # here, so the XDG autostart entry), and remove undoes it.
    r = _run([str(installed), "autostart", "install"], 120, cwd=tmp_path, env=_env())
    entries = list(Path(os.environ["XDG_CONFIG_HOME"]).rglob("pi-notifier.*"))
    assert entries, r.stdout
    text = entries[0].read_text()
    assert str(installed) in text, text
    icon = [line for line in text.splitlines() if line.startswith("Icon=")]
    # a theme name, its file in the user's icon theme (a path into site-packages broke on upgrades)
    assert icon == ["Icon=pi-notifier"], icon
    assert (Path(os.environ["XDG_DATA_HOME"]) / "icons" / "hicolor" / "256x256" / "apps" / "pi-notifier.png").is_file()
    assert "not installed" not in _run([str(installed), "autostart", "status"], 60, env=_env()).stdout
    _run([str(installed), "autostart", "remove"], 60, cwd=tmp_path, env=_env())
    assert not any(e.exists() for e in entries)
    assert "not installed" in _run([str(installed), "autostart", "status"], 60, env=_env()).stdout


def test_installed_demo_notifies_on_the_desktop(
    installed: Path, tmp_path: Path, dunst: Dunst, monitor: Monitor
) -> None:
    venv = installed.parent.parent
    proc = subprocess.Popen(
        [str(installed), "demo", "--no-tray"],
        cwd=tmp_path,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        (n,) = wait_for(lambda: monitor.notifies(), 30, "the demo's notification")
        assert n["summary"].endswith("needs an answer")
        # The icon comes from the installed package, not from the checkout.
        assert n["icon"].startswith(str(venv)) and os.path.exists(n["icon"]), n["icon"]
        wait_for(lambda: dunst.displayed() == 1, 10, "bubble shown")
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    assert "a notification appeared" in out, out


def test_the_readme_uninstall_leaves_nothing_running(installed: Path, tmp_path: Path) -> None:
    """The README's cycle with the installed executable: autostart install, the app started as it
    says, the companion extension installed; then the uninstall's steps (quit, pi-extension
    remove, autostart remove) leave no process of the installation and nothing for pi to load."""
    venv = str(installed.parent.parent)

    def ours() -> list[psutil.Process]:
        found = []
        for p in psutil.process_iter(["cmdline", "status"]):
            if p.info["status"] != psutil.STATUS_ZOMBIE and any(venv in w for w in p.info["cmdline"] or ()):
                found.append(p)
        return found

    said = _run([str(installed), "autostart", "install"], 120, cwd=tmp_path, env=_env()).stdout
    (start,) = [line.split(": ", 1)[1] for line in said.splitlines() if line.startswith("start it now: ")]
    if not start.startswith("setsid -f "):
        pytest.skip(f"not an XDG entry started with setsid here: {start}")
    _run(["sh", "-c", start], 30, cwd=tmp_path, env=_env())
    extension = Path(os.environ["HOME"]) / ".pi" / "agent" / "extensions" / "pi-notifier"
    try:
        wait_for(lambda: request({"cmd": "ping"}), 30, "the app started as autostart install said")
        assert [p.info["cmdline"][-1] for p in ours()] == ["run"]
        _run([str(installed), "pi-extension", "install"], 60, cwd=tmp_path, env=_env())
        assert (extension / "index.ts").is_file()

        quit_said = _run([str(installed), "quit"], 60, cwd=tmp_path, env=_env()).stdout
        assert quit_said.endswith("has quit\n"), quit_said
        assert "removed" in _run([str(installed), "pi-extension", "remove"], 60, cwd=tmp_path, env=_env()).stdout
        assert "removed" in _run([str(installed), "autostart", "remove"], 60, cwd=tmp_path, env=_env()).stdout
        assert ours() == [] and not extension.exists() and request({"cmd": "ping"}) is None
        assert not list(Path(os.environ["XDG_CONFIG_HOME"]).rglob("pi-notifier.desktop"))
    finally:
        for p in ours():
            p.kill()
