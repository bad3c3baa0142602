"""Undo and redo keys for the document, whichever view has focus.

A QPlainTextEdit or QLineEdit claims Ctrl+Z / Ctrl+Shift+Z for its own undo (a ShortcutOverride), so the window's
Undo action never sees the key while a text field has focus. This filter, installed on the application, routes
those keys to the undo stack of the editor tab that holds the focus widget (after sending pending typing), and
leaves every other widget alone (a line edit in a dialog keeps its own undo)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QWidget

from studio.ui.shell.editor_tab import ConfigEditor


def _editor_of(obj) -> ConfigEditor | None:
    w = obj if isinstance(obj, QWidget) else None
    while w is not None:
        if isinstance(w, ConfigEditor):
            return w
        w = w.parentWidget()
    return None


class UndoKeyRouter(QObject):
    def eventFilter(self, obj, event) -> bool:  # noqa: N802 - Qt's name
        kind = event.type()
        if kind not in (QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress):
            return False
        undo = event.matches(QKeySequence.StandardKey.Undo)
        redo = not undo and event.matches(QKeySequence.StandardKey.Redo)
        if not (undo or redo):
            return False
        editor = _editor_of(obj)
        if editor is None:
            return False
        if kind == QEvent.Type.ShortcutOverride:
            event.accept()  # the key is ours: no window shortcut fires, the KeyPress comes here
            return True
        editor.text.flush()
        stack = editor.controller.undo_stack
        (stack.undo if undo else stack.redo)()
        return True
