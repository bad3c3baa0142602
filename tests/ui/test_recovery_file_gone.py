"""Unsaved text whose file was deleted on disk is never lost (issue 14): while it is open, the tab turns dirty,
the recovery file is written and kept, and Save As is offered; at the next start, a recovery file whose original
is gone opens in a tab and offers Save As instead of being thrown away."""

from __future__ import annotations

import json
import os

import pytest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from tests.conftest import scaled
from tests.ui.conftest import answer_questions, open_repo

pytestmark = pytest.mark.gui
B = QMessageBox.StandardButton


_answer = answer_questions


def _save_as_returns(monkeypatch, path: str) -> list:
    offered = []

    def fake(parent, caption, start="", *a, **k):  # the native dialog cannot be clicked in offscreen tests
        offered.append(start)
        return path, ""

    monkeypatch.setattr(QFileDialog, "getSaveFileName", staticmethod(fake))
    return offered


def _leave(window) -> None:
    for ed in window.editors():
        ed.controller.file_gone = False


def test_file_deleted_while_open_keeps_the_recovery_and_offers_save_as(window, qtbot, repo, tmp_path, monkeypatch):
    from studio.ui.editor.controller import recovery_files

    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    ed.text.setPlainText(ed.controller.text + "\n# my unsaved note\n")
    ed.text.flush()
    qtbot.waitUntil(lambda: bool(recovery_files()), timeout=scaled(3000))
    asked = _answer(window, B.No)  # not now
    cfg.unlink()
    qtbot.waitUntil(lambda: ed.controller.file_gone, timeout=scaled(5000))
    assert asked and "was deleted on disk" in asked[0] and "Save As" in asked[0], asked
    assert "*" in window.tabs.tabText(window.tabs.indexOf(ed))
    qtbot.wait(scaled(1000))  # recovery timers and rescans run: the recovery must survive them
    rec = recovery_files()
    assert len(rec) == 1 and rec[0]["path"] == str(cfg) and "# my unsaved note" in rec[0]["text"]

    elsewhere = tmp_path / "saved-elsewhere.pbtxt"
    _save_as_returns(monkeypatch, str(elsewhere))
    assert window.save_editor_as(ed)
    assert "# my unsaved note" in elsewhere.read_text()
    assert recovery_files() == [] and not ed.controller.dirty and not ed.controller.file_gone
    _leave(window)


def test_an_unmodified_file_deleted_while_open_becomes_unsaved_text(window, qtbot, repo):
    from studio.ui.editor.controller import recovery_files

    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    original = cfg.read_text()
    ed = window.open_config(str(cfg))
    assert not ed.controller.dirty
    asked = _answer(window, B.No)
    cfg.unlink()
    qtbot.waitUntil(lambda: ed.controller.file_gone, timeout=scaled(5000))
    assert ed.controller.dirty and asked
    rec = recovery_files()
    assert len(rec) == 1 and rec[0]["text"] == original  # the only copy left is on disk again
    _leave(window)


def test_a_file_replaced_by_rename_is_not_taken_for_deleted(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    asked = _answer(window)
    tmp = cfg.with_name("config.pbtxt.new")
    tmp.write_text(cfg.read_text().replace("max_batch_size: 64", "max_batch_size: 32"))
    os.replace(tmp, cfg)  # what editors that save atomically do
    qtbot.waitUntil(lambda: "max_batch_size: 32" in ed.controller.text, timeout=scaled(5000))
    qtbot.wait(scaled(400))
    assert not ed.controller.file_gone and not ed.controller.dirty and asked == []


def _crashed_recovery(window_state_dir_text: str, path: str) -> None:
    from studio.ui.editor.controller import recovery_dir

    d = recovery_dir()
    body = d / "0123456789abcdef.pbtxt"
    body.write_text(window_state_dir_text, encoding="utf-8")
    (d / "0123456789abcdef.json").write_text(json.dumps({"path": path, "text_file": str(body), "written": 0}))


def test_recovery_whose_file_is_gone_opens_and_offers_save_as(window, qtbot, tmp_path, monkeypatch):
    from studio.ui.editor.controller import recovery_files

    gone = tmp_path / "deleted-model" / "config.pbtxt"
    text = 'name: "deleted-model"\nbackend: "python"\n# edits from before the crash\n'
    _crashed_recovery(text, str(gone))
    target = tmp_path / "rescued.pbtxt"
    offered = _save_as_returns(monkeypatch, str(target))
    asked = _answer(window, B.Yes)
    window.offer_recovery()
    assert asked and "no longer exists" in asked[0], asked
    assert offered, "Save As was not offered"
    assert target.read_text() == text
    ed = window.current_editor()
    assert ed is not None and ed.controller.path == str(target) and not ed.controller.dirty
    assert recovery_files() == []


def test_recovery_whose_file_is_gone_is_kept_when_save_as_is_cancelled(window, qtbot, tmp_path, monkeypatch):
    from studio.ui.editor.controller import recovery_files

    gone = tmp_path / "deleted-model" / "config.pbtxt"
    text = 'name: "deleted-model"\nbackend: "python"\n# edits from before the crash\n'
    _crashed_recovery(text, str(gone))
    _save_as_returns(monkeypatch, "")  # cancelled
    _answer(window, B.Yes)
    window.offer_recovery()
    ed = window.current_editor()
    assert ed is not None and ed.controller.text == text and ed.controller.dirty
    assert "*" in window.tabs.tabText(window.tabs.indexOf(ed))
    rec = recovery_files()
    assert len(rec) == 1 and rec[0]["text"] == text and rec[0]["path"] == str(gone)
    _leave(window)
