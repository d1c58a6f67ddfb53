"""pi-notifier on real desktops: GNOME Shell 43 (headless Wayland, AppIndicator extension), XFCE
4.18 (xfce4-notifyd, xfce4-panel's systray) and KDE Plasma 5.27 (plasmashell, kded5's watcher).

On each: the notification arrives with the actions chosen for that server (read back from the
server: GNOME's banner, xfce4-notifyd's log, Plasma's popup) and is withdrawn when the question
is answered; one click is one action; the tray icon registers with the desktop's
StatusNotifierWatcher, changes with the count, and its menu works over dbusmenu (no pointer).
Each desktop starts once per module (GNOME 0.9 s, XFCE 0.3 s, KDE 1.1 s here). On KDE a real pi 1.6
in tmux is answered with text typed into the notification."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ..app_process import AppProcess
from ..conftest import wait_for
from ..live.pi_harness import Tmux, model, need, start_pi, tmux_server  # noqa: F401  (fixtures)
from ..writer import answer, append, ask, header, user
from . import desktops
from .desktops import Desktop, Gnome, Kde, Xfce, menu_click, menu_layout, sni_items, sni_property
from .services import Monitor


def _start(kind: str, cls: type[Desktop], tmp: pytest.TempPathFactory) -> Iterator[Any]:
    gone = desktops.missing(kind)
    if gone:
        from .conftest import require

        require(*gone)  # skips, or fails with NOTIFIER_REQUIRE_DESKTOP=1
    desk = cls(tmp.mktemp(kind))
    try:
        yield desk
    finally:
        desk.stop()


@pytest.fixture(scope="module")
def gnome(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gnome]:
    yield from _start("gnome", Gnome, tmp_path_factory)


@pytest.fixture(scope="module")
def xfce(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Xfce]:
    yield from _start("xfce", Xfce, tmp_path_factory)


@pytest.fixture(scope="module")
def kde(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kde]:
    yield from _start("kde", Kde, tmp_path_factory)


def _env(desk: Desktop) -> dict[str, str]:
    """The app's environment there: the desktop's bus and display, this test's private folders."""
    mine = ("HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR")
    return dict(desk.env, **{k: os.environ[k] for k in mine if k in os.environ})


def _app(desk: Desktop, sessions: Path, *extra: str, tray: bool = False) -> AppProcess:
    args = ["run", "--json", "-v", "--liveness", "off", "--sessions-dir", str(sessions), *extra]
    if not tray:
        args.append("--no-tray")
    return AppProcess(argv=[sys.executable, "-m", "notifier", *args], env=_env(desk))


def _sni(tmp_path: Path) -> tuple[str, str]:
    """The app's arguments for a StatusNotifierItem tray (appindicator) where its default is
    another (XFCE's panel: gtk)."""
    cfg = tmp_path / "sni.toml"
    cfg.write_text('[tray]\nbackend = "appindicator"\n')
    return "--config", str(cfg)


def _session(root: Path, project: str) -> Path:
    f = root / f"--home-dev-{project}--" / "s.jsonl"
    append(f, header(f"/home/dev/{project}"), user())
    return f


def _lines(app: AppProcess, fragment: str) -> list[str]:
    with app._lock:
        return [line for line in app.stderr if fragment in line]


def _ours(desk: Desktop, monitor: Monitor, project: str) -> dict[str, Any]:
    (n,) = wait_for(
        lambda: [n for n in monitor.notifies() if n["summary"] == f"{project} needs an answer"],
        20,
        f"{desk.name}: the Notify call",
    )
    return n


@pytest.fixture
def monitor_on(request: pytest.FixtureRequest) -> Iterator[Any]:
    made: list[Monitor] = []

    def make(desk: Desktop) -> Monitor:
        m = Monitor(desk.env["DBUS_SESSION_BUS_ADDRESS"])
        made.append(m)
        return m

    try:
        yield make
    finally:
        for m in made:
            m.close()


def _doctor(desk: Desktop, tmp_path: Path) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "notifier", "doctor", "--sessions-dir", str(tmp_path)],
        env=_env(desk), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    (line,) = [x for x in done.stdout.splitlines() if "] notifications:" in x]
    return line


@pytest.mark.parametrize(
    ("kind", "says"),
    [
        ("gnome", "gnome-shell 43"),
        ("xfce", "Xfce Notify Daemon 0.7"),
        ("kde", "Plasma 5.27"),
    ],
)
def test_doctor_says_what_notifications_offer_on_each(
    tmp_path: Path, kind: str, says: str, request: pytest.FixtureRequest
) -> None:
    desk = request.getfixturevalue(kind)
    line = _doctor(desk, tmp_path)
    assert line.startswith(f"[ok  ] notifications: dbus — {says}"), line
    there = {
        "gnome": "there: a click goes to the session; at most 3 buttons",
        "xfce": "there: 'Go to session' is a button (a click on the bubble only dismisses it)",
        "kde": "at most 3 buttons, the most useful first; free-text answers typed into the notification",
    }[kind]
    assert there in line, line


# ---- GNOME ----


def test_gnome_banner_shows_three_buttons_the_most_useful_and_withdraws(tmp_path: Path, gnome: Gnome) -> None:
    f = _session(tmp_path, "gshop")
    with _app(gnome, tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", "Deploy now?", options=["Yes", "No"]))

        def banner() -> list[str] | None:
            mine = [n for n in gnome.shown() if n["title"] == "gshop needs an answer"]
            return mine[0]["buttons"] if mine and mine[0]["buttons"] else None

        # the click goes to the session (not a button); 3 buttons, each label once
        assert wait_for(banner, 20, "GNOME's banner") == ["Yes", "No", "Show"]
        append(f, answer("q1"))
        app.wait("resolved")
        wait_for(
            lambda: not [n for n in gnome.shown() if n["title"] == "gshop needs an answer"], 20, "withdrawn"
        )
        assert app.stop() == 0
    assert not _lines(app, "Traceback")


def test_gnome_one_click_is_one_action(tmp_path: Path, gnome: Gnome) -> None:
    """GNOME's shell broadcasts a click that its notification service (the owner) sends again."""
    f = _session(tmp_path, "gclick")
    with _app(gnome, tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", args={"question": "Free text only?"}))
        title = "gclick needs an answer"

        def banner() -> list[str] | None:
            mine = [n for n in gnome.shown() if n["title"] == title]
            return mine[0]["buttons"] if mine and mine[0]["buttons"] else None

        assert wait_for(banner, 20, "GNOME's banner") == ["Show", "Snooze 15 min"]
        gnome.click(title)  # the banner itself: the default action, go to the session
        app.log_has("goto: ")
        gnome.press(title, "Snooze 15 min")
        app.log_has("snoozed 1 session")
        wait_for(lambda: not [n for n in gnome.shown() if n["title"] == title], 20, "snoozed: closed")
        assert app.stop() == 0
    assert len(_lines(app, "goto: ")) == 1, app.stderr
    assert len(_lines(app, "snoozed 1 session")) == 1, app.stderr


def test_gnome_tray_appears_changes_with_the_count_and_its_menu_works(tmp_path: Path, gnome: Gnome) -> None:
    _tray_case(tmp_path, gnome, lambda: bool(gnome.tray_items()))  # (no screenshots without a portal)


# ---- XFCE ----


def test_xfce_gets_one_go_to_session_button_and_withdraws(
    tmp_path: Path, xfce: Xfce, monitor_on: Any
) -> None:
    f = _session(tmp_path, "xshop")
    monitor = monitor_on(xfce)
    with _app(xfce, tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", "Deploy now?", options=["Yes", "No"]))
        n = _ours(xfce, monitor, "xshop")

        def logged() -> list[Any] | None:
            mine = [e for e in xfce.logged() if e["summary"] == "xshop needs an answer"]
            return mine[-1]["actions"] if mine else None

        # the default is a button there (a click on the body only dismisses): "Go to session" once
        expected = [
            ("answer:1", "Yes"), ("answer:2", "No"), ("default", "Go to session"),
            ("show", "Show"), ("snooze", "Snooze 15 min"),
        ]  # fmt: skip
        assert wait_for(logged, 20, "xfce4-notifyd's log") == expected
        assert n["actions"] == [x for pair in expected for x in pair]
        wait_for(lambda: xfce.bubbles(), 20, "the bubble on screen")
        append(f, answer("q1"))
        app.wait("resolved")
        wait_for(lambda: not xfce.bubbles(), 20, "withdrawn")
        assert app.stop() == 0


def test_xfce_a_click_on_go_to_session_goes_there_once(tmp_path: Path, xfce: Xfce) -> None:
    f = _session(tmp_path, "xclick")
    with _app(xfce, tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", args={"question": "Where am I?"}))
        wait_for(lambda: len(xfce.bubbles()) == 1, 20, "the bubble")
        xfce.press(0, 3)  # Go to session | Show | Snooze 15 min: a real click (xdotool)
        app.log_has("goto: ")
        assert app.stop() == 0
    assert len(_lines(app, "goto: ")) == 1, app.stderr


def test_xfce_tray_appears_changes_with_the_count_and_its_menu_works(tmp_path: Path, xfce: Xfce) -> None:
    """(With tray.backend = "appindicator": the default there is gtk, an XEmbed icon.)"""
    _tray_case(tmp_path, xfce, lambda: _screen_red(xfce, (0, 0, 1280, 30)) > 50, *_sni(tmp_path))  # the panel, on top


def test_xfce_panel_is_told_only_the_labels_that_change_at_an_age_tick(tmp_path: Path, xfce: Xfce) -> None:
    """XFCE's panel re-reads the whole menu at each LayoutUpdated (an open menu closes). With a
    question 55 s old, from the menu showing it "(<1 min)" until it shows "(1 min)" (about 5 s,
    a UI tick a second before), the item sends no LayoutUpdated (the menu's revision stays) and
    one ItemsPropertiesUpdated: the new label of the two entries that show that question. (With
    tray.backend = "appindicator", as a user may choose there; the default is gtk.)"""
    import time

    f = _session(tmp_path, "xmenu")
    updates = Monitor(
        xfce.env["DBUS_SESSION_BUS_ADDRESS"], rules=("member='LayoutUpdated'", "member='ItemsPropertiesUpdated'")
    )
    try:
        with _app(xfce, tmp_path, "--no-notify", *_sni(tmp_path), tray=True) as app:
            app.wait("ready")
            (item,) = wait_for(lambda: sni_items(xfce), 30, "our item registered")

            def shown(age: str) -> int | None:
                """The menu's revision while it shows the question at ``age`` (else None)."""
                service, _ = desktops._split(item)
                menu = sni_property(xfce, item, "Menu")
                revision, (_, _, children) = xfce.call(
                    service, str(menu), "com.canonical.dbusmenu", "GetLayout", "iias", (0, -1, [])
                )
                labels = [str(c[1][1].get("label", ("s", ""))[1]) for c in children]
                return int(revision) if any(x.endswith(f"Fresh? ({age})") for x in labels) else None

            append(f, ask("q1", "Fresh?", at=time.time() - 55))
            young = wait_for(lambda: shown("<1 min"), 20, "the question in the menu, under a minute old")
            # (the signal of the layout read may reach the monitor after the read: counted from it on)
            wait_for(lambda: any(int(r) >= young for r, _ in updates.of("LayoutUpdated")), 10, "the layout's signal")
            layouts, props = len(updates.of("LayoutUpdated")), len(updates.of("ItemsPropertiesUpdated"))
            old = wait_for(lambda: shown("1 min"), 20, "its first minute in the menu")

            def labelled() -> list[list[str]]:  # the labels each ItemsPropertiesUpdated since then set
                sent = updates.of("ItemsPropertiesUpdated")[props:]
                labels = [[str(p["label"][1]) for _, p in changed if "label" in p] for changed, _ in sent]
                return [x for x in labels if x]

            wait_for(labelled, 5, "the signal seen by the monitor")
            assert old == young and len(updates.of("LayoutUpdated")) == layouts  # the same menu, not sent again
            assert labelled() == [["xmenu — Fresh? (1 min)"] * 2]  # its entry and Go to session's: once
            assert app.stop() == 0
    finally:
        updates.close()


def test_xfce_panel_a_click_on_the_icon_opens_the_window(tmp_path: Path, xfce: Xfce) -> None:
    """XFCE's panel holds both trays (XEmbed and the StatusNotifierWatcher): the app's default
    there is the gtk backend, whose icon the panel draws itself and whose left click reaches the
    app. A real click (xdotool) on the red icon in the panel opens the window."""
    from .conftest import require

    require("tkinter")
    f = _session(tmp_path, "xclickicon")
    with _app(xfce, tmp_path, "--no-notify", tray=True) as app:
        app.wait("ready")
        append(f, ask("q1", "Open me?"))
        x, y = wait_for(lambda: _red_spot(xfce, (0, 0, 1280, 30)), 20, "the needs-answer icon in the panel")
        assert not _big_windows(xfce)
        desktops.click(xfce.env, x, y)
        wait_for(lambda: _big_windows(xfce), 20, "the window after a left click on the icon")
        assert app.stop() == 0
    assert _lines(app, "tray: gtk"), app.stderr
    assert not _lines(app, "Traceback")


@pytest.mark.parametrize("backend", ["appindicator", "gtk"])
def test_xfce_panel_a_menu_left_open_stays_open_as_the_age_ticks(tmp_path: Path, xfce: Xfce, backend: str) -> None:
    """A question turns a minute while its menu is open on XFCE's panel (opened by a real click:
    the SNI item's left click, the GTK icon's right click): the same menu stays open and reads
    the new age. pystray builds a whole new menu at each change, which libappindicator makes
    the root of its dbusmenu (new ids, LayoutUpdated: the panel closed the open menu at each
    minute) and the gtk backend's open popup never read (it kept the old labels); the labels
    alone are now changed on the menu already built (compat.relabel). The tick is the
    question's: asked 45 s before, its first minute comes while the menu is open."""
    import time

    f = _session(tmp_path, f"xopen{backend}")
    cfg = tmp_path / "tray.toml"
    cfg.write_text(f'[tray]\nbackend = "{backend}"\n')
    updates = Monitor(xfce.env["DBUS_SESSION_BUS_ADDRESS"], rules=("member='LayoutUpdated'",))
    try:
        with _app(xfce, tmp_path, "--no-notify", "--config", str(cfg), tray=True) as app:
            app.wait("ready")
            asked = time.time() - 45
            append(f, ask("q1", "Still open?", at=asked))
            x, y = wait_for(lambda: _red_spot(xfce, (0, 0, 1280, 30)), 20, "the needs-answer icon in the panel")
            before = desktops.shown_windows(xfce.env, "--name", "")
            item = wait_for(lambda: sni_items(xfce), 20, "our item registered")[0] if backend == "appindicator" else ""

            def settled() -> list[Any] | None:
                """The menu as the panel has it once the question's changes reached it: its entry
                there, no new layout for a moment (a layout sent after the click closes the menu)."""
                with updates.lock:
                    last = updates.times[-1] if updates.times else 0.0
                layout = menu_layout(xfce, item)
                fresh = time.monotonic() - last < 0.3
                return None if fresh or not any(label.endswith("Still open? (<1 min)") for _, label, _ in layout) else layout

            layout = wait_for(settled, 20, "the menu with the question, settled") if item else []
            subprocess.run(
                ["xdotool", "mousemove", str(x), str(y), "click", "1" if item else "3"],
                env=xfce.env, check=True, timeout=10,
            )  # fmt: skip

            def opened() -> tuple[str, tuple[int, int, int, int]] | None:
                shown = desktops.shown_windows(xfce.env, "--name", "")
                new = [(w, g) for w, g in shown.items() if w not in before and g[1] >= 30 and g[3] > 50]
                return new[0] if len(new) == 1 else None

            menu, box = wait_for(opened, 20, "the menu open below the panel")
            young = desktops.still_part(xfce.env, box)
            sent = len(updates.of("LayoutUpdated"))
            assert time.time() < asked + 59, "the menu opened after the tick: nothing to see"
            assert any(label.endswith("Still open? (<1 min)") for _, label, _ in layout) or not item
            wait_for(lambda: desktops.screen_part(xfce.env, box) != young, 40, "the open menu drawn anew at the tick")
            now = desktops.still_part(xfce.env, box)
            assert menu in desktops.shown_windows(xfce.env, "--name", ""), "the menu closed at the tick"
            assert now != young
            if item:  # the same dbusmenu (its ids), not sent again whole; the entry reads the new age
                after = menu_layout(xfce, item)
                assert [i for i, _, _ in after] == [i for i, _, _ in layout]
                assert any(label.endswith("Still open? (1 min)") for _, label, _ in after), after
                assert len(updates.of("LayoutUpdated")) == sent
            assert app.stop() == 0
        assert xfce.procs and all(p.poll() is None for p in xfce.procs), "a desktop process ended"
        assert _lines(app, f"tray: {backend}") and not _lines(app, "Traceback")
    finally:
        updates.close()


def _big_windows(desk: Desktop) -> list[tuple[int, int, int, int]]:
    """The app's windows bigger than a tray icon (its window)."""
    return [g for g in desktops.x_windows(desk.env, "pi-notifier") if g[2] > 100 and g[3] > 100]


def _red_spot(desk: Desktop, box: tuple[int, int, int, int]) -> tuple[int, int] | None:
    """The middle of the needs-answer red in part of the X screen (None: under 50 pixels)."""
    import io

    from PIL import Image

    from notifier.outputs.tray import COLORS

    from .test_tray import pixels

    png = subprocess.run(
        ["import", "-window", "root", "png:-"], capture_output=True, env=desk.env, timeout=20
    ).stdout
    if not png:
        return None
    img = Image.open(io.BytesIO(png)).convert("RGB").crop(box)
    r0, g0, b0 = COLORS["needs"][:3]
    spots = [
        (i % img.width, i // img.width)
        for i, (r, g, b) in enumerate(pixels(img))
        if abs(r - r0) < 40 and abs(g - g0) < 40 and abs(b - b0) < 40
    ]
    if len(spots) < 50:
        return None
    xs, ys = [p[0] for p in spots], [p[1] for p in spots]
    return box[0] + (min(xs) + max(xs)) // 2, box[1] + (min(ys) + max(ys)) // 2


# ---- KDE Plasma ----


def test_kde_one_row_of_buttons_and_withdraws(tmp_path: Path, kde: Kde, monitor_on: Any) -> None:
    f = _session(tmp_path, "kshop")
    monitor = monitor_on(kde)
    with _app(kde, tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", "Deploy now?", options=["Yes", "No"]))
        n = _ours(kde, monitor, "kshop")
        # the click is the default; one row of 3 (the answers first, then the reply field)
        assert n["actions"] == [
            "default",
            "Go to session",
            "answer:1",
            "Yes",
            "answer:2",
            "No",
            "inline-reply",
            "Answer…",
        ]
        assert n["hints"]["x-kde-reply-submit-button-text"] == ("s", "Send answer")
        wait_for(lambda: kde.popups(), 20, "Plasma's popup")
        append(f, answer("q1"))
        app.wait("resolved")
        wait_for(lambda: not kde.popups(), 20, "withdrawn")
        assert app.stop() == 0


def test_kde_a_reply_typed_into_the_notification_is_answered_as_answer_text(
    tmp_path: Path, kde: Kde, monitor_on: Any
) -> None:
    monitor = monitor_on(kde)
    f = _session(tmp_path, "kreply")
    with _app(kde, tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", args={"question": "What should the release be called?"}))
        n = _ours(kde, monitor, "kreply")
        assert n["actions"][:4] == ["default", "Go to session", "inline-reply", "Answer…"]
        x, y, w, h = kde.settled_popup()
        # Show | Snooze 15 min | Answer… along the bottom right: the field opens, type, Enter
        _reply(kde, (x, y, w, h), "Bold Badger")
        wait_for(
            lambda: [b for b in monitor.of("NotificationReplied") if b[1] == "Bold Badger"], 20, "the reply"
        )
        line = app.log_has("answer: ")  # the app's answer path, as `pi-notifier answer --text`
        assert app.stop() == 0
    assert len(_lines(app, "answer: ")) == 1, app.stderr
    assert "Traceback" not in "".join(app.stderr), line


def test_kde_a_reply_answers_a_real_pi_and_the_notification_goes(
    tmp_path: Path,
    kde: Kde,
    monitor_on: Any,
    tmux_server: Tmux,  # noqa: F811  (a fixture)
    model: int,  # noqa: F811  (a fixture: the scripted model's port)
) -> None:
    """pi 1.6 in tmux asks (its question tool, two options and a free-text row): the answer typed
    into Plasma's notification is pi's answer, as `pi-notifier answer --text` gives it."""
    v = need("1.6.0")
    pi = start_pi(tmp_path, v, model, v.example("question.ts"), server=tmux_server)
    monitor = monitor_on(kde)
    args = ["run", "--json", "-v", "--no-tray", "--sessions-dir", str(pi.sessions)]
    with AppProcess(argv=[sys.executable, "-m", "notifier", *args], env=_env(kde)) as app:
        app.wait("ready")
        pi.ask("Enter to select")
        (n,) = wait_for(
            lambda: [n for n in monitor.notifies() if "needs an answer" in n["summary"]], 30, "Notify"
        )
        assert n["actions"][4:] == ["answer:2", "SQLite", "inline-reply", "Answer…"], n["actions"]
        x, y, w, h = kde.settled_popup()
        _reply(kde, (x, y, w, h), "DuckDB, please")
        (done,) = app.wait("resolved", timeout=40)
        assert done["outcome"] == "answered" and done["answer"] == "User wrote: DuckDB, please", done
        wait_for(lambda: not kde.popups(), 20, "the notification withdrawn")
        # (the answer's own word comes after its check that no later question got a key)
        app.log_has("answer: answered")
        assert app.stop() == 0
    assert len(_lines(app, "answer: answered")) == 1, app.stderr


def _reply(kde: Kde, box: tuple[int, int, int, int], text: str) -> None:
    """The user clicks the popup's reply button (bottom right), types ``text`` and Enter."""
    x, y, w, h = box
    subprocess.run(["xdotool", "mousemove", str(x + w - 40), str(y + h - 20)], env=kde.env, check=True)
    before = desktops.still_part(kde.env, box)  # (the button under the pointer drawn hovered)
    subprocess.run(["xdotool", "click", "1"], env=kde.env, check=True)
    wait_for(lambda: desktops.screen_part(kde.env, box) != before, 20, "the reply field to open")
    desktops.still_part(kde.env, box)
    desktops.type_text(kde.env, text)


def test_kde_a_click_on_the_popup_goes_to_the_session_once(tmp_path: Path, kde: Kde, monitor_on: Any) -> None:
    monitor = monitor_on(kde)
    f = _session(tmp_path, "kclick")
    with _app(kde, tmp_path) as app:
        app.wait("ready")
        append(f, ask("q1", "Where was I?", options=["Here", "There"]))
        _ours(kde, monitor, "kclick")
        x, y, w, h = kde.settled_popup()
        desktops.click(kde.env, x + w // 2, y + 45)  # on its text (Plasma sends ActivationToken first)
        wait_for(lambda: [b for b in monitor.of("ActionInvoked") if b[1] == "default"], 20, "ActionInvoked")
        app.log_has("goto: ")
        assert app.stop() == 0
    assert len(_lines(app, "goto: ")) == 1, app.stderr


def test_kde_tray_appears_changes_with_the_count_and_its_menu_works(tmp_path: Path, kde: Kde) -> None:
    _tray_case(tmp_path, kde, lambda: _screen_red(kde, (0, 756, 1280, 800)) > 50)  # the panel, at the bottom


# ---- the tray, the same on each ----


def _tray_case(tmp_path: Path, desk: Desktop, host_draws: Any, *extra: str) -> None:
    """The app's item registers with the desktop's watcher; its icon changes from none to one to
    two questions (the image the item names: red, with the count) and the desktop's tray draws
    it; its menu lists the question, and Quit (over dbusmenu, as the host sends it) ends the app."""
    f = _session(tmp_path, "tray")
    g = _session(tmp_path, "tray2")
    with _app(desk, tmp_path, "--no-notify", *extra, tray=True) as app:
        app.wait("ready")
        (item,) = wait_for(lambda: sni_items(desk), 30, f"{desk.name}: our item registered")

        def icon() -> tuple[str, Any] | None:
            """The file the item names now, and its image (pystray writes a new file per change
            and deletes the old one: None if it went in between)."""
            name = str(sni_property(desk, item, "IconName"))
            img = _image(name)
            return (name, img) if img is not None else None

        def changed(*before: tuple[str, Any]) -> tuple[str, Any] | None:
            now = icon()
            return now if now is not None and now[0] not in {b[0] for b in before} else None

        none = wait_for(icon, 20, "an icon")
        append(f, ask("q1", "Tray question one?"))
        one = wait_for(lambda: changed(none), 20, "the icon for one question")
        append(g, ask("q2", "Tray question two?"))
        two = wait_for(lambda: changed(none, one), 20, "the icon for two questions")
        assert _red(none[1]) == 0 and _red(one[1]) > 50 and _red(two[1]) > 50
        assert one[1].tobytes() != two[1].tobytes()  # the count in the badge
        wait_for(host_draws, 20, f"{desk.name}: its tray draws the needs-answer icon")
        wait_for(lambda: [e for e in menu_layout(desk, item) if "Tray question one" in e[1]], 20, "the menu")
        (quit_id,) = [e[0] for e in menu_layout(desk, item) if e[1] == "Quit"]
        menu_click(desk, item, quit_id)
        wait_for(lambda: app.proc.poll() is not None, 20, "the app quit from its menu")
        assert app.proc.returncode == 0
    assert not _lines(app, "Traceback")


def _image(name: str) -> Any:
    """The image an item's IconName names (None: no such file)."""
    from PIL import Image

    try:
        with Image.open(name) as img:
            return img.convert("RGB")
    except OSError:
        return None


def _red(img: Any, box: tuple[int, int, int, int] | None = None) -> int:
    """Pixels of the needs-answer red (in ``box``) of an RGB image."""
    from notifier.outputs.tray import COLORS

    from .test_tray import count

    return count(img.crop(box) if box else img, COLORS["needs"])


def _screen_red(desk: Desktop, box: tuple[int, int, int, int]) -> int:
    """Needs-answer red in part of the X screen (a screenshot: the tray host drew the icon)."""
    import io

    from PIL import Image

    png = subprocess.run(
        ["import", "-window", "root", "png:-"], capture_output=True, env=desk.env, timeout=20
    ).stdout
    return _red(Image.open(io.BytesIO(png)).convert("RGB"), box) if png else 0
