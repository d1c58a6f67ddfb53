"""The log file follows its folder: deleted while the app runs and made again (the state store
does), the next records go to a new file there, not to the unlinked one."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from notifier.cli.parser import _private_log


def test_a_log_file_whose_folder_was_deleted_is_made_again(tmp_path: Path) -> None:
    folder = tmp_path / "state"
    handler = _private_log(str(folder / "pi-notifier.log"))
    logger = logging.getLogger("test-log-file")
    logger.propagate = False
    logger.addHandler(handler)
    try:
        logger.warning("before")
        shutil.rmtree(folder)
        logger.warning("while the folder is gone")  # (to the old file: nowhere to write a new one)
        folder.mkdir(mode=0o700)  # made again
        logger.warning("after")
    finally:
        logger.removeHandler(handler)
        handler.close()
    log = folder / "pi-notifier.log"
    assert log.read_text(encoding="utf-8") == "after\n"
    assert os.stat(log).st_mode & 0o777 == 0o600
