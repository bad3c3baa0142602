"""Fixtures of the window tests: a studio window at 1280x800 (settings and state in a temporary folder), a copy of
the demo repository, and screenshots for people to look at (test-artifacts/)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, scaled

DEMO = REPO / "model_repository_templates" / "demo"
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture
def window(qtbot, tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    from studio.ui.shell.main_window import MainWindow, make_app

    make_app()
    from PySide6.QtWidgets import QMessageBox

    win = MainWindow()
    win.ask = lambda *a, **k: QMessageBox.StandardButton.Discard  # no modal question in a test
    win.choose_external = lambda ed: "keep"
    win.resize(1280, 800)
    qtbot.addWidget(win)
    win.show()
    yield win
    for ed in win.editors():  # leave without the "unsaved edits" question
        ed.text._debounce.stop()
        ed.controller.undo_stack.setClean()
        ed.controller._pending_text = None


@pytest.fixture
def repo(tmp_path) -> Path:
    r = tmp_path / "repo"
    shutil.copytree(DEMO, r)
    return r


def open_repo(window, qtbot, path) -> None:
    with qtbot.waitSignal(window.sig_repository_loaded, timeout=scaled(30000)):
        window.open_repository(str(path))


def shot(widget, name: str) -> None:
    """Save a picture of the widget as a person would see it: pending layout and paint events first."""
    from PySide6.QtWidgets import QApplication

    for _ in range(3):
        QApplication.sendPostedEvents()
        QApplication.processEvents()
    ARTIFACTS.mkdir(exist_ok=True)
    assert widget.grab().save(str(ARTIFACTS / name))




def answer_questions(window, *answers):
    """Answer the window's next questions (window.ask) in order; any further question is answered Discard (the
    test's end). Returns the list the questions' texts are appended to."""
    from PySide6.QtWidgets import QMessageBox

    asked = []
    queue = list(answers)
    window.ask = lambda title, text, *a: asked.append(text) or (queue.pop(0) if queue else QMessageBox.StandardButton.Discard)
    return asked
