"""Saving from the window goes through the one safe save path: a file changed on disk since it was read, or a
read-only file, asks first; a failing save keeps the window and the text; text that does not parse is dirty and
goes to a recovery file quickly (issue 14, GUI side)."""

from __future__ import annotations

import os
import time

import pytest
from PySide6.QtWidgets import QMessageBox

from tests.conftest import scaled
from tests.ui.conftest import answer_questions, open_repo

pytestmark = pytest.mark.gui
B = QMessageBox.StandardButton


_answer = answer_questions


def test_a_file_changed_on_disk_since_it_was_read_is_not_overwritten_without_asking(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    ed.form._set("max_batch_size", 8)
    theirs = cfg.read_text().replace("max_batch_size: 64", "max_batch_size: 64\n# a colleague's line")
    window.choose_external = lambda e: "keep"
    cfg.write_text(theirs)
    os.utime(cfg, ns=(time.time_ns() + 10**9, time.time_ns() + 10**9))
    asked = _answer(window, B.Cancel)
    window.save_current()
    assert asked and "changed" in asked[0]
    assert cfg.read_text() == theirs  # their content survives
    assert "max_batch_size: 8" in ed.controller.text and ed.controller.dirty
    asked = _answer(window, B.Yes)  # overwrite on purpose
    window.save_current()
    assert "max_batch_size: 8" in cfg.read_text() and not ed.controller.dirty


def test_a_read_only_file_asks_and_keeps_its_mode(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    cfg.chmod(0o444)
    before = cfg.read_text()
    ed.form._set("max_batch_size", 8)
    asked = _answer(window, B.No)
    window.save_current()
    assert asked and "read-only" in asked[0].lower() and cfg.read_text() == before
    _answer(window, B.Yes)
    window.save_current()
    assert "max_batch_size: 8" in cfg.read_text() and (cfg.stat().st_mode & 0o777) == 0o444


def test_closing_with_a_failing_save_keeps_the_tab_and_the_text(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    cfg = repo / "add_sub" / "config.pbtxt"
    ed = window.open_config(str(cfg))
    ed.form._set("max_batch_size", 8)
    before = cfg.read_bytes()
    (repo / "add_sub").chmod(0o555)
    rc = os.system(f"chattr +i '{repo / 'add_sub'}' 2>/dev/null")  # root ignores 0555; an immutable folder does not
    assert rc == 0 or os.geteuid() != 0, "chattr +i is needed to make a folder refuse root"
    try:
        # "save?" -> Save; the save fails -> "Save As?" -> No: the tab stays with the text
        asked = _answer(window, B.Save, B.No)
        assert not window.close_tab(window.tabs.indexOf(ed)), asked
        assert len(asked) == 2 and "Save As" in asked[1], asked
        assert ed in window.editors() and "max_batch_size: 8" in ed.controller.text
        assert cfg.read_bytes() == before
    finally:
        os.system(f"chattr -i '{repo / 'add_sub'}' 2>/dev/null")
        (repo / "add_sub").chmod(0o755)


def test_text_that_does_not_parse_is_dirty_and_recovered_quickly(window, qtbot, repo):
    from studio.ui.editor.controller import recovery_files

    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    ed.text.setPlainText(ed.controller.text + "\nmax_batch_size: {{\n")
    ed.text.flush()
    qtbot.waitUntil(lambda: ed.controller.parse_error is not None, timeout=scaled(3000))
    assert "*" in window.tabs.tabText(window.tabs.indexOf(ed))
    t0 = time.monotonic()
    qtbot.waitUntil(lambda: bool(recovery_files()), timeout=scaled(3000))
    assert time.monotonic() - t0 < 0.5 * max(1, scaled(1000) / 1000)
    assert "{{" in recovery_files()[0]["text"]
