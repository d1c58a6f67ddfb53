"""What a venv holds against the lock: run with that venv's python.

``installed.py check LOCK``: every distribution installed is in LOCK at the version installed (so
.venv is exactly the lock's, for the packages this platform and these extras need); else it says
which are not and exits 1. ``installed.py diff LOCK``: each package whose version differs from
LOCK, as ``name: locked -> installed`` (``make test-latest``: which release a failure may come
from). Markers are not evaluated: a package locked at two versions (one per Python) matches either.
The venv's own pip and setuptools (from the Python that made it) and pi-notifier itself are left out.
"""

from __future__ import annotations

import re
import sys
from importlib import metadata
from pathlib import Path

OWN = {"pip", "setuptools", "wheel", "pi-notifier"}


def normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked(path: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        pin = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;]+)", line)
        if pin:
            found.setdefault(normal(pin[1]), []).append(pin[2])
    return found


def installed() -> dict[str, str]:
    found = {normal(d.metadata["Name"]): d.version for d in metadata.distributions()}
    return {name: version for name, version in sorted(found.items()) if name not in OWN}


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("check", "diff"):
        print("usage: installed.py check|diff LOCK", file=sys.stderr)
        return 2
    mode, lock = argv[0], Path(argv[1])
    pins = locked(lock)
    differ = [
        f"{name}: {' | '.join(pins.get(name, ['not in the lock']))} -> {version}"
        for name, version in installed().items()
        if version not in pins.get(name, [])
    ]
    if mode == "diff":
        print(f"differs from {lock} (name: locked -> installed):" if differ else f"every package as in {lock}")
        for line in differ:
            print(f"  {line}")
        return 0
    if differ:
        print(f"{sys.prefix} is not as {lock} says (name: locked -> installed);", file=sys.stderr)
        print("`make clean` and again, or `make lock` if pyproject.toml's dependencies changed:", file=sys.stderr)
        for line in differ:
            print(f"  {line}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
