"""The editor's colours follow the palette (issue 12, "text colours do not follow a palette change"): with a
config open, switching the application to a dark palette recolours the text view (highlighting, current line,
bracket match, underlines, line numbers), the form (dimmed and unset text, a refused value's border) and the
findings panel, readable on the new background; switching back restores the light colours."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from studio.ui.common.colors import contrast
from tests.conftest import scaled
from tests.ui.conftest import open_repo, shot

pytestmark = pytest.mark.gui

R = QPalette.ColorRole


def dark_palette() -> QPalette:
    """A dark palette as a desktop theme sets it; PlaceholderText left as it was (many themes do)."""
    pal = QPalette(QApplication.palette())
    for role, c in ((R.Window, "#2b2b2b"), (R.WindowText, "#dddddd"), (R.Base, "#1e1e1e"), (R.AlternateBase, "#262626"),
                    (R.Text, "#dddddd"), (R.Button, "#353535"), (R.ButtonText, "#dddddd"), (R.ToolTipBase, "#2b2b2b"),
                    (R.ToolTipText, "#dddddd"), (R.Highlight, "#2f65ca"), (R.HighlightedText, "#ffffff"),
                    (R.Mid, "#555555"), (R.Dark, "#151515"), (R.Light, "#505050"), (R.Midlight, "#404040")):
        pal.setColor(role, QColor(c))
    return pal


def settle() -> None:
    for _ in range(3):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def colours(ed) -> dict[str, QColor]:
    view, form = ed.text, ed.form
    out = {n: QColor(view.highlighter.formats[n].foreground().color()) for n in ("field", "enum", "string", "comment", "number")}
    sel = view.extraSelections()[0]
    fmt = sel.format
    out["current_line"] = QColor(fmt.background().color())
    out["line_number"] = QColor(view.colors["line_number"])
    out["underline"] = QColor(view.colors["error"])
    out["placeholder"] = QColor(form.widgets["platform"].palette().color(R.PlaceholderText))  # unset: shows it
    m = re.search(r"border: 2px solid (#[0-9a-fA-F]{6})", form.widgets["max_batch_size"].styleSheet())
    out["refused_border"] = QColor(m.group(1))
    out["summary"] = QColor(ed.findings.summary_color())
    return out


def check_readable(ed, c: dict[str, QColor]) -> None:
    view = ed.text
    page = view.palette().color(R.Base)
    window = ed.form.palette().color(R.Window)
    for name in ("field", "enum", "string", "comment", "number"):
        assert contrast(c[name], page) >= 4.5, (name, c[name].name(), page.name())
        assert contrast(c[name], c["current_line"]) >= 4.5, (name, "on the current line")
    assert c["current_line"] != page and c["current_line"].name() != page.name(), "the current line is not visible"
    assert contrast(view.palette().color(R.Text), c["current_line"]) >= 4.5
    assert contrast(c["line_number"], view.colors["gutter"]) >= 4.5
    assert contrast(c["underline"], page) >= 3.0
    assert contrast(c["placeholder"], ed.form.widgets["platform"].palette().color(R.Base)) >= 4.5
    assert contrast(c["refused_border"], page) >= 3.0
    assert contrast(c["summary"], window) >= 4.5
    # the text on screen was highlighted again with the new colours (not only the formats replaced)
    block = view.document().findBlockByNumber(next(i for i, t in enumerate(view.toPlainText().splitlines()) if t.startswith("name:")))
    painted = {QColor(r.format.foreground().color()).name() for r in block.layout().formats()}
    assert c["field"].name() in painted and c["string"].name() in painted, painted


def test_editor_colours_follow_a_dark_palette_and_back(window, qtbot, repo):
    app = QApplication.instance()
    light = QPalette(app.palette())
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    # a refused value (red border, an error in the panel) and a current line inside the text
    box = ed.form.widgets["max_batch_size"]
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, "abc")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: ed.findings.summary.text().startswith("1 error"), timeout=scaled(5000))
    ed.text.go_to(3, 1)
    settle()
    before = colours(ed)
    check_readable(ed, before)
    shot(window, "editor_light.png")
    try:
        app.setPalette(dark_palette())
        settle()
        assert ed.text.palette().color(R.Base).name() == "#1e1e1e"
        dark = colours(ed)
        for name in ("field", "string", "comment", "current_line", "line_number", "placeholder", "summary"):
            assert dark[name].name() != before[name].name(), f"{name} did not follow the palette"
        check_readable(ed, dark)
        shot(window, "editor_dark.png")
    finally:
        app.setPalette(light)
        settle()
    back = colours(ed)
    assert {k: v.name() for k, v in back.items()} == {k: v.name() for k, v in before.items()}
