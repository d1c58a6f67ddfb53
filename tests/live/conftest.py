"""The real-pi harness's fixtures, for every test in this folder (see pi_harness.py)."""

from .pi_harness import listener, model, questionnaire_model, tmux_server

__all__ = ["listener", "model", "questionnaire_model", "tmux_server"]
