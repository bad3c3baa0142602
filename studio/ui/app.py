"""The studio's QApplication and main window (a first cut: repository tree + config text view)."""

from __future__ import annotations

import sys
from pathlib import Path

from PySide6.QtCore import QObject, QRunnable, QSettings, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QAction, QFont, QFontDatabase, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QTreeWidget,
    QTreeWidgetItem,
)

from studio import __version__
from studio.config import ConfigDocument, ParseError
from studio.repository import ModelEntry, scan_repository
from studio.ui.server_panel import ServerPanel

ROLE_PATH = Qt.ItemDataRole.UserRole + 1


class _ScanSignals(QObject):
    sig_done = Signal(object)
    """The scan finished: a list of ModelEntry."""
    sig_failed = Signal(str)
    """The scan failed: a message for the user."""


class _ScanJob(QRunnable):
    def __init__(self, repo: str) -> None:
        super().__init__()
        self.repo = repo
        self.signals = _ScanSignals()

    def run(self) -> None:
        try:
            models = scan_repository(self.repo)
        except OSError as e:
            self.signals.sig_failed.emit(f"{self.repo}: {e.strerror or e}")
            return
        self.signals.sig_done.emit(models)


class MainWindow(QMainWindow):
    sig_repository_loaded = Signal(int)
    """The repository tree is filled: the number of models."""

    def __init__(self) -> None:
        super().__init__()
        self.setWindowTitle("Triton Config Studio")
        self.resize(1280, 800)
        self.repository: str | None = None
        self.document: ConfigDocument | None = None
        self._jobs: list[_ScanJob] = []

        self.tree = QTreeWidget()
        self.tree.setHeaderLabels(["Model repository"])
        self.tree.itemSelectionChanged.connect(self._on_selection)
        dock = QDockWidget("Repository", self)
        dock.setObjectName("repository_dock")
        dock.setWidget(self.tree)
        self.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)

        self.server = ServerPanel()
        server_dock = QDockWidget("Server", self)
        server_dock.setObjectName("server_dock")
        server_dock.setWidget(self.server)
        self.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, server_dock)

        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.text.setPlaceholderText("Open a model repository (Ctrl+O) and pick a model.")
        self.setCentralWidget(self.text)
        self.status = QLabel("")
        self.statusBar().addWidget(self.status, 1)

        menu = self.menuBar().addMenu("&File")
        open_act = QAction("&Open repository…", self)
        open_act.setShortcut(QKeySequence.StandardKey.Open)
        open_act.triggered.connect(self._choose_repository)
        menu.addAction(open_act)
        quit_act = QAction("&Quit", self)
        quit_act.setShortcut(QKeySequence.StandardKey.Quit)
        quit_act.triggered.connect(self.close)
        menu.addAction(quit_act)
        help_menu = self.menuBar().addMenu("&Help")
        about = QAction("&About", self)
        about.triggered.connect(self._about)
        help_menu.addAction(about)

        settings = QSettings()
        geometry = settings.value("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)

    # -- repository ------------------------------------------------------------------------------------
    def open_repository(self, path: str) -> None:
        self.repository = str(Path(path).resolve())
        self.server.repository = self.repository
        self.status.setText(f"Scanning {self.repository}…")
        job = _ScanJob(self.repository)
        job.signals.sig_done.connect(self._on_scanned)
        job.signals.sig_failed.connect(self.status.setText)
        self._jobs.append(job)  # keep the signals object alive until the job reports
        QThreadPool.globalInstance().start(job)
        settings = QSettings()
        recent = [r for r in (settings.value("recent/repositories") or []) if r != self.repository]
        settings.setValue("recent/repositories", [self.repository, *recent][:10])

    def _on_scanned(self, models: list[ModelEntry]) -> None:
        self._jobs = [j for j in self._jobs if j.signals is not self.sender()]
        self.tree.clear()
        for m in models:
            item = QTreeWidgetItem([m.name])
            if m.config is not None:
                item.setData(0, ROLE_PATH, str(m.config))
            else:
                item.setToolTip(0, "no config.pbtxt: Triton needs one unless the backend auto-completes it")
            for v in m.versions:
                vitem = QTreeWidgetItem([f"version {v}"])
                for name in m.files.get(v, []):
                    vitem.addChild(QTreeWidgetItem([name]))
                item.addChild(vitem)
            self.tree.addTopLevelItem(item)
        self.tree.expandToDepth(0)
        self.status.setText(f"{self.repository}: {len(models)} models")
        self.setWindowTitle(f"Triton Config Studio — {Path(self.repository or '').name}")
        self.sig_repository_loaded.emit(len(models))

    def _choose_repository(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a Triton model repository")
        if path:
            self.open_repository(path)

    def _on_selection(self) -> None:
        items = self.tree.selectedItems()
        if not items:
            return
        path = items[0].data(0, ROLE_PATH)
        if path:
            self.open_config(path)

    def open_config(self, path: str) -> None:
        try:
            self.document = ConfigDocument.load(path)
        except ParseError as e:
            self.document = None
            self.text.setPlainText(Path(path).read_text(encoding="utf-8", errors="replace"))
            self.status.setText(e.format(path).splitlines()[0])
            return
        except OSError as e:
            self.status.setText(f"{path}: {e.strerror}")
            return
        self.text.setPlainText(self.document.text)
        self.status.setText(path)

    def _about(self) -> None:
        import google.protobuf
        import PySide6
        import tritonclient

        QMessageBox.about(
            self,
            "About Triton Config Studio",
            f"Triton Config Studio {__version__}\n\nQt {PySide6.QtCore.qVersion()}, PySide6 {PySide6.__version__}\n"
            f"tritonclient {getattr(tritonclient, '__version__', '?')}, protobuf {google.protobuf.__version__}",
        )

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt's name
        QSettings().setValue("window/geometry", self.saveGeometry())
        self.server.shutdown()
        super().closeEvent(event)


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv or sys.argv[:1])
    app.setOrganizationName("triton-config-studio")
    app.setApplicationName("Triton Config Studio")
    app.setApplicationVersion(__version__)
    font = app.font()
    if font.pointSize() < 9:
        app.setFont(QFont(font.family(), 10))
    return app  # type: ignore[return-value]


def run_gui(repository: str | None, screenshot: str | None = None, serve: str | None = None) -> int:
    app = make_app()
    win = MainWindow()
    win.show()
    if repository:
        win.open_repository(repository)
        if serve:
            win.server.start(win.repository, serve)
    if screenshot:
        pending = {"repo": bool(repository), "server": bool(repository and serve)}

        def shoot() -> None:
            if any(pending.values()):
                return
            if win.tree.topLevelItemCount():
                win.tree.setCurrentItem(win.tree.topLevelItem(0))
            QTimer.singleShot(300, lambda: (win.grab().save(screenshot), win.close(), app.quit()))

        def done(key: str) -> None:
            pending[key] = False
            shoot()

        win.sig_repository_loaded.connect(lambda _n: done("repo"))
        win.server.sig_state_changed.connect(lambda st: done("server") if st in ("ready", "failed") else None)
        QTimer.singleShot(0, shoot)
    code = app.exec()
    win.server.shutdown()
    return code
