"""A Goto or an Answer from the tray, a notification or the window, carried out on a snapshot the
caller already has: (the CLI's exit code, one line to show). The app and the window without an app
both come here, so each is done one way."""

from __future__ import annotations

from notifier.actions.answer import answer_line
from notifier.actions.goto import go
from notifier.config import Config
from notifier.core.commands import Answer, Goto
from notifier.core.model import Snapshot


def carry_out(config: Config, snapshot: Snapshot, command: Goto | Answer) -> tuple[int, str]:
    if isinstance(command, Goto):
        return go(config, snapshot, command.session)
    return answer_line(
        config, snapshot, command.session, command.call, list(command.choices), command.text, token=command.token
    )
