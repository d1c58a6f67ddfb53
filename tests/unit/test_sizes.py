"""Size limits a reader relies on: no module of the product (Python, or the companion extension's
TypeScript) over 300 lines. (Functions: ruff's C901, max-complexity 20 in pyproject.toml.)"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 300


def too_long(root: Path) -> list[str]:
    """Every module under ``root/notifier`` over LIMIT lines, as "path: N lines" (the path from
    that folder)."""
    package = root / "notifier"
    modules = sorted(package.rglob("*.py")) + sorted(package.rglob("*.ts"))
    out = []
    for path in modules:
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > LIMIT:
            out.append(f"{path.relative_to(package)}: {n} lines")
    return out


def test_no_module_is_over_300_lines() -> None:
    assert (ROOT / "notifier" / "resources" / "pi-extension" / "pi-notifier" / "index.ts").exists()
    assert too_long(ROOT) == []


def test_the_check_sees_a_long_module_of_either_kind(tmp_path: Path) -> None:
    (tmp_path / "notifier" / "sub").mkdir(parents=True)
    (tmp_path / "notifier" / "short.py").write_text("x = 1\n" * LIMIT)
    (tmp_path / "notifier" / "sub" / "long.py").write_text("x = 1\n" * (LIMIT + 1))
    (tmp_path / "notifier" / "sub" / "long.ts").write_text("let x = 1;\n" * (LIMIT + 2))
    assert too_long(tmp_path) == ["sub/long.py: 301 lines", "sub/long.ts: 302 lines"]
