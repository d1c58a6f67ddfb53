"""What the engine is told: the sessions folders, the question tools, liveness, the scan cache."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from notifier.config import Config
from notifier.pi.catalog import QuestionCatalog
from notifier.sessions.tail import DEFAULT_MAX_LINE
from notifier.system import paths

LIVENESS_INTERVAL_S = 3.0


@dataclass(slots=True)
class EngineOptions:
    """What the engine reads and how: the sessions folders, the question catalog, liveness."""

    roots: list[str]
    catalog: QuestionCatalog = field(default_factory=QuestionCatalog)
    liveness: bool = True
    max_line: int = DEFAULT_MAX_LINE
    liveness_interval: float = LIVENESS_INTERVAL_S
    cache_path: str | None = None  # the start-up scan cache (None: read every file)


def engine_options(config: Config) -> EngineOptions:
    return EngineOptions(
        roots=list(config["sessions_dirs"]),
        catalog=QuestionCatalog(config["question_tools"], config["ignore_tools"]),
        liveness=config["liveness"] == "auto",
        cache_path=os.path.join(paths.state_dir(), "scan-cache.sqlite3"),
    )
