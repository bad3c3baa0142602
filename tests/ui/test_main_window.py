"""The first window, driven for real (offscreen): open the demo repository, pick a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.gui
DEMO = REPO / "model_repository_templates" / "demo"
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings

    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path))
    from studio.ui.app import MainWindow, make_app

    make_app()
    win = MainWindow()
    qtbot.addWidget(win)
    win.show()
    return win


def test_open_demo_repository_and_show_a_config(window, qtbot):
    with qtbot.waitSignal(window.sig_repository_loaded, timeout=10000) as blocker:
        window.open_repository(str(DEMO))
    assert blocker.args == [2]
    names = [window.tree.topLevelItem(i).text(0) for i in range(window.tree.topLevelItemCount())]
    assert names == ["add_sub", "batched_sleep"]
    window.tree.setCurrentItem(window.tree.topLevelItem(0))
    cfg = DEMO / "add_sub" / "config.pbtxt"
    assert window.text.toPlainText() == cfg.read_text()
    assert window.document is not None and window.document.get("max_batch_size") == 64
    ARTIFACTS.mkdir(exist_ok=True)
    assert window.grab().save(str(ARTIFACTS / "main_window.png"))


def test_broken_config_shows_text_and_error(window, qtbot, tmp_path):
    bad = tmp_path / "repo" / "broken"
    (bad / "1").mkdir(parents=True)
    (bad / "config.pbtxt").write_text('name: "broken"\nmax_batch_sise: 4\n')
    with qtbot.waitSignal(window.sig_repository_loaded, timeout=10000):
        window.open_repository(str(tmp_path / "repo"))
    window.tree.setCurrentItem(window.tree.topLevelItem(0))
    assert "max_batch_sise" in window.text.toPlainText()
    assert ":2:1: error:" in window.status.text()
    assert Path(window.repository).name == "repo"


def test_server_panel_starts_and_stops_the_embedded_triton(window, qtbot):
    import os

    with qtbot.waitSignal(window.sig_repository_loaded, timeout=10000):
        window.open_repository(str(DEMO))
    states = []
    window.server.sig_state_changed.connect(states.append)
    with qtbot.waitSignal(window.server.sig_state_changed, timeout=60000, check_params_cb=lambda s: s == "ready"):
        window.server.start(window.repository, "embedded")
    assert "ready" in window.server.status.text() and "grpc://127.0.0.1:" in window.server.status.text()
    pid = window.server.runtime.pid
    qtbot.waitUntil(lambda: "Started GRPCInferenceService" in window.server.log.toPlainText(), timeout=10000)
    window.grab().save(str(ARTIFACTS / "main_window_server.png"))
    with qtbot.waitSignal(window.server.sig_state_changed, timeout=30000, check_params_cb=lambda s: s == "stopped"):
        window.server.stop()
    assert states[:2] == ["starting", "ready"]
    try:
        os.kill(pid, 0)
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().split(") ", 1)[1][0] == "Z"
    except ProcessLookupError:
        pass
