"""The real-pi harness's fixtures, for every test in this folder (see pi_harness.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from ..app_process import AppProcess
from .pi_harness import listener, model, questionnaire_model, tmux_server

__all__ = ["apps", "listener", "model", "questionnaire_model", "tmux_server"]


@pytest.fixture
def apps() -> Iterator[list[AppProcess]]:
    """Apps a test starts (append them), stopped after it."""
    started: list[AppProcess] = []
    yield started
    for app in started:
        app.stop()
