"""The Server panel, Deploy and the Test inference panel as a user drives them (offscreen Qt, real key and mouse
events) against the real embedded Triton and the real Docker engine (CPU image)."""

from __future__ import annotations

import html
import os
import shutil
import signal
import socket
import time

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QMessageBox, QVBoxLayout, QWidget

from tests.conftest import REPO, scaled, scaled_s
from tests.runtime.helpers import DEMO, add_python_model

ARTIFACTS = REPO / "test-artifacts"
BAD = "  preferred_batch_size: [ 128 ]\n"


@pytest.fixture
def settings(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    shutil.copytree(DEMO, r)
    add_python_model(r, "broken", "import torch_that_is_not_installed")
    return r


@pytest.fixture
def host(qtbot, settings):
    """A window-like host: the server panel and the deploy panel, with the Ctrl+D action, at 1280x800."""
    from studio.ui.server.deploy_panel import DeployController, DeployPanel, make_deploy_action
    from studio.ui.server.server_panel import ServerPanel

    w = QWidget()
    w.server = ServerPanel()
    w.controller = DeployController(w.server)
    w.deploy = DeployPanel(w.controller)
    lay = QVBoxLayout(w)
    lay.addWidget(w.deploy, 3)
    lay.addWidget(w.server, 2)
    w.action = make_deploy_action(w, w.deploy.trigger)
    w.addAction(w.action)
    w.resize(1280, 800)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    yield w
    t = w.server.shutdown()
    if t is not None:
        t.join(30)


def shot(widget, name: str, dark_too: bool = False) -> None:
    """A screenshot for people to look at; with dark_too, also one under a dark palette (name-dark.png)."""
    ARTIFACTS.mkdir(exist_ok=True)
    widget.grab().save(str(ARTIFACTS / name))
    if dark_too:
        from PySide6.QtGui import QColor, QPalette

        before = widget.palette()
        pal = QPalette(before)
        for role, colour in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.Base, "#1e1e1e"),
                             (QPalette.ColorRole.AlternateBase, "#262626"), (QPalette.ColorRole.Text, "#e0e0e0"),
                             (QPalette.ColorRole.WindowText, "#e0e0e0"), (QPalette.ColorRole.Button, "#3a3a3a"),
                             (QPalette.ColorRole.ButtonText, "#e0e0e0"), (QPalette.ColorRole.PlaceholderText, "#9e9e9e")):
            pal.setColor(role, QColor(colour))
        widget.setPalette(pal)
        widget.grab().save(str(ARTIFACTS / name.replace(".png", "-dark.png")))
        widget.setPalette(before)


def ctrl_d(qtbot, w, timeout_ms: int):
    with qtbot.waitSignal(w.controller.sig_finished, timeout=timeout_ms) as blocker:
        QTest.keyClick(w, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    return blocker.args[0]


def test_deploy_refuses_invalid_then_reaches_ready_tests_shows_reasons_and_sees_a_kill(qtbot, host, repo):
    w = host
    cfg = repo / "add_sub" / "config.pbtxt"
    on_disk = cfg.read_text()
    doc = {"text": on_disk.replace("  max_queue_delay_microseconds: 100\n", "  max_queue_delay_microseconds: 100\n" + BAD)}
    saved = []

    def save():
        cfg.write_text(doc["text"])
        saved.append(1)

    w.deploy.target = lambda: (repo, "add_sub", doc["text"], save)
    # 1. a validation error: refused, nothing saved, no server started
    res = ctrl_d(qtbot, w, scaled(20000))
    assert not res.ok and res.step == "validate" and saved == [] and cfg.read_text() == on_disk
    assert w.server.runtime is None and w.server.state == "stopped"
    assert "nothing was sent to the server" in w.deploy.outcome.text()
    assert w.deploy.findings.count() == 1 and w.deploy.findings.item(0).text().startswith("line 34:")
    with qtbot.waitSignal(w.controller.sig_goto_line, timeout=scaled(2000)) as line:
        item = w.deploy.findings.item(0)
        QTest.mouseClick(w.deploy.findings.viewport(), Qt.MouseButton.LeftButton,
                         pos=w.deploy.findings.visualItemRect(item).center())
    assert line.args == [34]
    shot(w, "deploy_refused.png")
    # 2. fixed: Ctrl+D starts the (remembered: embedded) server, loads, READY, test inference
    doc["text"] = on_disk.replace("max_queue_delay_microseconds: 100", "max_queue_delay_microseconds: 300")
    t0 = time.monotonic()
    res = ctrl_d(qtbot, w, scaled(120000))
    assert res.ok, res.error
    print(f"GUI deploy: Ctrl+D to READY {time.monotonic() - t0:.2f} s (load to READY {res.time_to_ready_s:.2f} s)")
    assert saved == [1] and "max_queue_delay_microseconds: 300" in cfg.read_text()
    assert w.server.state == "ready" and w.server.runtime.kind == "embedded"
    assert "READY in" in w.deploy.outcome.text()
    # typed inputs: INPUT0 = 0..15, INPUT1 = 2 everywhere; Run
    t = w.deploy.test.input_table
    rows = {t.item(r, 0).text(): r for r in range(t.rowCount())}
    t.item(rows["INPUT0"], 3).setText(", ".join(str(i) for i in range(16)))
    t.item(rows["INPUT1"], 3).setText("2")
    with qtbot.waitSignal(w.deploy.test.sig_result, timeout=scaled(20000)) as got:
        QTest.mouseClick(w.deploy.test.run_button, Qt.MouseButton.LeftButton)
    out = got.args[0].outputs
    assert out["OUTPUT0"].reshape(-1).tolist() == [float(i + 2) for i in range(16)]
    assert out["OUTPUT1"].reshape(-1).tolist() == [float(i - 2) for i in range(16)]
    o = w.deploy.test.output_table
    shown = {o.item(r, 0).text(): [o.item(r, c).text() for c in range(1, 4)] for r in range(o.rowCount())}
    assert shown["OUTPUT0"][:2] == ["[1, 16]", "float32"] and shown["OUTPUT0"][2].startswith("2, 3, 4")
    assert "latency of this call:" in w.deploy.test.latency.text()
    # model states: add_sub READY (from the repository index), the others not loaded
    qtbot.waitUntil(lambda: (w.server.models.row("add_sub") or [""] * 3)[2] == "READY", timeout=scaled(5000))
    assert w.server.models.row("batched_sleep")[2] == "not loaded"
    # the row's context actions: load batched_sleep, then unload it
    load, unload, reload = w.server.models.actions_for("batched_sleep")
    assert load.isEnabled() and not unload.isEnabled() and not reload.isEnabled()
    load.trigger()
    qtbot.waitUntil(lambda: (w.server.models.row("batched_sleep") or [""] * 3)[2] == "READY", timeout=scaled(10000))
    w.server.models.actions_for("batched_sleep")[1].trigger()
    qtbot.waitUntil(lambda: (w.server.models.row("batched_sleep") or [""] * 3)[2] == "not loaded", timeout=scaled(10000))
    shot(w, "deploy_ready.png", dark_too=True)
    # the banner: the file now differs from what the server runs
    from studio.ui.server.config_banner import ConfigDriftBanner

    banner = ConfigDriftBanner()
    w.layout().insertWidget(0, banner)  # above the editor in the studio; here above the deploy panel
    changed = doc["text"].replace("max_queue_delay_microseconds: 300", "max_queue_delay_microseconds: 900")
    with qtbot.waitSignal(banner.sig_checked, timeout=scaled(10000)) as checked:
        banner.check(w.server.runtime, "add_sub", changed)
    assert [p for p, _a, _b in checked.args[0]] == ["dynamic_batching.max_queue_delay_microseconds"]
    assert not banner.isHidden() and "older config" in banner.text.text()
    with qtbot.waitSignal(banner.sig_show_diff, timeout=scaled(2000)) as diff:
        QTest.mouseClick(banner.diff_button, Qt.MouseButton.LeftButton)
    assert "max_queue_delay_microseconds: 300" in diff.args[1]
    with qtbot.waitSignal(banner.sig_checked, timeout=scaled(10000)) as checked:
        banner.check(w.server.runtime, "add_sub", doc["text"])
    assert checked.args[0] == [] and banner.isHidden()
    # 3. a model Triton refuses: Triton's reason in the deploy panel and in the model states
    w.deploy.target = lambda: (repo, "broken", None, None)
    res = ctrl_d(qtbot, w, scaled(60000))
    assert not res.ok and res.step == "load"
    assert "No module named 'torch_that_is_not_installed'" in html.unescape(w.deploy.outcome.text())
    qtbot.waitUntil(lambda: (w.server.models.row("broken") or [""] * 4)[2] == "UNAVAILABLE", timeout=scaled(5000))
    assert "torch_that_is_not_installed" in w.server.models.row("broken")[3]
    states = []
    with qtbot.waitSignal(w.server.presenter.sig_model_states, timeout=scaled(5000)) as st:
        w.server.presenter.refresh()
    states = st.args[0]
    assert states["broken"].state == "UNAVAILABLE" and states["add_sub"].state == "READY"
    shot(w, "deploy_refused_by_triton.png", dark_too=True)
    # 4. the server process killed: seen within 2 s, never "ready" again, Restart offered
    pid = w.server.runtime.pid
    t0 = time.monotonic()
    os.killpg(pid, signal.SIGKILL)
    qtbot.waitUntil(lambda: w.server.state == "exited", timeout=scaled(2000))
    elapsed = time.monotonic() - t0
    print(f"GUI: server kill detected in {elapsed * 1000:.0f} ms")
    assert elapsed < scaled_s(2)
    assert "exit code -9" in w.server.status.text() and not w.server.status.text().startswith("ready")
    assert not w.server.ready and w.server.restart_button.isEnabled()
    assert w.server.models.tree.topLevelItemCount() == 0  # no stale READY rows
    shot(w, "server_dead.png", dark_too=True)
    with qtbot.waitSignal(w.server.sig_state_changed, timeout=scaled(60000), check_params_cb=lambda s: s == "ready"):
        QTest.mouseClick(w.server.restart_button, Qt.MouseButton.LeftButton)
    assert w.server.ready


def test_closing_the_window_with_a_running_server_does_not_stall(qtbot, window, repo):
    """The real studio window: close it with the embedded server running; the UI thread stalls < 100 ms and the
    server is stopped in the background."""
    with qtbot.waitSignal(window.server.sig_state_changed, timeout=scaled(120000), check_params_cb=lambda s: s == "ready"):
        window.server.start(str(repo), "embedded")
    rt = window.server.runtime
    pid = rt.pid
    # a dashboard run that uses the server makes the shell ask first
    assert window.server.close_question() is None
    window.server.acquire("dashboard", "a tuning run on add_sub")
    assert "a tuning run on add_sub" in window.server.close_question()
    window.server.release("dashboard")
    gaps = []
    last = [time.perf_counter()]

    def beat():
        now = time.perf_counter()
        gaps.append(now - last[0])
        last[0] = now

    timer = QTimer()
    timer.setInterval(5)
    timer.timeout.connect(beat)
    timer.start()
    qtbot.wait(50)
    t0 = time.perf_counter()
    window.close()
    stall = time.perf_counter() - t0
    qtbot.wait(200)
    timer.stop()
    print(f"GUI: window close with a running server: close() {stall * 1000:.1f} ms, longest event-loop gap "
          f"{max(gaps) * 1000:.1f} ms")
    assert stall < 0.1 and max(gaps) < 0.1
    for t in window.server._shutdown_threads:
        t.join(scaled_s(30))
    assert rt.status.value == "stopped"
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0) if not _zombie(pid) else (_ for _ in ()).throw(ProcessLookupError())


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] == "Z"
    except OSError:
        return True


def test_log_view_filters_colours_and_stays_bounded(qtbot):
    from studio.ui.server.log_view import LogView, severity

    v = LogView(max_lines=1000, history=2000)
    qtbot.addWidget(v)
    for i in range(5000):
        v.append_line(f"I1203 08:00:00.000 1 x.cc:1] line {i}")
    v.append_line('E1203 08:00:01.000 1 model_lifecycle.cc:1] "failed to load \'broken\'"')
    v.flush()
    assert v.text.blockCount() <= 1000 and len(v._history) <= 2000
    assert "line 4999" in v.shown_text() and "line 10\n" not in v.shown_text()
    QTest.keyClicks(v.filter, "broken")
    assert v.shown_text().count("\n") == 0 and "failed to load" in v.shown_text()
    assert severity('E1203 x] "failed"') == "error" and severity("W1203 x] w") == "warning"
    assert severity("studio: note") == "studio" and severity("I1203 x] ok") == "info"
    QTest.mouseClick(v.copy_button, Qt.MouseButton.LeftButton)
    assert "failed to load" in QApplication.clipboard().text()


def _click_box_button(qtbot, panel, text: str) -> str:
    qtbot.waitUntil(lambda: panel.pull_question is not None, timeout=scaled(20000))
    box: QMessageBox = panel.pull_question
    question = box.text()
    button = next(b for b in box.buttons() if b.text().replace("&", "") == text)
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    return question


@pytest.fixture
def docker_panel(qtbot, settings):
    from studio.runtime.docker_runtime import docker_client
    from studio.ui.server.server_panel import ServerPanel

    client = docker_client()
    tag = (REPO / ".cpu-image-tag").read_text().strip()
    p = ServerPanel()
    p.resize(1280, 800)
    qtbot.addWidget(p)
    p.show()
    p.kind.setCurrentIndex(1)  # Docker: lists the local images
    qtbot.waitUntil(lambda: p.image.findData(tag) >= 0, timeout=scaled(20000))
    yield p, client, tag
    t = p.shutdown()
    if t is not None:
        t.join(30)


def test_docker_pull_asks_first_can_be_cancelled_and_an_unreachable_registry_is_a_clear_error(qtbot, docker_panel, repo):
    p, _client, tag = docker_panel
    p.registry_timeout_s = 1.0  # the hung registry below never answers: ask after 1 s instead of 5
    assert not p.gpus.isEnabled() and "no NVIDIA runtime" in p.engine.text() and tag in p.engine.text()
    shot(p, "server_docker_options.png")
    # a registry that accepts connections and never answers: the pull hangs for real until cancelled
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        image = f"127.0.0.1:{s.getsockname()[1]}/studio/never:1"
        p.image.setEditText(image)
        p.repository = str(repo)
        QTest.mouseClick(p.start_button, Qt.MouseButton.LeftButton)
        # declining: nothing is pulled
        question = _click_box_button(qtbot, p, "Cancel")
        assert image in question and "Pull it now?" in question
        qtbot.waitUntil(lambda: p.state == "stopped", timeout=scaled(5000))
        assert "was not pulled" in p.status.text()
        QTest.mouseClick(p.start_button, Qt.MouseButton.LeftButton)
        _click_box_button(qtbot, p, "Pull")
        qtbot.waitUntil(lambda: p.state == "pulling" and p.pull_box.isVisible(), timeout=scaled(5000))
        shot(p, "server_pulling.png")
        QTest.mouseClick(p.pull_box.cancel_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: p.state == "failed", timeout=scaled(5000))
        assert "cancelled" in p.status.text() and not p.pull_box.isVisible()
    # NGC's image, no registry reachable: asked first (with NGC's typical size), then one clear error
    from studio.runtime.images import DEFAULT_SUGGESTION

    p.image.setEditText(DEFAULT_SUGGESTION)
    QTest.mouseClick(p.start_button, Qt.MouseButton.LeftButton)
    question = _click_box_button(qtbot, p, "Pull")
    assert "10–20 GB" in question and "could not be asked" in question
    qtbot.waitUntil(lambda: p.state == "failed", timeout=scaled(30000))
    assert "registry cannot be reached" in p.status.text() and "Traceback" not in p.status.text()


def test_docker_container_starts_then_a_container_kill_is_seen_within_2s(qtbot, docker_panel, repo):
    p, client, tag = docker_panel
    p.image.setCurrentIndex(p.image.findData(tag))
    with qtbot.waitSignal(p.sig_state_changed, timeout=scaled(120000), check_params_cb=lambda s: s in ("ready", "failed")):
        p.start(str(repo), "docker")
    assert p.state == "ready", p.status.text()
    assert "docker Triton" in p.status.text()
    qtbot.waitUntil(lambda: (p.models.row("add_sub") or [""] * 3)[2] == "READY", timeout=scaled(10000))
    container = p.runtime.container
    t0 = time.monotonic()
    container.kill()
    qtbot.waitUntil(lambda: p.state == "exited", timeout=scaled(2000))
    print(f"GUI: container kill detected in {(time.monotonic() - t0) * 1000:.0f} ms")
    assert "exit code 137" in p.status.text() and p.restart_button.isEnabled()
