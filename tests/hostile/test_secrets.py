"""Secrets in push URLs are masked everywhere the app prints or logs (issue 22, "Secrets"): a
token, a password, an ntfy topic (whoever knows it reads the pushes). ``pi-notifier config``
shows scheme and host; every log record, apprise's own included, has them masked, on stderr and
in the log file, with and without ``-v``.

No network is used: apprise's requests go to a local proxy that refuses them all (403), so every
push fails at once, and apprise says so, naming what must not leak."""

from __future__ import annotations

import http.server
import os
import string
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from notifier.core.text import MIN_PART, Masker, mask_url, secret_parts

from ..app_process import AppProcess
from ..conftest import cli
from ..writer import append, ask, header, user

URLS = ["ntfys://ntfy.example/secret-topic-123", "tgram://123456:ABCDEF/987"]
SECRETS = ["secret-topic-123", "ABCDEF"]
PLAIN = "ntfy://ntfy.example/plain-http-topic"  # over http: the proxy's 403 is its answer


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("ntfys://ntfy.example/secret-topic-123", "ntfys://ntfy.example/…"),
        ("ntfy://my-own-topic", "ntfy://…"),  # the topic as the "host": ntfy.sh's own
        ("tgram://123456:ABCDEF/987", "tgram://…"),  # a bot token posing as host:port
        ("mailto://me:hunter2@smtp.example.com", "mailto://…@smtp.example.com"),
        ("json://127.0.0.1:8080/hook?token=abc", "json://127.0.0.1:8080/…"),
        ("gotify://push.example:8443/AbCdEf123/", "gotify://push.example:8443/…"),
        ("discord://1234567/abcdefghij", "discord://…"),
        ("https://hooks.example.com", "https://hooks.example.com"),
        ("not a url", "…"),
    ],
)
def test_a_url_keeps_only_its_scheme_and_plain_host(url: str, shown: str) -> None:
    assert mask_url(url) == shown


def test_apprise_like_lines_are_masked() -> None:
    mask = Masker(URLS)
    lines = {
        "Loaded ntfy URL: ntfys://ntfy.example/secret-topic-123?priority=default": "Loaded ntfy URL: ntfys://ntfy.example/…",
        "ntfy Payload: {'topic': 'secret-topic-123', 'title': 't'}": "ntfy Payload: {'topic': '…', 'title': 't'}",
        "Telegram POST URL: https://api.telegram.org/bot123456:ABCDEF/sendMessage (x)": (
            "Telegram POST URL: https://api.telegram.org/… (x)"
        ),
        "Max retries exceeded with url: /bot123456:ABCDEF/sendMessage": (
            "Max retries exceeded with url: /bot123456:…/sendMessage"  # (the bot's id is no secret)
        ),
        "a push service did not accept a question": "a push service did not accept a question",  # words stay
    }
    for line, masked in lines.items():
        assert mask(line) == masked


TOKEN = st.text(string.ascii_letters + string.digits + "-_", min_size=MIN_PART, max_size=40)


@given(token=TOKEN, other=TOKEN, around=st.sampled_from(["{}", "'{}'", "x {} y", "/{}/", "topic={}&", "({})"]))
def test_a_secret_part_never_survives_masking(token: str, other: str, around: str) -> None:
    assume(token not in "ntfy.example mail.example")  # (the host names are shown)
    urls = [f"ntfys://ntfy.example/{token}", f"tgram://{other}:{token}/1", f"mailto://u:{token}@mail.example"]
    mask = Masker(urls)
    for url in urls:
        assert token not in mask_url(url)
        assert token in secret_parts(url)
        for text in (around.format(token), f"sent to {url} and {around.format(token)}", url):
            assert token not in mask(text)


def test_config_prints_no_secret(tmp_path: Path) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[push]\nurls = {URLS!r}\n".replace("'", '"'))
    done = cli("config", "--config", str(config))
    assert done.returncode == 0, done.stderr
    assert 'push.urls = ["ntfys://ntfy.example/…", "tgram://…"]' in done.stdout
    assert not [s for s in SECRETS if s in done.stdout + done.stderr]


class Refuse(http.server.BaseHTTPRequestHandler):
    def refuse(self) -> None:
        self.send_response(403)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_CONNECT = refuse  # noqa: N815 (http.server's names)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def proxy() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_apprise_records_keep_no_secret_on_stderr_nor_in_the_log(
    tmp_path: Path, proxy: str, verbose: bool
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(f"[push]\nurls = {[*URLS, PLAIN]!r}\nafter = 0\n".replace("'", '"'))
    sessions = tmp_path / "s"
    append(sessions / "--p--" / "a.jsonl", header("/home/u/p"), user(), ask("c1", "Ship it?"))
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("no_proxy", "all_proxy", "display")}
    env.update({"HTTPS_PROXY": proxy, "HTTP_PROXY": proxy, "https_proxy": proxy, "http_proxy": proxy})
    env.pop("DBUS_SESSION_BUS_ADDRESS", None)
    args = ["run", "--no-tray", "--json", "--liveness", "off", "--config", str(config), "--sessions-dir", str(sessions)]
    with AppProcess(*args, *(["-v"] if verbose else []), env=env) as app:
        app.wait("ready")
        # each URL is pushed on its own, in turn (the plain one last): stopped only once each spoke
        for fragment in ("Telegram", "Failed to send ntfy notification to topic '…'"):
            app.log_has(fragment, timeout=30)
        app.log_has("a push service did not accept a question", timeout=30)
    log = (Path(os.environ["XDG_STATE_HOME"]) / "pi-notifier" / "pi-notifier.log").read_text()
    stderr = "\n".join(app.stderr)
    # apprise did speak (about each service), so there was something to leak
    assert "Telegram" in stderr and "Failed to send ntfy notification to topic '…'" in stderr
    assert "Failed to send ntfy notification to topic '…'" in log
    if verbose:
        assert "ntfys://ntfy.example/…" in stderr  # its "Loaded ntfy URL" line, masked
    secrets = [*SECRETS, "plain-http-topic"]
    assert not [s for s in secrets if s in stderr], stderr
    assert not [s for s in secrets if s in log], log
