"""The server dock: start and stop a local Triton (embedded CPU or Docker) off the UI thread, show its
status, endpoints and log."""

from __future__ import annotations

from PySide6.QtCore import QObject, QRunnable, QThreadPool, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from studio.runtime import Runtime, RuntimeFailure, ServerOptions, make_runtime


class _Signals(QObject):
    sig_started = Signal(object)
    """The server is ready: its Endpoints."""
    sig_failed = Signal(str)
    """Start failed: the message for the user."""
    sig_stopped = Signal()
    """The server was stopped."""


class _Job(QRunnable):
    def __init__(self, fn) -> None:
        super().__init__()
        self.fn = fn
        self.signals = _Signals()

    def run(self) -> None:
        self.fn(self.signals)


class ServerPanel(QWidget):
    sig_log_line = Signal(str)
    """A server log line (emitted from the log reader thread, delivered on the UI thread)."""
    sig_state_changed = Signal(str)
    """stopped | starting | ready | failed | stopping"""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.runtime: Runtime | None = None
        self.repository: str | None = None
        self.state = "stopped"
        self._jobs: list[_Job] = []
        self.kind = QComboBox()
        self.kind.addItems(["embedded (CPU)", "docker"])
        self.start_button = QPushButton("Start")
        self.stop_button = QPushButton("Stop")
        self.stop_button.setEnabled(False)
        self.status = QLabel("stopped")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(self.status.textInteractionFlags() | self.status.textInteractionFlags().TextSelectableByMouse)
        self.log = QPlainTextEdit()
        self.log.setReadOnly(True)
        self.log.setMaximumBlockCount(5000)
        self.log.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        row = QHBoxLayout()
        row.addWidget(self.kind)
        row.addWidget(self.start_button)
        row.addWidget(self.stop_button)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.status)
        lay.addWidget(self.log, 1)
        self.start_button.clicked.connect(lambda: self.start())
        self.stop_button.clicked.connect(self.stop)
        self.sig_log_line.connect(self.log.appendPlainText)

    def _set_state(self, state: str, text: str) -> None:
        self.state = state
        self.status.setText(text)
        self.start_button.setEnabled(state in ("stopped", "failed"))
        self.stop_button.setEnabled(state in ("ready", "starting"))
        self.kind.setEnabled(state in ("stopped", "failed"))
        self.sig_state_changed.emit(state)

    def start(self, repository: str | None = None, kind: str | None = None) -> None:
        repository = repository or self.repository
        if not repository:
            self._set_state("failed", "open a repository first")
            return
        self.repository = repository
        kind = kind or ("embedded" if self.kind.currentIndex() == 0 else "docker")
        self.kind.setCurrentIndex(0 if kind == "embedded" else 1)
        try:
            runtime = make_runtime(kind, gpus="all" if kind == "docker" else None)
        except RuntimeFailure as e:
            self._set_state("failed", str(e))
            return
        self.runtime = runtime
        runtime.logs.subscribe(self.sig_log_line.emit, replay=False)
        self._set_state("starting", f"starting the {kind} Triton on {repository} …")

        def work(signals: _Signals) -> None:
            try:
                ep = runtime.start(repository, ServerOptions())
            except Exception as e:  # noqa: BLE001 - reported to the user
                signals.sig_failed.emit(str(e))
                return
            signals.sig_started.emit(ep)

        job = _Job(work)
        job.signals.sig_started.connect(self._on_started)
        job.signals.sig_failed.connect(lambda msg: self._set_state("failed", msg))
        self._jobs.append(job)
        QThreadPool.globalInstance().start(job)

    def _on_started(self, ep) -> None:
        self._set_state("ready", f"ready — HTTP {ep.http}   gRPC {ep.grpc}   metrics {ep.metrics}")

    def stop(self) -> None:
        runtime = self.runtime
        if runtime is None:
            return
        self._set_state("stopping", "stopping …")

        def work(signals: _Signals) -> None:
            runtime.stop()
            signals.sig_stopped.emit()

        job = _Job(work)
        job.signals.sig_stopped.connect(lambda: self._set_state("stopped", "stopped"))
        self._jobs.append(job)
        QThreadPool.globalInstance().start(job)

    def shutdown(self) -> None:
        """Stop the server synchronously (the window is closing)."""
        if self.runtime is not None:
            self.runtime.stop()
            self.runtime = None
