"""The live tuning dashboard: load runs against a model on a Triton server while its batching config changes
underneath; plots move, every change is a marker, results are rows; Keep hands the winning settings to the
shell as a minimal edit.

    dash = TuningDashboard(target="grpc://127.0.0.1:8001", model="batched_sleep", document=doc,
                           client=client, keep=lambda edits: ..., concurrency=16)
    dash.start()           # load starts (also on show when autostart=True)
    dash.shutdown()        # stop load (call before closing; closeEvent does it too)

Threads and processes: the load generator and the sampler run in a child process (studio.tuning.loadproc, via
studio.tuning.live.LiveEngine), so they never share a GIL with the UI; samples arrive on a reader thread and,
like changes, reach this widget by queued signals; reloads, A/B runs, recipes and auto-tune run in the thread
pool (studio.ui.common.workers.run_in_background); the plots redraw at most every 250 ms.
"""

from __future__ import annotations

import csv
import gc
import json
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QSignalBlocker, Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QSplitter,
    QTabWidget,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from studio.config import ConfigDocument
from studio.tuning.controls import (
    BATCHING,
    ControlSpec,
    apply_edits,
    control_specs,
    current_value,
    describe,
    refusal,
)
from studio.tuning.inputs import InputError, parse_shapes
from studio.tuning.live import Change, LiveEngine
from studio.tuning.reload import ReloadCoordinator
from studio.tuning.series import RingSeries, sample_row
from studio.tuning.shapes import Ramp, ShapeError, Step, Trace
from studio.ui.common.workers import run_in_background
from studio.ui.tuning.controls import ConfigControl, make_control
from studio.ui.tuning.plots import WINDOWS, LivePlots
from studio.ui.tuning.results import ResultsPanel

REDRAW_MS = 35
"""The plot timer: each tick updates at most one of the six plots (all six within ~210 ms of a sample, under
the 250 ms sample period), so that no event-loop turn paints them all at once; it runs only while a plot is
stale. (The x axes are linked and scroll in steps: see LivePlots._x_range.)"""


def keep_edits(base: ConfigDocument, live: ConfigDocument, specs: list[ControlSpec]) -> dict:
    """The edits that turn `base` (the open document) into the serving settings, over the dashboard's fields."""
    edits: dict = {}
    on_base, on_live = base.has(BATCHING), live.has(BATCHING)
    if on_base and not on_live:
        return {BATCHING: None, **{s.path: current_value(live, s) for s in specs
                                   if not s.needs_batching and s.widget != "toggle"
                                   and current_value(base, s) != current_value(live, s)}}
    if on_live and not on_base:
        edits[BATCHING] = {}
        base = ConfigDocument.parse(base.text)
        base.set(BATCHING, {})  # compare against Triton's defaults, not against an absent block
    for s in specs:
        if s.widget == "toggle":
            continue
        if s.needs_batching and not on_live:
            continue
        a, b = current_value(base, s), current_value(live, s)
        if a != b:
            edits[s.path] = b
    return edits


class StallMonitor:
    """The longest gap between ticks of a 20 ms UI timer, minus the interval: how long the event loop stalled."""

    def __init__(self, parent: QWidget, interval_ms: int = 20) -> None:
        self.interval = interval_ms / 1000.0
        self.max_stall_ms = 0.0
        self._last = time.perf_counter()
        self.timer = QTimer(parent)
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.timeout.connect(self._tick)
        self.timer.start(interval_ms)

    def _tick(self) -> None:
        now = time.perf_counter()
        stall = (now - self._last - self.interval) * 1000.0
        self._last = now
        if stall > self.max_stall_ms:
            self.max_stall_ms = stall

    def reset(self) -> None:
        self._last = time.perf_counter()
        self.max_stall_ms = 0.0


class TuningDashboard(QWidget):
    """A live tuning dashboard for one model on one server."""

    sig_sample = Signal(object)
    """A studio.tuning.sampler.Sample arrived (queued from the sampler thread; plotted on the next redraw)."""
    sig_change = Signal(object)
    """A config change finished (studio.tuning.live.Change): ok (live, with its reload time) or refused."""
    sig_steady = Signal(object)
    """A change reached steady state: the Change, with .steady figures filled in."""
    sig_status = Signal(str)
    """The reload state for the user: 'live', 'pending…', 'applying…', 'live (1.42 s)', 'failed: …'."""
    sig_kept = Signal(dict)
    """Keep was pressed: the edits handed to the keep callback (path -> value; None removes the field)."""
    sig_refused = Signal(str, str)
    """A control's value was refused before it reached the server: (field path, the validator's message)."""
    sig_job_done = Signal(str)
    """An auto-tune, recipe or A/B run finished: a one-line summary."""
    _sig_engine_change = Signal(object)  # internal: a Change from whichever thread reloaded

    def __init__(self, target: str, model: str, document: ConfigDocument, client=None, *,
                 keep: Callable[[dict], None] | None = None, concurrency: int | None = 16, rate: float | None = None,
                 poisson: bool = False, budget_ms: float = 50.0, autostart: bool = True,
                 debounce_s: float = 0.4, steady_budget_s: float = 15.0, server_pid: int | None = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("tuningDashboard")
        self.model = model
        self.target = target
        self.document = document  # the open document: read for Keep's diff, never edited here
        self._keep = keep
        self.working = ConfigDocument.parse(document.text)  # the settings the controls show
        self.engine = LiveEngine(target, model, ConfigDocument.parse(document.text), client,
                                 concurrency=concurrency, rate=rate, poisson=poisson, steady_budget_s=steady_budget_s,
                                 server_pid=server_pid)
        self.series = RingSeries()
        self.coordinator = ReloadCoordinator(debounce_s=debounce_s)
        self.specs = control_specs(self.working)
        self.controls: dict[str, ConfigControl] = {}
        self.autostart = autostart
        self._budget0 = budget_ms
        self._dirty = False
        self._source = "control"
        self._job = None
        self._stop_job = False
        self._closing = False
        self.status_text = "live"
        self.last_refusal: str | None = None
        self._build()
        self.engine.subscribe(self.sig_sample.emit)
        self.engine.subscribe_steady(self.sig_steady.emit)
        self.sig_sample.connect(self._on_sample, Qt.ConnectionType.QueuedConnection)
        self.sig_steady.connect(self._on_steady, Qt.ConnectionType.QueuedConnection)
        self.engine.subscribe_change(self._sig_engine_change.emit)
        self._sig_engine_change.connect(self._show_change, Qt.ConnectionType.QueuedConnection)
        self._reload_timer = QTimer(self)
        self._reload_timer.setSingleShot(True)
        self._reload_timer.timeout.connect(self._start_reload)
        self._redraw_timer = QTimer(self)  # runs only while plots are stale (no wake-ups between samples)
        self._redraw_timer.timeout.connect(self._redraw_tick)
        self.stalls = StallMonitor(self)
        self._refresh_controls()

    # -- layout -------------------------------------------------------------------------------------------
    def _build(self) -> None:
        """Controls on the left (Load and Config as tabs, so that they fit ~400 px of height), the plots on the
        right (a grid that follows the width), the results below them in a splitter, shown on demand when the
        dashboard is short (the shell's tab at 1280x800 is about 1030x440)."""
        outer = QHBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        split = QSplitter(Qt.Orientation.Horizontal)
        split.setChildrenCollapsible(False)
        self.splitter = split
        outer.addWidget(split)
        side = QWidget()
        side_lay = QVBoxLayout(side)
        side_lay.setContentsMargins(0, 0, 4, 0)
        side_lay.setSpacing(3)
        head = QLabel(f"<b>{self.model}</b> on {self.target.removeprefix('grpc://')}")
        head.setWordWrap(True)
        side_lay.addWidget(head)
        status_row = QHBoxLayout()
        self.status = QLabel("live")
        self.status.setObjectName("reloadStatus")
        self.status.setWordWrap(True)
        status_row.addWidget(self.status, 1)
        self.errors_label = QLabel("failed requests: 0")
        self.errors_label.setObjectName("errorsTotal")
        status_row.addWidget(self.errors_label)
        side_lay.addLayout(status_row)
        self.side_tabs = QTabWidget()
        self.side_tabs.setObjectName("dashboardSideTabs")
        self.side_tabs.setDocumentMode(True)
        self.side_tabs.addTab(self._config_box(), "Config (applied live)")
        self.side_tabs.addTab(self._load_box(), "Load")
        side_lay.addWidget(self.side_tabs)
        keep_row = QHBoxLayout()
        self.keep_button = QPushButton("Keep")
        self.keep_button.setObjectName("keepButton")
        self.keep_button.setToolTip("write the serving settings into config.pbtxt (one undo step)")
        self.keep_button.setEnabled(self._keep is not None)
        self.keep_button.clicked.connect(self.keep)
        keep_row.addWidget(self.keep_button)
        self.export_button = QToolButton()
        self.export_button.setText("Export…")
        self.export_button.clicked.connect(self._export_dialog)
        keep_row.addWidget(self.export_button)
        keep_row.addStretch(1)
        side_lay.addLayout(keep_row)
        side_lay.addStretch(1)
        scroll = QScrollArea()
        scroll.setObjectName("dashboardControls")
        scroll.setWidget(side)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setMinimumWidth(side.minimumSizeHint().width() + 8)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.controls_scroll = scroll
        split.addWidget(scroll)

        right = QWidget()
        rl = QVBoxLayout(right)
        rl.setContentsMargins(0, 0, 0, 0)
        rl.setSpacing(2)
        bar = QHBoxLayout()
        bar.addWidget(QLabel("window"))
        self.window_combo = QComboBox()
        self.window_combo.addItems(list(WINDOWS))
        self.window_combo.setCurrentText("2 min")
        bar.addWidget(self.window_combo)
        bar.addStretch(1)
        self.results_toggle = QToolButton()
        self.results_toggle.setObjectName("resultsToggle")
        self.results_toggle.setCheckable(True)
        self.results_toggle.setChecked(True)
        self.results_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.results_toggle.setToolTip("show or hide the results table, the scatter, A/B, auto-tune and recipes")
        bar.addWidget(self.results_toggle)
        rl.addLayout(bar)
        vsplit = QSplitter(Qt.Orientation.Vertical)
        vsplit.setChildrenCollapsible(False)
        self.vsplit = vsplit
        self.plots = LivePlots(self.series, self._budget0)
        self.plots.setMinimumHeight(220)
        self.window_combo.currentTextChanged.connect(self.plots.set_window)
        vsplit.addWidget(self.plots)
        self.results = ResultsPanel(self)
        vsplit.addWidget(self.results)
        vsplit.setStretchFactor(0, 5)
        vsplit.setStretchFactor(1, 2)
        rl.addWidget(vsplit)
        split.addWidget(right)
        split.setStretchFactor(0, 0)
        split.setStretchFactor(1, 1)
        self._results_auto = True  # shown or hidden by the height until the user decides
        self.results_toggle.toggled.connect(self._results_toggled)
        self.results_toggle.clicked.connect(lambda _c: setattr(self, "_results_auto", False))
        self._results_label()
        self.plots.sig_budget_changed.connect(self._budget_changed)

    def _load_box(self) -> QWidget:
        box = QWidget()
        form = QFormLayout(box)
        form.setContentsMargins(4, 6, 4, 4)
        form.setVerticalSpacing(4)
        self.mode = QComboBox()
        self.mode.setObjectName("loadMode")
        self.mode.addItems(["concurrency", "rate (constant)", "rate (Poisson)"])
        self.conc = QSpinBox()
        self.conc.setObjectName("concurrency")
        self.conc.setRange(1, 4096)
        self.conc.setKeyboardTracking(False)
        self.conc.setValue(self.engine.concurrency or 16)
        self.rate = QDoubleSpinBox()
        self.rate.setObjectName("rate")
        self.rate.setRange(0.1, 1_000_000)
        self.rate.setDecimals(1)
        self.rate.setKeyboardTracking(False)
        self.rate.setValue(self.engine.rate or 100.0)
        if self.engine.rate is not None:
            self.mode.setCurrentIndex(2 if self.engine.poisson else 1)
        form.addRow("mode", self.mode)
        form.addRow("in flight", self.conc)
        form.addRow("requests/s", self.rate)
        shape_row = QHBoxLayout()
        self.shape = QComboBox()
        self.shape.setObjectName("trafficShape")
        self.shape.addItems(["steady", "step", "ramp", "trace CSV…"])
        self.shape_to = QDoubleSpinBox()
        self.shape_to.setRange(1, 1_000_000)
        self.shape_to.setValue(64)
        self.shape_to.setToolTip("step/ramp: the value to reach")
        self.shape_s = QDoubleSpinBox()
        self.shape_s.setRange(0, 3600)
        self.shape_s.setValue(20)
        self.shape_s.setSuffix(" s")
        self.shape_s.setToolTip("step: after; ramp: over")
        for w in (self.shape_to, self.shape_s):
            w.setMaximumWidth(84)
        shape_row.addWidget(self.shape)
        shape_row.addWidget(self.shape_to)
        shape_row.addWidget(self.shape_s)
        form.addRow("shape", shape_row)
        self.inputs = QLineEdit()
        self.inputs.setPlaceholderText("INPUT:16 (variable dims)")
        self.inputs.setToolTip("shapes for variable-size inputs, perf_analyzer's NAME:d1,d2 (space-separated)")
        data_row = QHBoxLayout()
        data_row.addWidget(self.inputs, 1)
        self.input_data = QToolButton()
        self.input_data.setText("data…")
        self.input_data.setToolTip("perf_analyzer --input-data JSON")
        data_row.addWidget(self.input_data)
        form.addRow("inputs", data_row)
        buttons = QHBoxLayout()
        self.start_button = QPushButton("Start")
        self.pause_button = QPushButton("Pause")
        self.stop_button = QPushButton("Stop")
        for b in (self.start_button, self.pause_button, self.stop_button):
            buttons.addWidget(b)
        form.addRow(buttons)
        self.load_error = QLabel("")
        self.load_error.setWordWrap(True)
        self.load_error.setStyleSheet("color: #e74c3c")
        form.addRow(self.load_error)
        self.pa_command = QLineEdit(self.engine.perf_analyzer())
        self.pa_command.setReadOnly(True)
        self.pa_command.setToolTip("the equivalent perf_analyzer command line")
        self.pa_command.setObjectName("perfAnalyzerCommand")
        form.addRow(QLabel("perf_analyzer equivalent:"))
        form.addRow(self.pa_command)
        self.mode.activated.connect(lambda _i: self._apply_load())
        self.conc.valueChanged.connect(lambda _v: self._apply_load())
        self.rate.valueChanged.connect(lambda _v: self._apply_load())
        self.shape.activated.connect(lambda _i: self._apply_shape())
        self.inputs.returnPressed.connect(self._apply_inputs)
        self.input_data.clicked.connect(self._pick_input_data)
        self.start_button.clicked.connect(self.start)
        self.pause_button.clicked.connect(self.pause)
        self.stop_button.clicked.connect(self.stop_load)
        self._sync_load_widgets()
        return box

    def _config_box(self) -> QWidget:
        box = QWidget()
        form = QFormLayout(box)
        form.setContentsMargins(4, 6, 4, 4)
        form.setVerticalSpacing(4)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.more = QWidget()
        more_form = QFormLayout(self.more)
        more_form.setContentsMargins(0, 0, 0, 0)
        for spec in self.specs:
            c = make_control(spec, self._commit)
            c.sig_refused.connect(lambda msg, path=spec.path: self._refused(path, msg))
            self.controls[spec.path] = c
            target = more_form if spec.group == "more" else form
            if spec.widget == "toggle":
                target.addRow(c)
            else:
                target.addRow(spec.label, c)
        self.more_button = QToolButton()
        self.more_button.setText("more…")
        self.more_button.setCheckable(True)
        self.more_button.setToolTip("the other dynamic_batching scalars")
        self.more_button.toggled.connect(self.more.setVisible)
        form.addRow(self.more_button)
        form.addRow(self.more)
        self.more.setVisible(False)
        self.refusal = QLabel("")
        self.refusal.setObjectName("refusal")
        self.refusal.setWordWrap(True)
        self.refusal.setStyleSheet("color: #e74c3c")
        form.addRow(self.refusal)
        return box

    # -- results area -----------------------------------------------------------------------------------------
    def _results_label(self) -> None:
        n = len(self.results.rows) if hasattr(self, "results") else 0
        self.results_toggle.setText(f"Results ({n})")
        self.results_toggle.setArrowType(Qt.ArrowType.DownArrow if self.results_toggle.isChecked()
                                         else Qt.ArrowType.RightArrow)

    def _results_toggled(self, on: bool) -> None:
        self.results.setVisible(on)
        if on and self.height() < 620:
            h = sum(self.vsplit.sizes()) or self.vsplit.height()
            self.vsplit.setSizes([self.plots.minimumHeight(), max(120, h - self.plots.minimumHeight())])
        self._results_label()

    def set_results_visible(self, on: bool, by_user: bool = True) -> None:
        if by_user:
            self._results_auto = False
        self.results_toggle.setChecked(on)

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt
        super().resizeEvent(event)
        if self._results_auto:
            # short: the plots get the height, the results come with one click (or a double-click on a row)
            self.results_toggle.blockSignals(True)
            self.results_toggle.setChecked(event.size().height() >= 620)
            self.results_toggle.blockSignals(False)
            self._results_toggled(self.results_toggle.isChecked())

    # -- lifecycle ------------------------------------------------------------------------------------------
    def showEvent(self, event) -> None:  # noqa: N802 - Qt
        super().showEvent(event)
        if self.autostart and not self.engine.running and not self.engine.paused and not self._closing:
            self.autostart = False
            self.start()

    def start(self) -> None:
        """Start (or resume) the load."""
        self.load_error.setText("")
        # what exists now (Qt wrappers, pyqtgraph items, the studio) leaves the collector's generations: full
        # collections during a run get short and do not show up as event-loop stalls
        gc.freeze()
        try:
            self.engine.resume()
        except (InputError, Exception) as e:  # noqa: BLE001 - unreachable server, unknown inputs
            self.load_error.setText(str(e).splitlines()[0])
            return
        if not self.engine.changes:
            self.engine.remeasure("initial config", source="start")  # the first row: the pinned baseline
        self._sync_load_widgets()

    def pause(self) -> None:
        run_in_background(self.engine.pause, on_done=lambda _r: self._sync_load_widgets())

    def stop_load(self) -> None:
        run_in_background(self.engine.stop, on_done=lambda _r: self._sync_load_widgets())

    def shutdown(self) -> None:
        """Stop the load and everything running for this dashboard (blocking, a second at most)."""
        self._closing = True
        self._stop_job = True
        if hasattr(self, "results"):
            self.results.stop()  # an auto-tune ends after its point, not after a walk against a closed engine
        self._redraw_timer.stop()
        self.stalls.timer.stop()
        self.engine.close()

    def closeEvent(self, event) -> None:  # noqa: N802 - Qt
        self.shutdown()
        super().closeEvent(event)

    # -- load ----------------------------------------------------------------------------------------------
    def _sync_load_widgets(self) -> None:
        rate_mode = self.mode.currentIndex() > 0
        self.conc.setEnabled(not rate_mode)
        self.rate.setEnabled(rate_mode)
        running = self.engine.running
        self.start_button.setEnabled(not running)
        self.pause_button.setEnabled(running)
        self.stop_button.setEnabled(running)
        if hasattr(self, "pa_command"):
            self.pa_command.setText(self.engine.perf_analyzer())

    def _apply_load(self) -> None:
        rate_mode = self.mode.currentIndex() > 0
        if rate_mode:
            fn = lambda: self.engine.set_rate(self.rate.value(), poisson=self.mode.currentIndex() == 2)  # noqa: E731
        else:
            fn = lambda: self.engine.set_concurrency(self.conc.value())  # noqa: E731
        self._sync_load_widgets()
        run_in_background(fn, on_done=lambda _r: self._sync_load_widgets())

    def set_load(self, concurrency: int | None = None, rate: float | None = None, poisson: bool | None = None) -> None:
        """Change the load through the load controls (what a user or a script does)."""
        if concurrency is not None:
            self.mode.setCurrentIndex(0)
            self.conc.setValue(int(concurrency))
        if rate is not None:
            self.mode.setCurrentIndex(2 if poisson else 1)
            self.rate.setValue(float(rate))
        elif poisson is not None and self.mode.currentIndex() > 0:
            self.mode.setCurrentIndex(2 if poisson else 1)
        self._apply_load()

    def _apply_shape(self) -> None:
        kind = self.shape.currentText()
        rate_mode = self.mode.currentIndex() > 0
        what = "rate" if rate_mode else "concurrency"
        # from where the load is now (a previous shape may have moved it away from the spin box's value)
        current = self.engine.rate if rate_mode else self.engine.concurrency
        now = float(current) if current else (self.rate.value() if rate_mode else float(self.conc.value()))
        self.load_error.setText("")
        if kind == "steady":
            self.engine.clear_shape()
            return
        if kind == "step":
            shape = Step.once(now, self.shape_to.value(), self.shape_s.value())
        elif kind == "ramp":
            shape = Ramp(now, self.shape_to.value(), self.shape_s.value())
        else:
            path, _ = QFileDialog.getOpenFileName(self, "Rate trace (t_s,requests_per_s)", "", "CSV (*.csv)")
            if not path:
                self.shape.setCurrentIndex(0)
                return
            try:
                shape = Trace.from_csv(path)
            except (ShapeError, OSError) as e:
                self.load_error.setText(str(e))
                self.shape.setCurrentIndex(0)
                return
            what = "rate"
            if not rate_mode:
                # the shape's own thread switches the engine to a rate: the widgets follow without queuing a
                # set_rate of their own (one landing late would restart the load under the running trace)
                with QSignalBlocker(self.mode), QSignalBlocker(self.rate):
                    self.mode.setCurrentIndex(1)
                    self.rate.setValue(float(shape.value_at(0)))
                self._sync_load_widgets()
        self.engine.set_shape(shape, what, poisson=self.mode.currentIndex() == 2)  # the arrivals the widgets show

    def _apply_inputs(self) -> None:
        try:
            shapes = parse_shapes(self.inputs.text().split())
            self.engine.set_inputs(shapes, self.engine.input_data)
            self.load_error.setText("")
        except (InputError, ValueError) as e:
            self.load_error.setText(str(e))

    def _pick_input_data(self) -> None:
        path, _ = QFileDialog.getOpenFileName(self, "perf_analyzer --input-data", "", "JSON (*.json)")
        if path:
            try:
                self.engine.set_inputs(self.engine.shapes, path)
                self.load_error.setText("")
            except (InputError, ValueError, OSError) as e:
                self.load_error.setText(str(e))

    # -- config changes ----------------------------------------------------------------------------------------
    def control(self, path: str) -> ConfigControl:
        return self.controls[path]

    def _commit(self, spec: ControlSpec, edits: dict) -> str | None:
        return self.request_edits(edits)

    def request_edits(self, edits: dict, source: str = "control") -> str | None:
        """Check edits (the validator's refusal comes back, nothing reaches the server), then queue a reload:
        debounced, one load in flight, latest value wins."""
        if self._job is not None and source == "control":
            return "an auto-tune, recipe or A/B run is driving the config: stop it first"
        message = refusal(self.working, edits, self.model)
        if message:
            return message
        self.refusal.setText("")
        apply_edits(self.working, edits)
        self._source = source
        self.coordinator.request(edits)
        self._set_status("pending…", None)
        self._refresh_controls()
        self._schedule()
        return None

    def _refused(self, path: str, message: str) -> None:
        self.last_refusal = message
        self.refusal.setText(f"refused: {message}")
        self.sig_refused.emit(path, message)

    def _schedule(self) -> None:
        due = self.coordinator.next_due()
        if due is not None:
            self._reload_timer.start(max(0, int((due - time.monotonic()) * 1000) + 1))

    def _start_reload(self) -> None:
        batch = self.coordinator.take()
        if batch is None:
            self._schedule()
            return
        text = self.working.text
        diff = describe(ConfigDocument.parse(self.engine.live_text), self.working, self.specs)
        self._set_status("applying…", None)
        source = self._source
        run_in_background(
            lambda: self.engine.reload(text, diff=diff, t_requested=batch.t_requested, edits=batch.edits, source=source),
            on_done=self._reload_done, on_failed=self._reload_crashed)

    def _reload_done(self, change: Change) -> None:
        self.coordinator.done()
        self._schedule()

    def _reload_crashed(self, message: str) -> None:
        self.coordinator.done()
        self._set_status(f"failed: {message}", False)
        self._schedule()

    def _show_change(self, change: Change) -> None:
        if not change.ok and self._job is None:
            # the previous config keeps serving: the controls go back to it (edits made since are kept)
            self.working = ConfigDocument.parse(self.engine.live_text)
            if self.coordinator.pending:
                apply_edits(self.working, self.coordinator.pending)
            self._refresh_controls()
        if change.ok and change.reload_s == 0:
            self._set_status("live", True)  # a measurement row, no reload
        elif change.ok:
            eased = ", load eased while Triton added/removed instances" if change.eased else ""
            self._set_status(f"live ({change.reload_s:.2f} s{eased})", True)
        else:
            self._set_status(f"failed: {change.message}", False)
        extra = f" ({change.errors_during_reload} requests failed during the reload)" if change.errors_during_reload else ""
        t = change.t_live if change.t_live is not None else change.t_started + change.reload_s
        label = change.diff if change.ok else f"FAILED {change.diff}"
        tip = (f"{change.diff}\nrequested at {change.t_requested:.2f} s, live at "
               f"{t:.2f} s (reload {change.reload_s:.2f} s){extra}" + (f"\n{change.message}" if change.message else ""))
        self.plots.add_marker(t, label, change.ok, tip)
        self.results.add_change(change)
        self._results_label()
        self.sig_change.emit(change)

    def _set_status(self, text: str, ok: bool | None) -> None:
        self.status_text = text
        color = "#27ae60" if ok else ("#e74c3c" if ok is False else "#d68910")
        self.status.setText(f"<span style='color:{color}'>●</span> {text}")
        self.status.setToolTip(text)
        self.sig_status.emit(text)

    def _refresh_controls(self) -> None:
        on = self.working.has(BATCHING)
        for c in self.controls.values():
            spec = c.spec
            c.set_value(current_value(self.working, spec))
            if spec.needs_batching:
                c.setEnabled(on and self._job is None)
            else:
                c.setEnabled(self._job is None)

    def apply_config_text(self, text: str, source: str = "row") -> str | None:
        """Re-apply a whole config (a results row): edits over the dashboard's fields, through request_edits."""
        target = ConfigDocument.parse(text)
        edits = keep_edits(self.working, target, self.specs)
        if not edits:
            return None
        return self.request_edits(edits, source=source)

    # -- samples (UI thread) ---------------------------------------------------------------------------------
    def _on_sample(self, s) -> None:
        self.series.append(self.engine.rel(s.t), sample_row(s))
        self._dirty = True
        if not self._redraw_timer.isActive() and not self._closing:
            self._redraw_timer.start(REDRAW_MS)

    def _on_steady(self, change: Change) -> None:
        self.results.update_change(change)

    def _redraw_tick(self) -> None:
        """The plot timer: new samples mark every plot stale; each tick updates one of them."""
        if self._dirty:
            self._dirty = False
            self._update_labels()
            self.plots.mark_stale()
        if not (self.plots.stale and self.plots.redraw_step()):
            self._redraw_timer.stop()

    def _redraw(self) -> None:
        """Every plot at once (tests, exports)."""
        self._dirty = False
        self._update_labels()
        self.plots.redraw()

    def _update_labels(self) -> None:
        self.plots.set_util_source(self.engine.util_source, self.engine.memory_source)
        text = f"failed requests: {self.engine.errors_total}"
        if self.errors_label.text() != text:
            self.errors_label.setText(text)
            if self.engine.errors_total:
                self.errors_label.setStyleSheet("color: #e74c3c")

    def _budget_changed(self, ms: float) -> None:
        self.results.set_budget(ms)

    # -- keep and export -------------------------------------------------------------------------------------
    def keep_edits(self) -> dict:
        """The edits Keep would hand to the shell: the serving settings over the dashboard's fields."""
        return keep_edits(self.document, ConfigDocument.parse(self.engine.live_text), self.specs)

    def keep(self) -> dict:
        edits = self.keep_edits()
        if self._keep is not None and edits:
            self._keep(edits)
        self.sig_kept.emit(edits)
        return edits

    def session_json(self) -> dict:
        return {"model": self.model, "target": self.target, "perf_analyzer": self.engine.perf_analyzer(),
                "changes": [c.to_json() for c in self.engine.changes], "samples": self.series.rows(),
                "errors_total": self.engine.errors_total, "ui_max_stall_ms": round(self.stalls.max_stall_ms, 1)}

    def export_json(self, path: str) -> None:
        Path(path).write_text(json.dumps(self.session_json(), indent=1), encoding="utf-8")

    def export_csv(self, path: str) -> None:
        """One row per applied change with its steady figures (the results table)."""
        keys = ["index", "t_requested", "t_live", "reload_s", "diff", "ok", "message", "throughput", "p50_ms",
                "p99_ms", "avg_batch_size", "time_to_steady_s", "stable", "errors_during_reload", "source"]
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
            w.writeheader()
            for c in self.engine.changes:
                row = c.to_json() | {"index": c.index}
                row.update(c.steady or {})
                w.writerow(row)

    def export_samples_csv(self, path: str) -> None:
        rows = self.series.rows()
        with open(path, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=["t", *self.series.fields])
            w.writeheader()
            w.writerows(rows)

    def _export_dialog(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export the session to a folder")
        if folder:
            self.export_all(folder)

    def export_all(self, folder: str) -> list[str]:
        base = Path(folder) / f"{self.model}-tuning"
        out = [f"{base}.json", f"{base}-changes.csv", f"{base}-samples.csv", f"{base}.png", f"{base}.svg",
               f"{base}-perf_analyzer.txt"]
        self.export_json(out[0])
        self.export_csv(out[1])
        self.export_samples_csv(out[2])
        self.plots.export_png(out[3])
        self.plots.export_svg(out[4])
        Path(out[5]).write_text(self.engine.perf_analyzer() + "\n", encoding="utf-8")
        return out

    # -- long runs (auto-tune, recipes, A/B) -----------------------------------------------------------------
    def run_job(self, name: str, fn: Callable[[], str]) -> bool:
        """Run a long job in the pool while the controls are locked; sig_job_done(summary) at the end."""
        if self._job is not None:
            return False
        self._stop_job = False
        self._job = name
        self._refresh_controls()
        self._set_status(f"{name} running…", None)

        def finished(summary):
            self._job = None
            if self._closing:
                return  # the window is gone (its widgets may be deleted): nothing to show
            self.working = ConfigDocument.parse(self.engine.live_text)
            self._refresh_controls()
            self._set_status(f"{name}: {summary}", True)
            self.sig_job_done.emit(str(summary))

        run_in_background(fn, on_done=finished, on_failed=lambda m: finished(f"failed: {m}"))
        return True

    def stop_job(self) -> None:
        self._stop_job = True

    @property
    def job_running(self) -> bool:
        return self._job is not None

    def color(self, ok: bool) -> QColor:
        return QColor("#27ae60" if ok else "#e74c3c")


__all__ = ["TuningDashboard", "keep_edits"]
