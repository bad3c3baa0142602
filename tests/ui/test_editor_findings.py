"""One source of truth for a model's findings: the editor's validation panel counts what the browser's row badge
counts (repository rules for the model folder: version folders, model files, name vs folder...), with the
editor's current text in place of the file's; a config outside a model folder is validated alone."""

from __future__ import annotations

import re
import shutil

import pytest
from PySide6.QtCore import Qt

from tests.conftest import scaled
from tests.ui.conftest import open_repo, shot

pytestmark = pytest.mark.gui


def _badge(window, model: str) -> tuple[int, int]:
    """(errors, warnings) of the browser row of `model`."""
    for r in range(window.proxy.rowCount()):
        text = window.proxy.index(r, 0).data()
        if text.split()[0] == model:
            e = re.search(r"✗(\d+)", text)
            w = re.search(r"⚠(\d+)", text)
            return int(e.group(1)) if e else 0, int(w.group(1)) if w else 0
    raise AssertionError(f"no row for {model}")


def _summary(ed) -> tuple[int, int]:
    m = re.match(r"(\d+) error\(s\), (\d+) warning\(s\)", ed.findings.summary.text())
    assert m, ed.findings.summary.text()
    return int(m.group(1)), int(m.group(2))


def test_the_editor_counts_the_model_findings_the_browser_counts(window, qtbot, repo):
    model = repo / "add_sub"
    shutil.rmtree(model / "1")  # the other models have their version folder: an error here
    cfg = model / "config.pbtxt"
    cfg.write_text(cfg.read_text().replace('name: "add_sub"', 'name: "add_sub_v2"'))  # name differs from folder
    open_repo(window, qtbot, repo)
    assert _badge(window, "add_sub") == (2, 0)
    ed = window.open_config(str(cfg))
    qtbot.waitUntil(lambda: ed.findings.summary.text() != "", timeout=scaled(5000))
    qtbot.waitUntil(lambda: _summary(ed) == _badge(window, "add_sub"), timeout=scaled(5000))
    rules = {ed.findings.tree.topLevelItem(i).text(3) for i in range(ed.findings.tree.topLevelItemCount())}
    assert {"repository.no-version", "repository.name-mismatch"} <= rules
    shot(window, "editor_findings_as_browser.png")

    # fix the name in the text view (real key events): the editor's count follows the text, not the file
    view = ed.text
    view.setFocus()
    qtbot.waitUntil(view.hasFocus, timeout=scaled(2000))
    line = next(i for i, t in enumerate(view.toPlainText().splitlines()) if t.startswith("name:"))
    c = view.textCursor()
    c.setPosition(view.document().findBlockByNumber(line).position())
    c.movePosition(c.MoveOperation.EndOfLine, c.MoveMode.KeepAnchor)
    view.setTextCursor(c)
    qtbot.keyClicks(view, 'name: "add_sub"')
    qtbot.waitUntil(lambda: 'name: "add_sub"\n' in ed.controller.text, timeout=scaled(5000))
    qtbot.waitUntil(lambda: _summary(ed) == (1, 0), timeout=scaled(5000))
    assert _badge(window, "add_sub") == (2, 0)  # the file on disk still has both problems
    # saved: the browser rescans and agrees again
    qtbot.keyClick(view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: _badge(window, "add_sub") == (1, 0), timeout=scaled(15000))
    assert _summary(ed) == (1, 0)


def test_a_config_outside_a_model_folder_is_validated_alone(qtbot, tmp_path):
    from studio.ui.editor.controller import DocumentController, model_folder_of

    lone = tmp_path / "somewhere" / "my_model.pbtxt"
    lone.parent.mkdir()
    lone.write_text('name: "m"\nbackend: "python"\nmax_batch_size: 8\n')
    assert model_folder_of(str(lone)) is None
    assert model_folder_of(str(tmp_path / "repo" / "m" / "1" / "config.pbtxt")) is None  # a misplaced copy
    assert model_folder_of(str(tmp_path / "repo" / "m" / "config.pbtxt")) == (tmp_path / "repo", "m")
    c = DocumentController(str(lone))
    try:
        assert [f for f in c.validate_now() if f.severity == "error"] == []
    finally:
        c.close()
