"""The config editor driven as a user drives it (real key and mouse events): a long config stays responsive (no
full-document work on the UI thread per keystroke, the form updates only what changed), refused form values show
at the field and in the validation panel, the form fits 1280x800, colours follow the palette, and the editor's
findings are the browser's findings."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QGroupBox, QLabel, QStyle, QStyleOptionGroupBox, QToolButton

from tests.conftest import scaled
from tests.ui.conftest import open_repo, shot

pytestmark = pytest.mark.gui


def long_config(lines: int = 516) -> str:
    """An ensemble config of about `lines` lines: many inputs, outputs and steps (as benchmarks/bench_editor.py)."""
    head = ['name: "big"', 'platform: "ensemble"', "max_batch_size: 8"]
    ins, outs, steps = [], [], []
    i = 0
    while len(ins) + len(outs) + len(steps) + len(head) < lines - 20:
        ins += ["  {", f'    name: "INPUT{i}"', "    data_type: TYPE_FP32", "    dims: [ 16 ]", "  },"]
        outs += ["  {", f'    name: "OUTPUT{i}"', "    data_type: TYPE_FP32", "    dims: [ 16 ]", "  },"]
        steps += ["    {", f'      model_name: "m{i}"', "      model_version: -1",
                  f'      input_map {{ key: "IN" value: "INPUT{i}" }}', f'      output_map {{ key: "OUT" value: "OUTPUT{i}" }}', "    },"]
        i += 1
    for block in (ins, outs, steps):
        block[-1] = block[-1].rstrip(",")
    text = head + ["input ["] + ins + ["]", "output ["] + outs + ["]", "ensemble_scheduling {", "  step ["] + steps + ["  ]", "}"]
    while len(text) < lines:
        text.append(f"# comment {len(text)}")
    return "\n".join(text) + "\n"


def click_group_check(qtbot, group: QGroupBox) -> None:
    """A real click on a checkable group box's check indicator."""
    opt = QStyleOptionGroupBox()
    group.initStyleOption(opt)
    r = group.style().subControlRect(QStyle.ComplexControl.CC_GroupBox, opt, QStyle.SubControl.SC_GroupBoxCheckBox, group)
    qtbot.mouseClick(group, Qt.MouseButton.LeftButton, pos=r.center())


def put_cursor(view, line: int, at_end: bool = True) -> None:
    c = view.textCursor()
    c.setPosition(view.document().findBlockByNumber(line - 1).position())
    if at_end:
        c.movePosition(c.MoveOperation.EndOfLine)
    view.setTextCursor(c)


def test_typing_in_a_long_config_parses_off_the_ui_thread_and_updates_only_changed_form_rows(window, qtbot, repo, monkeypatch):
    from studio.config import ConfigDocument

    model = repo / "big"
    (model / "1").mkdir(parents=True)
    (model / "config.pbtxt").write_text(long_config())
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(model / "config.pbtxt"))
    form, view = ed.form, ed.text
    assert view.blockCount() >= 500
    inputs_row = form.widgets["input"]
    steps_row = form.widgets["ensemble_scheduling"]

    ui_thread_parses = []
    real_parse = ConfigDocument.parse.__func__

    def spy(cls, text, **kw):
        if threading.current_thread() is threading.main_thread():
            ui_thread_parses.append(len(text))
        return real_parse(cls, text, **kw)

    monkeypatch.setattr(ConfigDocument, "parse", classmethod(spy))
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=scaled(2000))
    last = view.blockCount() - 1  # a comment line near the end
    put_cursor(view, last)
    qtbot.keyClicks(view, " typed")
    qtbot.waitUntil(lambda: "typed" in ed.controller.text, timeout=scaled(5000))
    # 3) a value: max_batch_size 8 -> 16 on line 3
    put_cursor(view, 3)
    qtbot.keyClick(view, Qt.Key.Key_Backspace)
    qtbot.keyClicks(view, "16")
    qtbot.waitUntil(lambda: ed.controller.document.get("max_batch_size") == 16, timeout=scaled(5000))
    qtbot.waitUntil(lambda: form.widgets["max_batch_size"].text() == "16", timeout=scaled(3000))
    assert ui_thread_parses == [], "typing parsed the whole document on the UI thread"
    # the rows that did not change are the same widgets: nothing was rebuilt for them
    assert form.widgets["input"] is inputs_row and form.widgets["ensemble_scheduling"] is steps_row

    # "All fields" builds its own rows only; the rest of the form stays
    all_fields = form.findChild(QGroupBox, "all_fields")
    assert "optimization" not in form.widgets
    click_group_check(qtbot, all_fields)
    assert all_fields.isChecked() and "optimization" in form.widgets
    assert form.widgets["input"] is inputs_row
    click_group_check(qtbot, all_fields)
    assert not all_fields.isChecked() and form.widgets["input"] is inputs_row

    # a long list shows its cards closed: a card's fields are built when it is opened
    card = form.widgets["input[5]"]
    assert "input[5].name" not in form.widgets
    opener = card.findChild(QToolButton, "card_opener")
    assert "INPUT5" in opener.text()
    qtbot.mouseClick(opener, Qt.MouseButton.LeftButton)
    assert form.widgets["input[5].name"].text() == "INPUT5"
    assert ed.controller.undo_stack.count() >= 1 and ui_thread_parses == []


def test_a_refused_form_value_shows_at_the_field_and_in_the_panel_and_never_reaches_the_document(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    original = ed.controller.text
    qtbot.waitUntil(lambda: ed.findings.summary.text().startswith("0 error"), timeout=scaled(5000))
    for bad in ("abc", "-3"):
        box = ed.form.widgets["max_batch_size"]
        box.setFocus()
        box.selectAll()
        qtbot.keyClicks(box, bad)
        qtbot.keyClick(box, Qt.Key.Key_Return)
        box = ed.form.widgets["max_batch_size"]
        assert box.text() == bad  # what the user typed stays, to be corrected
        assert ed.controller.text == original  # never reaches the document
        message = box.parentWidget().findChild(QLabel, "field_error")
        assert message is not None and message.isVisible() and message.text()
        assert "red" in box.styleSheet() or "border" in box.styleSheet()
        qtbot.waitUntil(lambda: ed.findings.summary.text().startswith("1 error"), timeout=scaled(3000))
        rows = [ed.findings.tree.topLevelItem(i).text(1) for i in range(ed.findings.tree.topLevelItemCount())]
        assert any("max_batch_size" in r and bad in r for r in rows), rows
    shot(window, "form_refused_value.png")
    # a good value: the border, the message and the finding go; the document takes it
    box = ed.form.widgets["max_batch_size"]
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, "16")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "max_batch_size: 16" in ed.controller.text, timeout=scaled(3000))
    qtbot.waitUntil(lambda: ed.findings.summary.text().startswith("0 error"), timeout=scaled(5000))
    box = ed.form.widgets["max_batch_size"]
    assert box.styleSheet() == "" and not box.parentWidget().findChild(QLabel, "field_error").isVisible()


def test_the_form_fits_1280x800_without_a_horizontal_scrollbar(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    assert (window.width(), window.height()) == (1280, 800)
    form = ed.form
    qtbot.waitUntil(lambda: form.viewport().width() > 0, timeout=scaled(2000))
    click_group_check(qtbot, form.findChild(QGroupBox, "all_fields"))  # every field shown, still no scrollbar
    qtbot.waitUntil(lambda: "optimization" in form.widgets, timeout=scaled(2000))
    root = form.widget()
    assert not form.horizontalScrollBar().isVisible()
    assert root.minimumSizeHint().width() <= form.viewport().width(), "the form needs more width than it has"
    assert root.width() <= form.viewport().width()
    # a long name is elided in its label, whole in the tooltip
    from studio.ui.editor.form import ElidedLabel

    labels = [w for w in root.findChildren(ElidedLabel) if w.isVisible()]
    assert labels and all(lab.full_text() in lab.toolTip() for lab in labels)
    shot(window, "form_1280x800.png")
