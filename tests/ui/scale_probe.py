"""Test helper (not part of the app): run the studio as `triton-studio TARGET --screenshot OUT.png` in a process of
its own, so a test can set what only a process can (QT_SCALE_FACTOR=2 for 200% scaling), and write facts about
the editor's widgets as JSON just before the screenshot is taken.

    QT_SCALE_FACTOR=2 STUDIO_WIDGET_FACTS=facts.json [STUDIO_WINDOW_SIZE=960x540] \\
        python -m tests.ui.scale_probe REPO/model/config.pbtxt OUT.png

STUDIO_WINDOW_SIZE (logical pixels) resizes the window first: 960x540 is a 1920x1080 screen at 200%."""

from __future__ import annotations

import json
import os
import sys


def _settle() -> None:
    from PySide6.QtWidgets import QApplication

    for _ in range(4):
        QApplication.sendPostedEvents()
        QApplication.processEvents()


def facts(win) -> dict:
    """What a person would see clipped: the form's horizontal scrollbar, widths the form needs but does not get,
    labels cut without an ellipsis, the findings panel's summary cut."""
    from PySide6.QtWidgets import QGroupBox

    from studio.ui.editor.form import ElidedLabel

    ed = win.current_editor()
    out: dict = {"window": [win.width(), win.height()], "device_pixel_ratio": win.devicePixelRatioF(), "editor": ed is not None}
    if ed is None:
        return out
    form = ed.form
    root = form.widget()
    out["form"] = {
        "viewport_width": form.viewport().width(),
        "root_width": root.width(),
        "root_min_width": root.minimumSizeHint().width(),
        "hscroll_visible": form.horizontalScrollBar().isVisible(),
        "hscroll_range": form.horizontalScrollBar().maximum(),
    }
    all_fields = form.findChild(QGroupBox, "all_fields")
    all_fields.setChecked(True)  # every field shown: still no horizontal scrollbar
    _settle()
    out["form_all_fields"] = {
        "viewport_width": form.viewport().width(),
        "root_width": root.width(),
        "root_min_width": root.minimumSizeHint().width(),
        "hscroll_visible": form.horizontalScrollBar().isVisible(),
        "hscroll_range": form.horizontalScrollBar().maximum(),
        "labels_without_tooltip": [lab.full_text() for lab in root.findChildren(ElidedLabel)
                                   if lab.isVisible() and lab.full_text() not in lab.toolTip()],
    }
    all_fields.setChecked(False)
    _settle()
    s = ed.findings.summary
    out["findings"] = {"summary": s.text(), "summary_fits": s.fontMetrics().horizontalAdvance(s.text()) <= s.width(),
                       "fix_button_fits": ed.findings.fix_button.width() >= ed.findings.fix_button.sizeHint().width(),
                       "tree_hscroll_range": ed.findings.tree.horizontalScrollBar().maximum()}
    view = ed.text
    out["text"] = {"gutter_fits": view.viewportMargins().left() >= view.fontMetrics().horizontalAdvance("9" * 3),
                   "line_height": view.fontMetrics().height()}
    return out


def main(argv: list[str]) -> int:
    from studio.ui.shell import main_window

    target = os.environ.get("STUDIO_WIDGET_FACTS")
    size = os.environ.get("STUDIO_WINDOW_SIZE")
    grab = main_window.MainWindow.grab

    def grab_with_facts(self, *a):
        if size:
            w, h = (int(x) for x in size.split("x"))
            self.resize(w, h)
            _settle()
        if target:
            with open(target, "w") as f:
                json.dump(facts(self), f)
            _settle()
        return grab(self, *a)

    main_window.MainWindow.grab = grab_with_facts
    from studio.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:3] and [sys.argv[1], "--screenshot", sys.argv[2]]))
