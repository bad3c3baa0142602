"""The dashboard inside the real main window at 1280x800 (the tab is about 1030x440 next to the repository and
server docks): all six plots inside the view, the controls without scrolling, light and dark palettes; and
PySide6 without the None refcount leak of 6.12.0 (which aborted live plots)."""

from __future__ import annotations

import sys

import pytest
from PySide6.QtCore import Qt

from tests.conftest import scaled
from tests.ui.conftest import open_repo, shot

pytestmark = pytest.mark.gui


def test_pyside_does_not_leak_none_references():
    from PySide6.QtCore import QPointF

    p = QPointF(0, 0)
    before = sys.getrefcount(None)
    for _ in range(1000):
        p.setX(1.0)
    assert sys.getrefcount(None) >= before - 5, "this PySide6 leaks None references (6.12.0): live plots abort"


def _dark(app):
    from PySide6.QtGui import QColor, QPalette

    pal = QPalette()
    for role, color in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#e0e0e0"),
                        (QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.Text, "#e0e0e0"),
                        (QPalette.ColorRole.Button, "#3a3a3a"), (QPalette.ColorRole.ButtonText, "#e0e0e0")):
        pal.setColor(role, QColor(color))
    return pal


def _check_fits(dash):
    view = dash.plots.view
    vr = view.viewport().rect()
    for p in dash.plots.plots:
        r = view.mapFromScene(p.sceneBoundingRect()).boundingRect()
        assert r.right() <= vr.right() + 1 and r.bottom() <= vr.bottom() + 1, (p.titleLabel.text, r, vr)
        assert r.width() >= 150, (p.titleLabel.text, r)
    assert dash.plots.mapTo(dash, dash.plots.rect().topRight()).x() <= dash.width()
    assert dash.controls_scroll.verticalScrollBar().maximum() == 0, "the controls need scrolling"


@pytest.mark.parametrize("palette", ["light", "dark"])
def test_dashboard_fits_the_main_window_at_1280x800(window, qtbot, repo, palette):
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    old = app.palette()
    if palette == "dark":
        app.setPalette(_dark(app))
    try:
        open_repo(window, qtbot, repo)
        window.open_config(str(repo / "batched_sleep" / "config.pbtxt"))
        window.activateWindow()
        with qtbot.waitSignal(window.sig_dashboard_opened, timeout=scaled(120000)) as opened:
            qtbot.keyClick(window, Qt.Key.Key_T, Qt.KeyboardModifier.ControlModifier)
        dash = opened.args[0]
        qtbot.waitUntil(lambda: len(dash.series) >= 8, timeout=scaled(20000))
        assert dash.request_edits({"dynamic_batching.max_queue_delay_microseconds": 2000}) is None
        qtbot.waitUntil(lambda: any(c.ok and c.edits for c in dash.engine.changes), timeout=scaled(30000))
        qtbot.waitUntil(lambda: len(dash.series) >= 16, timeout=scaled(20000))
        qtbot.wait(300)  # every plot has its turn (one per 35 ms tick)
        print(f"dashboard tab {dash.width()}x{dash.height()}, plots {dash.plots.width()}x{dash.plots.height()}")
        _check_fits(dash)
        shot(window, f"shell_dashboard_1280x800_{palette}.png")
        dash.set_results_visible(True)
        qtbot.wait(300)
        _check_fits(dash)
        shot(window, f"shell_dashboard_1280x800_{palette}_results.png")
        window.close_tab(window.tabs.indexOf(dash))
    finally:
        app.setPalette(old)
