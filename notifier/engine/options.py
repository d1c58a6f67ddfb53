"""What the engine is told: the sessions folders, the question tools, liveness, the scan cache."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from notifier.core.values import Record, field
from notifier.pi.questions import QuestionCatalog
from notifier.watch.tail import DEFAULT_MAX_LINE

if TYPE_CHECKING:
    from notifier.system.config import Config

LIVENESS_INTERVAL_S = 3.0


class EngineOptions(Record):
    """What the engine reads and how: the sessions folders, the question catalog, liveness."""

    roots: list[str]
    catalog: QuestionCatalog = field(default_factory=QuestionCatalog)
    liveness: bool = True
    max_line: int = DEFAULT_MAX_LINE
    liveness_interval: float = LIVENESS_INTERVAL_S
    cache_path: str | None = None  # the start-up scan cache (None: read every file)

    def __init__(
        self,
        roots: list[str],
        catalog: QuestionCatalog | None = None,  # (None: a new catalog, as the field's default_factory)
        liveness: bool = True,
        max_line: int = DEFAULT_MAX_LINE,
        liveness_interval: float = LIVENESS_INTERVAL_S,
        cache_path: str | None = None,
    ) -> None:
        self.roots = roots
        self.catalog = QuestionCatalog() if catalog is None else catalog
        self.liveness = liveness
        self.max_line = max_line
        self.liveness_interval = liveness_interval
        self.cache_path = cache_path


def engine_options(config: Config) -> EngineOptions:
    from notifier.system import paths

    return EngineOptions(
        roots=list(config["sessions_dirs"]),
        catalog=QuestionCatalog(config["question_tools"], config["ignore_tools"]),
        liveness=config["liveness"] == "auto",
        cache_path=os.path.join(paths.state_dir(), "scan-cache.sqlite3"),
    )
