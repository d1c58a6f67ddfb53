"""The config loader against hostile values: any TOML value for any key gives a valid config or
a one-line ConfigError naming the key; through the real CLI, each bad case exits 2."""

from __future__ import annotations

import math
import re
import sys
from datetime import date, datetime, time, timezone
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notifier.config import (  # (in parentheses: the codemod leaves it whole)
    KEYS,
    SCHEMA,
    ConfigError,
    load,
)
from notifier.core.planner import parse_quiet_hours

from ..conftest import cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def toml_value(v: Any) -> str:
    """A tiny TOML writer for the values hypothesis draws (enough for every TOML value type)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        out = []
        for ch in v:
            if ch in '"\\' or ord(ch) < 0x20 or ord(ch) == 0x7F:
                out.append(f"\\u{ord(ch):04x}")
            else:
                out.append(ch)
        return '"' + "".join(out) + '"'
    if isinstance(v, (datetime, date, time)):
        return v.isoformat()
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f'"{k}" = {toml_value(x)}' for k, x in v.items()) + "}"
    raise AssertionError(type(v))


text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]) | st.sampled_from(" ~/.:_-\t\x00\u202e"), max_size=40
)
scalars = (
    st.booleans()
    | st.integers()
    | st.integers(min_value=-(10**40), max_value=10**40)
    | st.floats(allow_nan=True, allow_infinity=True)
    | text
    | st.sampled_from(
        [
            "",
            "auto",
            "off",
            "gtk",
            "none",
            "dbus",
            "22:00-07:00",
            "7:00-7:00",
            "~/s",
            "/abs",
            "question",
            "idle",
        ]
    )
    | st.datetimes(timezones=st.just(timezone.utc))
    | st.dates()
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=40)
        | st.dictionaries(st.from_regex(r"[a-z]{1,5}", fullmatch=True), inner, max_size=3)
    ),
    max_leaves=60,
)


def _write(tmp: Path, key: str, value: Any) -> Path:
    table, _, leaf = key.rpartition(".")
    body = f"{leaf} = {toml_value(value)}\n"
    path = tmp / "c.toml"
    path.write_text((f"[{table}]\n" if table else "") + body, encoding="utf-8")
    return path


# deadline=None: an example (a file written and loaded; up to ~60 ms for a large nested value)
# exceeded hypothesis's default 200 ms deadline once when other test runs starved this 2-core
# machine, and its rerun was fast: "Unreliable test timings" (FlakyFailure), not a config bug
# (20,000 examples without a deadline and 80 seeds with it found none). Speed is bench/'s business.
@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(key=st.sampled_from([k.name for k in SCHEMA]), value=values)
def test_any_value_for_any_key_is_valid_or_a_config_error_naming_it(
    tmp_path: Path, key: str, value: Any
) -> None:
    path = _write(tmp_path, key, value)
    try:
        config = load(str(path), explicit=True)
    except ConfigError as exc:
        message = str(exc)
        assert f"'{key}'" in message and str(path) in message, message
        assert "\n" not in message
        return
    check_valid(config.values)


def check_valid(values: dict[str, Any]) -> None:
    """What the rest of the app may rely on after loading."""
    assert all(isinstance(p, str) and p.startswith("/") for p in values["sessions_dirs"])
    for key in ("question_tools", "ignore_tools"):
        assert len(values[key]) <= 32
        assert all(re.fullmatch(r"[A-Za-z0-9_.:/@+-]{1,128}", t) for t in values[key])
    assert values["liveness"] in ("auto", "off")
    assert isinstance(values["settle_ms"], int) and 0 <= values["settle_ms"] <= 60000
    assert len(values["remind_after"]) <= 10
    assert all(math.isfinite(m) and 0.01 <= m <= 10080 for m in values["remind_after"])
    assert set(values["notify_on"]) <= {"needs_input", "idle", "failed"}
    window = parse_quiet_hours(values["quiet_hours"])
    assert window is None or window[0] != window[1]
    assert isinstance(values["notifications.show_text"], bool)
    assert 1 <= values["history.retention_days"] <= 3650


@pytest.mark.parametrize(
    ("body", "key"),
    [
        ("settle_ms = 100000000000000000000\n", "settle_ms"),  # would silently turn notifications off
        ("remind_after = [inf]\n", "remind_after"),
        ("remind_after = [nan]\n", "remind_after"),
        ("remind_after = [0]\n", "remind_after"),
        ("remind_after = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]\n", "remind_after"),
        ("settle_ms = " + "9" * 5000 + "\n", "settle_ms"),  # more digits than int() reads by default
        ("settle_ms = " + "9" * 150_000 + "\n", "settle_ms"),
        (
            "remind_after = " + "[" * 5000 + "]" * 5000 + "\n",
            "remind_after",
        ),  # deeper than the parser's stack
        ("[tray]\nbackend = " + "[" * 3000 + "]" * 3000 + "\n", "tray.backend"),
        ("question_tools = ['']\n", "question_tools"),
        ("question_tools = ['has space']\n", "question_tools"),
        ("ignore_tools = [" + ", ".join(f"'t{i}'" for i in range(40)) + "]\n", "ignore_tools"),
        ("sessions_dirs = ['relative/folder']\n", "sessions_dirs"),
        ("sessions_dirs = ['']\n", "sessions_dirs"),
        ('sessions_dirs = ["/a\\u0000b"]\n', "sessions_dirs"),
        ("quiet_hours = '22:00'\n", "quiet_hours"),
        ("quiet_hours = '07:00-07:00'\n", "quiet_hours"),
        ("quiet_hours = '24:00-07:00'\n", "quiet_hours"),
        ("[tray]\nbackend = 'kde'\n", "tray.backend"),
        ("[notifications]\nbackend = 'growl'\n", "notifications.backend"),
        ("history.retention_days = 0\n", "history.retention_days"),
        ("history.retention_days = 1e3\n", "history.retention_days"),
        ("settle_ms = 1979-05-27T07:32:00Z\n", "settle_ms"),
        ("notify_on = ['idle', 'sometimes']\n", "notify_on"),
        ("liveness = ''\n", "liveness"),
        ("[tray.deeper]\nbackend = 'gtk'\n", "tray.deeper"),
        ("liveness = 'auto'\nsesions_dirs = ['x']\n", "sesions_dirs"),  # an unknown key
        ("settle_ms = -1\n", "settle_ms"),
        ("[notifications]\nshow_text = 'yes'\n", "notifications.show_text"),
        ("[notifications]\nexpire = 0\n", "notifications.expire"),
        ("[notifications]\nexpire = 'forever'\n", "notifications.expire"),
    ],
)
def test_bad_config_is_one_line_naming_key_and_file(tmp_path: Path, body: str, key: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_text(body)
    r = cli("status", "--config", str(cfg), "--sessions-dir", str(tmp_path))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"'{key}'" in lines[0] and str(cfg) in lines[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (["status", "--question-tool", ""], "--question-tool"),
        (["status", "--question-tool", "two words"], "--question-tool"),
        (["status", "--sessions-dir", ""], "--sessions-dir"),
        (["status", "--sessions-dir", "  "], "--sessions-dir"),
        (["status", "--config", ""], "--config"),
        (["history", "--since", "nan"], "--since"),
        (["history", "--since", "inf"], "--since"),
        (["history", "--since", "-1"], "--since"),
        (["history", "--since", "1e308"], "--since"),
        (["history", "--since", "abc"], "--since"),
        (["history", "--since", ""], "--since"),
        (["history", "--since", "7 days"], "--since"),
        (["history", "--since", "1w"], "--since"),
    ],
)
def test_bad_command_line_values_are_one_line(args: list[str], option: str) -> None:
    r = cli(*args)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "command line" in lines[0] and option in lines[0], r.stderr


@pytest.mark.parametrize(
    ("content", "fragment"),
    [(b"\xff\xfe = 1", "not UTF-8"), (b"x" * (1 << 20 + 1), "larger than"), (b"a = [1,", "not valid TOML")],
)
def test_unreadable_config_files(tmp_path: Path, content: bytes, fragment: str) -> None:
    cfg = tmp_path / "c.toml"
    cfg.write_bytes(content)
    r = cli("status", "--config", str(cfg), "--sessions-dir", str(tmp_path))
    assert r.returncode == 2 and fragment in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    r = cli("status", "--config", str(tmp_path), "--sessions-dir", str(tmp_path))  # a folder
    assert r.returncode == 2 and str(tmp_path) in r.stderr and "Traceback" not in r.stderr


def test_every_key_is_documented_once_as_it_is() -> None:
    """docs/configuration.md lists exactly the schema's keys, each with its default and range."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    found = list(re.finditer(r"^\| `([a-z_.]+)` \|.*$", doc, re.M))
    rows = [m.group(0) for m in found]
    names = [m.group(1) for m in found]
    assert sorted(names) == sorted(KEYS), "docs/configuration.md and the schema list different keys"
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split(" | ")]
        key = KEYS[cells[0].strip("`")]
        assert key.allowed in cells[3], f"the row of {key.name} lacks its range {key.allowed!r}"
        if key.name == "sessions_dirs":  # (its default is pi's own folder, found at run time)
            assert cells[1] == "pi's default" and key.default == []
        else:
            assert tomllib.loads(f"v = {cells[1].strip('`')}")["v"] == key.default, f"the default of {key.name}"


def test_the_writer_round_trips() -> None:
    """The test's own TOML writer says what it means (else the property test proves nothing)."""
    sample: dict[str, Any] = {"a": [1, -2.5, 'x"\\\x00\u202e', True, [float("inf")]], "b": {"c": date(2020, 1, 2)}}
    parsed = tomllib.loads("".join(f"{k} = {toml_value(v)}\n" for k, v in sample.items()))
    assert (
        parsed["a"][:4] == sample["a"][:4]
        and parsed["a"][4][0] == float("inf")
        and parsed["b"] == sample["b"]
    )
