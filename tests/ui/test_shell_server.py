"""The shell wires deploy, model states and tuning together: Ctrl+T on an open model starts the embedded Triton,
opens the live dashboard, a change goes live, Keep writes it into the open config as one undo step; the browser
shows each model's state on the server; closing the window while a dashboard runs asks first."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from tests.conftest import scaled
from tests.ui.conftest import open_repo, shot

pytestmark = pytest.mark.gui


def _model_row_text(window, name: str) -> str:
    for r in range(window.proxy.rowCount()):
        text = window.proxy.index(r, 0).data()
        if text.split()[0] == name:
            return text
    raise AssertionError(name)


def test_ctrl_t_tunes_the_open_model_and_keep_writes_back(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "batched_sleep" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    before = ed.controller.text
    window.activateWindow()
    with qtbot.waitSignal(window.sig_dashboard_opened, timeout=scaled(120000)) as opened:
        qtbot.keyClick(window, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
    dash = opened.args[0]
    assert window.tabs.currentWidget() is dash and window.server.state == "ready"
    qtbot.waitUntil(lambda: len(dash.series.rows()) >= 4, timeout=scaled(20000))
    # the browser shows the server's state of the tuned model
    qtbot.waitUntil(lambda: "READY" in _model_row_text(window, "batched_sleep"), timeout=scaled(10000))
    assert "not loaded" in _model_row_text(window, "add_sub")

    assert dash.request_edits({"dynamic_batching.max_queue_delay_microseconds": 2000}) is None
    qtbot.waitUntil(lambda: any(c.ok and c.edits for c in dash.engine.changes), timeout=scaled(30000))
    shot(window, "shell_dashboard.png")
    qtbot.mouseClick(dash.keep_button, Qt.MouseButton.LeftButton)
    assert "max_queue_delay_microseconds: 2000" in ed.controller.text
    assert ed.controller.dirty and cfg.read_text() == before  # kept in the editor, not saved behind the user's back
    window.tabs.setCurrentWidget(ed)
    window.act_undo.trigger()  # Keep is one undo step
    assert ed.controller.text == before

    # closing the window while the dashboard runs asks first; "No" keeps everything running
    asked = []
    window.ask = lambda title, text, *a: asked.append(text) or QMessageBox.StandardButton.No
    assert not window.close()
    assert asked and "tuning batched_sleep" in asked[0]
    assert window.server.state == "ready"
    window.close_tab(window.tabs.indexOf(dash))
    assert window.server.close_question() is None


def test_deploy_from_the_window_and_the_drift_banner(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    with qtbot.waitSignal(window.deploy_controller.sig_finished, timeout=scaled(120000)) as done:
        qtbot.keyClick(window, Qt.Key.Key_D, Qt.KeyboardModifier.ControlModifier)
    result = done.args[0]
    assert result.ok, result
    qtbot.waitUntil(lambda: "READY" in _model_row_text(window, "add_sub"), timeout=scaled(10000))
    # the file changes under the running server: the editor says so
    ed.form._set("max_batch_size", 32)
    window.save_current()
    qtbot.waitUntil(lambda: ed.drift_banner.isVisible(), timeout=scaled(10000))
    assert "max_batch_size" in ed.drift_banner.text.text()
    shot(window, "shell_drift_banner.png")
    qtbot.mouseClick(ed.drift_banner.reload_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not ed.drift_banner.isVisible(), timeout=scaled(20000))


def test_export_for_a_cluster_from_the_file_menu(window, qtbot, repo):
    import yaml

    open_repo(window, qtbot, repo)
    view = window.export_repository("kserve", "s3://bucket/demo")
    doc = yaml.safe_load(view.toPlainText())
    assert doc["kind"] == "InferenceService" and doc["spec"]["predictor"]["model"]["storageUri"] == "s3://bucket/demo"
    assert window.tabs.currentWidget() is view and view.isReadOnly()
    assert window.export_repository("kserve", "ftp://nope") is None  # a bad URI is one line in the status bar
    assert "ftp://nope" in window.status.text()
    compose = yaml.safe_load(window.export_repository("compose").toPlainText())
    (service,) = compose["services"].values()
    assert service["ports"] and all(p["host_ip"] == "127.0.0.1" for p in service["ports"])
    assert [v["read_only"] for v in service["volumes"]] == [True] and service["privileged"] is False
