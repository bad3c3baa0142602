"""Diff view (issue 12): table columns sized to their content, long values elided with the whole value as a
tooltip; screenshots in light and dark palettes."""

from __future__ import annotations

import pytest

from tests.ui.conftest import shot
from tests.ui.test_browser_defects import dark

pytestmark = pytest.mark.gui

LEFT = 'name: "m"\nbackend: "python"\nmax_batch_size: 8\n'
RIGHT = ('name: "m"\nbackend: "python"\nmax_batch_size: 16\n'
         'dynamic_batching { preferred_batch_size: [ 2, 4, 8, 16 ] max_queue_delay_microseconds: 100 }\n'
         'parameters { key: "EXECUTION_ENV_PATH" value { string_value: "$$TRITON_MODEL_DIRECTORY/'
         + "very_long_environment_name_" * 8 + '.tar.gz" } }\n'
         'instance_group [ { name: "a_rather_long_instance_group_name_for_gpus" kind: KIND_GPU count: 2 gpus: [ 0, 1 ] } ]\n')


def test_table_columns_fit_their_content_and_long_values_are_elided_with_tooltips(qtbot):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from studio.ui.diff.diff_view import DiffView

    view = DiffView(LEFT, RIGHT, "on disk", "editor")
    qtbot.addWidget(view)
    view.resize(1280, 800)
    view.show()
    qtbot.waitExposed(view)
    t = view.table
    fm = t.fontMetrics()
    assert t.rowCount() >= 4
    for row in range(t.rowCount()):
        for col in range(t.columnCount()):
            item = t.item(row, col)
            assert item.toolTip() == item.text()  # the whole value, wherever it is cut
    margin = 2 * t.style().pixelMetric(t.style().PixelMetric.PM_FocusFrameHMargin) + 8
    for col in (0, 3):  # field paths and categories are never cut
        widest = max(fm.horizontalAdvance(t.item(r, col).text()) for r in range(t.rowCount()))
        assert t.columnWidth(col) >= widest + margin - 8, (col, t.columnWidth(col), widest)
    long_row = next(r for r in range(t.rowCount()) if "EXECUTION_ENV_PATH" in t.item(r, 0).text())
    assert fm.horizontalAdvance(t.item(long_row, 2).text()) > t.columnWidth(2)  # elided ...
    assert t.textElideMode() == Qt.TextElideMode.ElideMiddle  # ... in the middle, both ends visible
    for row in range(t.rowCount()):  # short values are whole
        text = t.item(row, 2).text()
        if fm.horizontalAdvance(text) < view.MAX_VALUE_COLUMN - 20:
            assert fm.horizontalAdvance(text) <= t.columnWidth(2)
    QApplication.processEvents()
    shot(view, "diff_view_table.png")
    restore = dark(view)
    try:
        shot(view, "diff_view_table_dark.png")
    finally:
        restore()
