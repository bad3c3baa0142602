"""Defects a new user hit in the window, each driven as the user did it (real key events, real settings file)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from PySide6.QtCore import QSettings, Qt

from tests.conftest import scaled, scaled_s
from tests.ui.conftest import DEMO, open_repo

pytestmark = pytest.mark.gui

CTRL = Qt.KeyboardModifier.ControlModifier
CTRL_SHIFT = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


def test_ctrl_z_and_ctrl_shift_z_in_the_text_view_use_the_document_stack(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    original = ed.controller.text
    ed.text.setFocus()
    qtbot.waitUntil(ed.text.hasFocus, timeout=scaled(2000))
    cursor = ed.text.textCursor()
    cursor.movePosition(cursor.MoveOperation.End)
    ed.text.setTextCursor(cursor)
    qtbot.keyClicks(ed.text, "# typed")
    qtbot.keyClick(ed.text, Qt.Key.Key_Return)
    qtbot.keyClick(ed.text, Qt.Key.Key_Z, CTRL)  # pending typing is sent, then undone
    assert ed.controller.text == original and ed.text.toPlainText() == original
    qtbot.keyClick(ed.text, Qt.Key.Key_Z, CTRL_SHIFT)
    assert ed.controller.text == original + "# typed\n"
    assert ed.text.toPlainText() == ed.controller.text


def test_ctrl_z_in_a_form_field_undoes_the_form_edit(window, qtbot, repo):
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    original = ed.controller.text
    box = ed.form.widgets["max_batch_size"]
    box.setFocus()
    box.selectAll()
    qtbot.keyClicks(box, "32")
    qtbot.keyClick(box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: "max_batch_size: 32" in ed.controller.text, timeout=scaled(3000))
    box = ed.form.widgets["max_batch_size"]  # the form may rebuild after an edit
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Z, CTRL)
    assert ed.controller.text == original
    qtbot.waitUntil(lambda: ed.form.widgets["max_batch_size"].text() == "64", timeout=scaled(3000))
    box = ed.form.widgets["max_batch_size"]
    box.setFocus()
    qtbot.keyClick(box, Qt.Key.Key_Z, CTRL_SHIFT)
    assert "max_batch_size: 32" in ed.controller.text


def test_recent_repositories_survive_two_launches(tmp_path):
    """Two real launches of the studio with one real settings file: the list stays a list of folders."""
    a, b = tmp_path / "a", tmp_path / "b"
    import shutil

    shutil.copytree(DEMO, a)
    shutil.copytree(DEMO, b)
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"))
    for repo in (a, b, a):
        r = subprocess.run([sys.executable, "-m", "studio.cli", str(repo), "--screenshot", str(tmp_path / "s.png")],
                           env=env, capture_output=True, text=True, timeout=scaled_s(120))
        assert r.returncode == 0, r.stderr[-2000:]
    files = list((tmp_path / "config").rglob("*.conf"))
    assert len(files) == 1, files
    settings = QSettings(str(files[0]), QSettings.Format.IniFormat)
    from studio.ui.shell.settings import recent_repositories

    assert recent_repositories(settings) == [str(a), str(b)]


def test_the_filter_is_reset_when_another_repository_opens(window, qtbot, repo, tmp_path):
    open_repo(window, qtbot, repo)
    window.filter_box.setFocus()
    qtbot.keyClicks(window.filter_box, "sleep")
    assert window.proxy.rowCount() == 1
    open_repo(window, qtbot, DEMO)
    assert window.filter_box.text() == ""
    assert window.proxy.rowCount() == 4


def test_apply_fix_corrects_a_misspelt_field_name(window, qtbot, repo):
    cfg = repo / "add_sub" / "config.pbtxt"
    cfg.write_text(cfg.read_text().replace("max_batch_size: 64", "max_batch_sise: 64"))
    open_repo(window, qtbot, repo)
    ed = window.open_config(str(cfg))
    qtbot.waitUntil(lambda: ed.findings.tree.topLevelItemCount() == 1, timeout=scaled(5000))
    ed.findings.tree.setCurrentItem(ed.findings.tree.topLevelItem(0))
    assert ed.findings.fix_button.isEnabled()
    qtbot.mouseClick(ed.findings.fix_button, Qt.MouseButton.LeftButton)
    assert "max_batch_size: 64" in ed.controller.text and "sise" not in ed.text.toPlainText()
    assert ed.controller.parse_error is None
    qtbot.waitUntil(lambda: ed.form.widgets.get("max_batch_size") is not None, timeout=scaled(3000))
    window.act_undo.trigger()  # the fix is one undo step
    assert "max_batch_sise: 64" in ed.controller.text


def test_tabs_close_with_a_plain_close_button(window, qtbot, repo):
    from PySide6.QtWidgets import QStyle

    open_repo(window, qtbot, repo)
    ed = window.open_config(str(repo / "add_sub" / "config.pbtxt"))
    window.diff("the file on disk")
    diff_index = window.tabs.currentIndex()
    assert window.tabs.close_button(0) is None  # the Start page stays
    for i in (window.tabs.indexOf(ed), diff_index):
        b = window.tabs.close_button(i)
        assert b is not None and b.objectName() == "tabCloseButton"
        expected = window.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton).pixmap(12, 12).toImage()
        assert b.icon().pixmap(12, 12).toImage() == expected
    qtbot.mouseClick(window.tabs.close_button(diff_index), Qt.MouseButton.LeftButton)
    assert window.tabs.count() == 2  # the diff tab is gone
    qtbot.mouseClick(window.tabs.close_button(window.tabs.indexOf(ed)), Qt.MouseButton.LeftButton)
    assert window.tabs.count() == 1 and not window.editors()


def test_a_screenshot_start_on_a_folder_of_repositories_asks_nothing(tmp_path):
    """`triton-studio PARENT --screenshot` must not wait on the "which repository?" question."""
    import shutil

    shutil.copytree(DEMO, tmp_path / "parent" / "models")
    env = {k: v for k, v in os.environ.items() if k != "DISPLAY"}
    env.update(QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_STATE_HOME=str(tmp_path / "state"), XDG_DATA_HOME=str(tmp_path / "data"))
    r = subprocess.run([sys.executable, "-m", "studio.cli", str(tmp_path / "parent"), "--screenshot",
                        str(tmp_path / "s.png")], env=env, capture_output=True, text=True, timeout=scaled_s(60))
    assert r.returncode == 0, r.stderr[-2000:]
    assert (tmp_path / "s.png").stat().st_size > 10000
