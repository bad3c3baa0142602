"""The central tabs (editors, diffs, graphs, dashboards) with a plain close button on each tab.

QTabWidget's own close mark is drawn by the style, and Fusion paints the active tab's in orange-red, which reads
as an error. Each tab gets a flat tool button with the style's title-bar close icon instead; the first tab
("Start") has none."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtWidgets import QStyle, QTabBar, QTabWidget, QToolButton


class CentralTabs(QTabWidget):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setTabsClosable(False)
        self.setDocumentMode(True)
        self.setMovable(False)

    def tabInserted(self, index: int) -> None:  # noqa: N802 - Qt's name
        super().tabInserted(index)
        if index == 0 and self.count() == 1:
            return  # the Start page stays
        page = self.widget(index)
        button = QToolButton(self)
        button.setObjectName("tabCloseButton")
        button.setAutoRaise(True)
        button.setIcon(self.style().standardIcon(QStyle.StandardPixmap.SP_TitleBarCloseButton))
        button.setIconSize(QSize(12, 12))
        button.setToolTip("Close (Ctrl+W)")
        button.clicked.connect(lambda _c=False, page=page: self.tabCloseRequested.emit(self.indexOf(page)))
        self.tabBar().setTabButton(index, QTabBar.ButtonPosition.RightSide, button)

    def close_button(self, index: int) -> QToolButton | None:
        b = self.tabBar().tabButton(index, QTabBar.ButtonPosition.RightSide)
        return b if isinstance(b, QToolButton) else None
