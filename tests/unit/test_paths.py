"""Our config and state folders are platformdirs' own, whatever $XDG_… and $HOME say."""

from __future__ import annotations

import platformdirs
import pytest

from notifier import APP_NAME
from notifier.system import paths

HOMES = ["/home/user", "/home/user/", "/", "//srv//u//", "relative/home", "", None]
XDG = [None, "", "   ", "/x/conf", "/x/conf/", "//x", "relative/conf", "~/conf"]


def _env(monkeypatch: pytest.MonkeyPatch, name: str, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(name, raising=False)
    else:
        monkeypatch.setenv(name, value)


@pytest.mark.parametrize("home", HOMES)
@pytest.mark.parametrize("xdg", XDG)
def test_same_folders_as_platformdirs(monkeypatch: pytest.MonkeyPatch, home: str | None, xdg: str | None) -> None:
    monkeypatch.delenv("ANDROID_DATA", raising=False)
    _env(monkeypatch, "HOME", home)
    _env(monkeypatch, "XDG_CONFIG_HOME", xdg)
    _env(monkeypatch, "XDG_STATE_HOME", xdg)
    dirs = platformdirs.PlatformDirs(APP_NAME, appauthor=False)
    try:
        want = (dirs.user_config_dir, dirs.user_state_dir)
    except RuntimeError:  # (newer platformdirs: no home folder to be found)
        with pytest.raises(RuntimeError):
            paths.config_dir()
        return
    assert (paths.config_dir(), paths.state_dir()) == want
    assert paths.config_file() == f"{want[0]}/config.toml"
