"""Deploy the open model (Ctrl+D): validate (errors refuse, nothing reaches the server) -> save -> a server (the
Server panel starts one when none is connected, with the user's remembered choice) -> load with the document's
config -> READY, with a progress indicator and Cancel -> time to READY -> the Test inference panel. A refused
model shows Triton's own reason, the relevant server log lines, and a link to the config line the reason names.

    controller = DeployController(server_panel)
    panel = DeployPanel(controller)
    controller.deploy(repository, "add_sub", text=doc_text, save=controller_save)   # or panel's Deploy button

Observes: studio.runtime.deploy (validate_document, deploy), studio.runtime.inference."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
from PySide6.QtCore import QObject, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QFontDatabase, QKeySequence
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QListWidget,
    QListWidgetItem,
    QPlainTextEdit,
    QProgressBar,
    QPushButton,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.runtime.deploy import STEP_TEXT, STEPS, DeployRequest, DeployResult, deploy, validate_document
from studio.ui.common.workers import run_in_background

DEPLOY_SHORTCUT = QKeySequence("Ctrl+D")


def make_deploy_action(parent, trigger: Callable[[], None]) -> QAction:
    """The Deploy action (Ctrl+D) for a menu or toolbar; `trigger` deploys the current model."""
    a = QAction("Deploy", parent)
    a.setShortcut(DEPLOY_SHORTCUT)
    a.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    a.setToolTip("Validate, save, start a server if none runs, load this model, wait for READY, test it (Ctrl+D)")
    a.triggered.connect(lambda _c=False: trigger())
    return a


class DeployController(QObject):
    sig_progress = Signal(str, str)
    """(step, message): a step of the pipeline began or reported."""
    sig_finished = Signal(object)
    """The DeployResult (ok, refused, failed or cancelled)."""
    sig_goto_line = Signal(int)
    """The user asked to see a config line (1-based) of the deployed model."""
    sig_busy = Signal(bool)
    _sig_core_progress = Signal(str, str)
    _sig_core_done = Signal(object)

    def __init__(self, server_panel, parent=None) -> None:
        super().__init__(parent)
        self.server = server_panel
        self.busy = False
        self.result: DeployResult | None = None
        self.model: str | None = None
        self.repository = None
        self._cancel: threading.Event | None = None
        self._waiting_server = False
        self._doc = None
        self._sig_core_progress.connect(self.sig_progress.emit)
        self._sig_core_done.connect(self._core_done)
        server_panel.sig_state_changed.connect(self._server_state)

    def deploy(self, repository, model: str, text: str | None = None, save: Callable[[], None] | None = None) -> None:
        """Start the pipeline (returns at once). `text` is the editor's current text and `save` its save."""
        if self.busy:
            return
        self.busy = True
        self.repository, self.model = str(repository), model
        self.sig_busy.emit(True)
        self._cancel = threading.Event()
        self._save = save
        self._text = text
        self.sig_progress.emit("validate", STEP_TEXT["validate"] + " …")
        run_in_background(lambda: validate_document(repository, model, text), on_done=self._validated,
                          on_failed=lambda m: self._finish(DeployResult(error=m)))

    def _validated(self, result) -> None:
        doc, findings = result
        self._doc = doc
        errors = [f for f in findings if f.severity == "error"]
        if self._cancel.is_set():
            self._finish(DeployResult(step="validate", cancelled=True, error="cancelled", findings=findings))
            return
        if errors:
            r = DeployResult(step="validate", findings=findings)
            r.error = f"{len(errors)} validation error(s): nothing was sent to the server"
            self._finish(r)
            return
        self.sig_progress.emit("save", STEP_TEXT["save"] + " …")
        try:
            if self._save is not None:
                self._save()
            elif self._text is not None:
                from pathlib import Path

                from studio.config import atomic_write

                cfg = Path(self.repository) / self.model / "config.pbtxt"
                if cfg.read_text() != self._text:
                    atomic_write(cfg, self._text)
        except Exception as e:  # noqa: BLE001 - a save that fails stops the deploy
            self._finish(DeployResult(step="save", error=f"could not save: {e}", findings=findings))
            return
        self._findings = findings
        if self.server.ready and (self.server.repository in (None, self.repository) or not self.server.runtime.owned):
            self._run_core()
            return
        self.sig_progress.emit("server", STEP_TEXT["server"] + " …")
        self._waiting_server = True
        if self.server.state in ("starting", "pulling"):
            return  # it is on its way
        if self.server.runtime is not None:
            self.server.stop()
        self.server.start(self.repository, models=[])

    def _server_state(self, state: str) -> None:
        if not self._waiting_server:
            return
        if state == "ready":
            self._waiting_server = False
            self.sig_progress.emit("server", f"{self.server.runtime.kind} server ready")
            self._run_core()
        elif state in ("failed", "stopped", "exited"):
            self._waiting_server = False
            self._finish(DeployResult(step="server", error=self.server.status.text() or "the server did not start",
                                      findings=self._findings, cancelled=self._cancel.is_set()))

    def _run_core(self) -> None:
        runtime = self.server.runtime
        req = DeployRequest(self.repository, self.model, text=None, save=None, runtime=runtime)
        cancel = self._cancel
        run_in_background(lambda: deploy(req, progress=self._sig_core_progress.emit, cancel=cancel),
                          on_done=self._sig_core_done.emit, on_failed=lambda m: self._finish(DeployResult(error=m)))

    def _core_done(self, res: DeployResult) -> None:
        res.findings = getattr(self, "_findings", res.findings)
        if res.line is None and res.reason and self._doc is not None:
            from studio.runtime.deploy import field_of_reason

            res.field_path, res.line = field_of_reason(res.reason, self._doc)
        self._finish(res)

    def _finish(self, res: DeployResult) -> None:
        self.busy = False
        self.result = res
        self.sig_busy.emit(False)
        self.server.presenter.refresh()
        self.sig_finished.emit(res)

    def cancel(self) -> None:
        if not self.busy or self._cancel is None:
            return
        self._cancel.set()
        if self._waiting_server:
            self._waiting_server = False
            self.server.stop()
            self._finish(DeployResult(step="server", cancelled=True, error="cancelled while starting the server"))


class TestInferencePanel(QWidget):
    """Inputs (synthesized from the served config, typed, or loaded from .npy/.npz/JSON), one inference, the
    outputs with shape, dtype and values, and the call's latency."""

    sig_result = Signal(object)
    """An InferenceResult after Run."""
    _sig_done = Signal(object)

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.endpoints = None
        self.model: str | None = None
        self.config = None  # the served config (dict) or a document
        self.inputs: dict[str, np.ndarray] = {}
        self.title = QLabel("Test inference: deploy a model first")
        self.synth_button = QPushButton("Synthesize")
        self.load_button = QPushButton("Load file…")
        self.run_button = QPushButton("Run")
        self.latency = QLabel("")
        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.input_table = QTableWidget(0, 4)
        self.input_table.setHorizontalHeaderLabels(["input", "shape", "dtype", "values (editable, comma-separated)"])
        self.input_table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.output_table = QTableWidget(0, 4)
        self.output_table.setHorizontalHeaderLabels(["output", "shape", "dtype", "values"])
        self.output_table.horizontalHeader().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.output_table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
        row.addWidget(self.synth_button)
        row.addWidget(self.load_button)
        row.addWidget(self.run_button)
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addLayout(row)
        lay.addWidget(self.input_table, 1)
        lay.addWidget(self.latency)
        lay.addWidget(self.output_table, 1)
        lay.addWidget(self.error)
        self.synth_button.clicked.connect(lambda: self.synthesize())
        self.load_button.clicked.connect(self._choose_file)
        self.run_button.clicked.connect(self.run)
        self._sig_done.connect(self._done)
        self._enable(False)

    def _enable(self, on: bool) -> None:
        for b in (self.synth_button, self.load_button, self.run_button):
            b.setEnabled(on)

    def set_target(self, endpoints, model: str, config, inputs: dict | None = None, result=None) -> None:
        self.endpoints, self.model, self.config = endpoints, model, config
        self.title.setText(f"Test inference: {model}")
        self._enable(True)
        if inputs is not None:
            self.set_inputs(inputs)
        else:
            self.synthesize()
        if result is not None:
            self._done(result)

    def synthesize(self, seed: int = 0) -> None:
        from studio.runtime.inference import synthesize_inputs

        try:
            self.set_inputs(synthesize_inputs(self.config, seed=seed))
        except Exception as e:  # noqa: BLE001 - variable shapes, unknown types: say so
            self.error.setText(f"cannot synthesize inputs: {e}")

    def load_file(self, path: str) -> None:
        from studio.runtime.inference import load_inputs

        try:
            self.set_inputs(load_inputs(path, self.config))
        except Exception as e:  # noqa: BLE001 - shown to the user
            self.error.setText(str(e))

    def _choose_file(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "Test inputs", "", "Inputs (*.npy *.npz *.json)")
        if path:
            self.load_file(path)

    def set_inputs(self, inputs: dict[str, np.ndarray]) -> None:
        self.inputs = dict(inputs)
        self.error.setText("")
        t = self.input_table
        t.setRowCount(0)
        for name, arr in inputs.items():
            r = t.rowCount()
            t.insertRow(r)
            for c, text in enumerate((name, str(list(arr.shape)), str(arr.dtype), _values_text(arr))):
                item = QTableWidgetItem(text)
                if c < 3:
                    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
                t.setItem(r, c, item)

    def typed_inputs(self) -> dict[str, np.ndarray]:
        """The inputs as the table shows them (values the user typed replace the synthesized ones)."""
        out = {}
        for r in range(self.input_table.rowCount()):
            name = self.input_table.item(r, 0).text()
            arr = self.inputs[name]
            text = self.input_table.item(r, 3).text()
            if text == _values_text(arr):
                out[name] = arr
                continue
            parts = [p.strip() for p in text.strip("[] ").split(",") if p.strip()]
            if arr.dtype == np.object_:
                vals = np.array([p.encode() for p in parts], dtype=np.object_)
            else:
                vals = np.array([float(p) for p in parts]).astype(arr.dtype)
            if vals.size == 1:
                vals = np.full(arr.shape, vals.reshape(-1)[0], dtype=arr.dtype)
            if vals.size != arr.size:
                raise ValueError(f"input {name}: {vals.size} values typed, {arr.size} needed for shape {list(arr.shape)}")
            out[name] = vals.reshape(arr.shape)
        return out

    def run(self) -> None:
        from studio.runtime.inference import run_inference

        try:
            inputs = self.typed_inputs()
        except ValueError as e:
            self.error.setText(str(e))
            return
        endpoints, model = self.endpoints, self.model
        self.run_button.setEnabled(False)
        self.error.setText("")

        def work():
            try:
                return run_inference(endpoints, model, inputs)
            except Exception as e:  # noqa: BLE001 - the message goes to the panel
                return e

        run_in_background(work, on_done=self._sig_done.emit)

    def _done(self, result) -> None:
        self.run_button.setEnabled(True)
        if isinstance(result, Exception):
            msg = result.message() if callable(getattr(result, "message", None)) else str(result)
            self.error.setText(f"inference failed: {msg}")
            return
        if result.inputs is not None and not self.inputs:
            self.set_inputs(result.inputs)
        self.latency.setText(f"latency of this call: {result.latency_ms:.1f} ms")
        t = self.output_table
        t.setRowCount(0)
        for name, arr in result.outputs.items():
            r = t.rowCount()
            t.insertRow(r)
            for c, text in enumerate((name, str(list(arr.shape)), str(arr.dtype), _values_text(arr, 64))):
                t.setItem(r, c, QTableWidgetItem(text))
        self.result = result
        self.sig_result.emit(result)


def _values_text(arr: np.ndarray, limit: int = 256) -> str:
    from studio.runtime.inference import _fmt

    flat = arr.reshape(-1)
    text = ", ".join(_fmt(v) for v in flat[:limit])
    return text + (", …" if flat.size > limit else "")


class DeployPanel(QWidget):
    """Progress (steps, a bar, Cancel), the outcome (time to READY, findings, Triton's reason with a link to the
    config line, the relevant log lines) and the Test inference panel."""

    def __init__(self, controller: DeployController, parent=None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.title = QLabel("Deploy: open a model and press Ctrl+D")
        self.deploy_button = QPushButton("Deploy")
        self.deploy_button.setToolTip("Ctrl+D")
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.setEnabled(False)
        self.bar = QProgressBar()
        self.bar.setRange(0, len(STEPS))
        self.bar.setFormat("%v / %m steps")
        self.step = QLabel("")
        self.outcome = QLabel("")
        self.outcome.setWordWrap(True)
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.outcome.setOpenExternalLinks(False)
        self.outcome.linkActivated.connect(self._link)
        self.findings = QListWidget()
        self.findings.itemActivated.connect(self._finding_activated)
        self.findings.itemClicked.connect(self._finding_activated)
        self.log_lines = QPlainTextEdit()
        self.log_lines.setReadOnly(True)
        self.log_lines.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.log_lines.setMaximumHeight(110)
        self.test = TestInferencePanel()
        self.target: Callable[[], tuple] | None = None  # () -> (repository, model, text, save)
        row = QHBoxLayout()
        row.addWidget(self.title, 1)
        row.addWidget(self.deploy_button)
        row.addWidget(self.cancel_button)
        lay = QVBoxLayout(self)
        lay.addLayout(row)
        lay.addWidget(self.bar)
        lay.addWidget(self.step)
        lay.addWidget(self.outcome)
        lay.addWidget(self.findings)
        lay.addWidget(self.log_lines)
        lay.addWidget(self.test, 2)
        self.findings.hide()
        self.log_lines.hide()
        self.deploy_button.clicked.connect(self.trigger)
        self.cancel_button.clicked.connect(controller.cancel)
        controller.sig_progress.connect(self._progress)
        controller.sig_finished.connect(self._finished)
        controller.sig_busy.connect(self._busy)
        self._t0 = None
        self._ticker = QTimer(self)
        self._ticker.setInterval(100)
        self._ticker.timeout.connect(self._tick)

    def trigger(self) -> None:
        """Deploy what `target()` names (the shell sets target to the current editor)."""
        if self.target is None:
            self.outcome.setText("open a model's config first")
            return
        got = self.target()
        if got is None:
            self.outcome.setText("open a model's config first")
            return
        repository, model, text, save = got
        self.controller.deploy(repository, model, text=text, save=save)

    def _busy(self, on: bool) -> None:
        import time

        self.deploy_button.setEnabled(not on)
        self.cancel_button.setEnabled(on)
        if on:
            self.title.setText(f"Deploy {self.controller.model}")
            self.outcome.setText("")
            self.findings.clear()
            self.findings.hide()
            self.log_lines.hide()
            self.bar.setValue(0)
            self._t0 = time.monotonic()
            self._ticker.start()
        else:
            self._ticker.stop()

    def _tick(self) -> None:
        import time

        if self._t0 is not None:
            self.bar.setFormat(f"%v / %m steps — {time.monotonic() - self._t0:.1f} s")

    def _progress(self, step: str, message: str) -> None:
        self.bar.setValue(STEPS.index(step) if step in STEPS else self.bar.value())
        self.step.setText(message)

    def _finished(self, res: DeployResult) -> None:
        model = self.controller.model
        if res.ok:
            self.bar.setValue(len(STEPS))
            start = f" (server started in {res.server_start_s:.2f} s)" if res.server_start_s else ""
            self.outcome.setText(f"✔ {model} READY in {res.time_to_ready_s:.2f} s{start}; "
                                 f"test inference {res.inference.latency_ms:.1f} ms")
            self.step.setText("done")
            rt = self.controller.server.runtime
            served = res.served_config if res.served_config is not None else self.controller._doc
            self.test.set_target(rt.endpoints, model, served, inputs=res.inference.inputs, result=res.inference)
            return
        if res.cancelled:
            self.outcome.setText(f"cancelled during {STEP_TEXT.get(res.step, res.step)}")
            self.step.setText("cancelled")
            return
        self.step.setText(f"stopped at: {STEP_TEXT.get(res.step, res.step)}")
        text = _html(res.error or "failed")
        if res.field_path:
            where = f"line {res.line}" if res.line else "the config"
            link = f"line:{res.line}" if res.line else "line:0"
            text += f"<br>the reason names <b>{res.field_path}</b>: <a href='{link}'>show {where}</a>"
        self.outcome.setText(text)
        errs = [f for f in res.findings if f.severity == "error"] if res.step == "validate" else []
        if errs:
            self.findings.show()
            for f in errs:
                item = QListWidgetItem(f"line {f.line}: {f.message}" if f.line else f.message)
                item.setData(Qt.ItemDataRole.UserRole, f.line or 0)
                item.setToolTip(f.hint or "")
                self.findings.addItem(item)
        if res.log_lines:
            self.log_lines.show()
            self.log_lines.setPlainText("\n".join(res.log_lines))

    def _finding_activated(self, item) -> None:
        line = int(item.data(Qt.ItemDataRole.UserRole) or 0)
        if line:
            self.controller.sig_goto_line.emit(line)

    def _link(self, href: str) -> None:
        if href.startswith("line:"):
            line = int(href.split(":", 1)[1] or 0)
            if line:
                self.controller.sig_goto_line.emit(line)


def _html(text: str) -> str:
    import html

    return html.escape(text).replace("\n", "<br>")
