"""The dashboard's live plots (pyqtgraph): throughput, latency percentiles with a draggable p99 budget, server
queue vs compute time (stacked), average batch size, errors, and GPU (or server CPU) utilization; x axes linked,
a scrolling time window, change markers labelled with their diff, a hover readout of exact values.

Data comes from a studio.tuning.series.RingSeries the dashboard fills on the UI thread; redraw() runs at most at
the sample rate and hands pyqtgraph views of the ring buffers (clip-to-view and peak downsampling on).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Signal
from PySide6.QtGui import QColor, QFont, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from studio.tuning.series import RingSeries

WINDOWS = {"30 s": 30.0, "2 min": 120.0, "10 min": 600.0, "all": None}
COLORS = {"throughput": "#2e86de", "p50_ms": "#10ac84", "p90_ms": "#ff9f43", "p99_ms": "#ee5253",
          "queue_us": "#feca57", "compute_us": "#54a0ff", "avg_batch_size": "#5f27cd", "errors": "#c0392b",
          "util": "#01a3a4", "mem_mb": "#8395a7", "ok": "#7f8c8d", "failed": "#e74c3c", "budget": "#e74c3c"}


def _mix(a: QColor, b: QColor, f: float) -> QColor:
    return QColor(round(a.red() + (b.red() - a.red()) * f), round(a.green() + (b.green() - a.green()) * f),
                  round(a.blue() + (b.blue() - a.blue()) * f))


def _is_dark(pal: QPalette) -> bool:
    return pal.color(QPalette.ColorRole.Window).lightness() < 128


def peak_downsample(t: np.ndarray, y: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """At most ~limit points: each run of k samples becomes its min and its max (pyqtgraph's "peak" mode, once
    per new sample instead of on every view change). NaN stays NaN (a gap) only where a whole run is NaN."""
    n = len(t)
    if n <= limit or limit < 4:
        return t, y
    k = int(np.ceil(n / (limit // 2)))
    m = n // k
    head = slice(0, m * k)
    yy = y[head].reshape(m, k)
    lo = np.fmin.reduce(yy, axis=1)
    hi = np.fmax.reduce(yy, axis=1)
    tt = t[head].reshape(m, k)
    t2 = np.empty(2 * m)
    y2 = np.empty(2 * m)
    t2[0::2] = tt[:, 0]
    t2[1::2] = tt[:, -1]
    y2[0::2] = lo
    y2[1::2] = hi
    if m * k < n:
        t2 = np.concatenate([t2, t[m * k:]])
        y2 = np.concatenate([y2, y[m * k:]])
    return t2, y2


class LivePlots(QWidget):
    """Six linked plots over a RingSeries, with markers and a p99 budget line."""

    sig_budget_changed = Signal(float)
    """The user dragged the p99 budget line: the new budget in ms."""

    def __init__(self, series: RingSeries, budget_ms: float = 50.0, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.series = series
        self.window_s: float | None = 120.0
        self.markers: list[tuple[float, str, bool, list]] = []
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.setSpacing(2)
        self.view = pg.GraphicsLayoutWidget()
        lay.addWidget(self.view, 1)
        self.readout = QLabel(" ")
        self.readout.setObjectName("hoverReadout")
        lay.addWidget(self.readout)
        self._apply_palette()
        v = self.view
        v.ci.layout.setSpacing(0)
        v.ci.setContentsMargins(2, 2, 2, 2)
        small = {"size": "9pt"}
        self.p_tp = pg.PlotItem(title="throughput (infer/s)")
        self.p_lat = pg.PlotItem(title="client latency (ms)")
        self.p_srv = pg.PlotItem(title="server time / request (us)")
        self.p_batch = pg.PlotItem(title="average batch size")
        self.p_err = pg.PlotItem(title="errors per sample")
        self.p_util = pg.PlotItem(title="server CPU utilization (%)")
        self.plots = [self.p_tp, self.p_lat, self.p_srv, self.p_batch, self.p_err, self.p_util]
        for p in self.plots:
            p.setTitle(p.titleLabel.text, **small)
            p.titleLabel.setMaximumHeight(16)
            p.layout.setRowFixedHeight(0, 16)
            # no clip-to-view or auto-downsampling in pyqtgraph: both recompute every curve whenever the x range
            # moves (and the linked range moves all six plots at once); the series hands over only the window's
            # slice, and _update_plot peak-downsamples it to ~2 points per pixel itself (peak_downsample)
            # no grid: pyqtgraph draws the grid as part of each axis' picture over the whole plot, so every curve
            # update repainted both axes (QPicture.play of lines and tick text, ~3 ms each, 5 per update: the
            # biggest cost of the live view in the profile)
            for ax in ("left", "bottom"):
                axis = p.getAxis(ax)
                axis.setPen(pg.mkPen(self._grid_color, width=1))
                axis.setTextPen(pg.mkPen(self._fg))
            p.setMenuEnabled(False)
            p.hideButtons()
            p.getAxis("left").setWidth(40)
            p.getAxis("bottom").setHeight(20)
            for ax in ("left", "bottom"):
                p.getAxis(ax).setStyle(tickFont=self._tick_font, tickTextOffset=2)
            # y ranges are ours (see _fit_y): pyqtgraph's auto-range recomputed the bounds and re-rendered the
            # left axis on every setData
            p.enableAutoRange(axis="y", enable=False)
            p.enableAutoRange(axis="x", enable=False)
            p.setMouseEnabled(x=False, y=False)
            if p is not self.plots[0]:
                # x axes linked to the throughput plot; the x range moves in steps (_scroll), so the linked
                # plots repaint together only once per step, not on every sample
                p.setXLink(self.plots[0])
        self._columns = 0
        self._relayout(2)
        self.p_lat.addLegend(offset=(-4, 4), labelTextSize="8pt")
        self.p_srv.addLegend(offset=(-4, 4), labelTextSize="8pt")

        def curve(p, key, name=None, width=1.5, **kw):
            return p.plot(pen=pg.mkPen(COLORS[key], width=width), name=name, **kw)

        self.curves = {
            "throughput": curve(self.p_tp, "throughput"),
            "p50_ms": curve(self.p_lat, "p50_ms", "p50"),
            "p90_ms": curve(self.p_lat, "p90_ms", "p90"),
            "p99_ms": curve(self.p_lat, "p99_ms", "p99"),
            "avg_batch_size": curve(self.p_batch, "avg_batch_size"),
            "errors": curve(self.p_err, "errors"),
            "util": curve(self.p_util, "util"),
        }
        # stacked queue + compute: the total filled in the compute colour, the queue part over it (two filled
        # curves, no FillBetweenItem: its Python-built path was the costliest item of a redraw)
        self._qc = curve(self.p_srv, "compute_us", "compute", width=1, fillLevel=0,
                         brush=pg.mkBrush(QColor(COLORS["compute_us"]).lighter(110)), skipFiniteCheck=True)
        self._queue = curve(self.p_srv, "queue_us", "queue", width=1, fillLevel=0,
                            brush=pg.mkBrush(QColor(COLORS["queue_us"]).lighter(110)), skipFiniteCheck=True)
        self._members = {self.p_tp: ["throughput"], self.p_lat: ["p50_ms", "p90_ms", "p99_ms"], self.p_srv: [],
                         self.p_batch: ["avg_batch_size"], self.p_err: ["errors"], self.p_util: ["util"]}
        self._stale: list = []  # plots whose data is older than the series (redraw_step takes one per call)
        self._y_top: dict = {}  # plot -> the top of its y range (0 is the bottom of every plot)
        self._x_shown: tuple[float, float] | None = None
        # server memory (RSS of the Triton process tree, or the GPU's memory) on a right axis of the util plot
        self.mem_view = pg.ViewBox(enableMouse=False)
        self.mem_view.setMouseEnabled(x=False, y=False)
        self.p_util.showAxis("right")
        self.view.scene().addItem(self.mem_view)
        self.p_util.getAxis("right").linkToView(self.mem_view)
        self.p_util.getAxis("right").setLabel("MB", **{"font-size": "8pt"})
        self.p_util.getAxis("right").setWidth(44)
        self.p_util.getAxis("right").setStyle(tickFont=self._tick_font, tickTextOffset=2)
        self.p_util.getAxis("right").setTextPen(pg.mkPen(COLORS["mem_mb"]))
        self.p_util.getAxis("right").setPen(pg.mkPen(self._grid_color, width=1))
        self.mem_view.setXLink(self.p_util.vb)
        self.mem_view.enableAutoRange(enable=False)
        self.mem_curve = pg.PlotCurveItem(pen=pg.mkPen(COLORS["mem_mb"], width=1.5, style=pg.QtCore.Qt.PenStyle.DotLine),
                                          skipFiniteCheck=False, connect="finite")
        self.mem_view.addItem(self.mem_curve)
        self.p_util.vb.sigResized.connect(self._mem_geometry)
        self._members[self.p_util] = ["util", "mem_mb"]
        self.budget = pg.InfiniteLine(pos=budget_ms, angle=0, movable=True,
                                      pen=pg.mkPen(COLORS["budget"], width=1, style=pg.QtCore.Qt.PenStyle.DashLine),
                                      label="p99 budget {value:.1f} ms",
                                      labelOpts={"position": 0.45, "color": COLORS["budget"], "movable": True})
        self.budget.setToolTip("drag: the p99 latency budget")
        self.p_lat.addItem(self.budget, ignoreBounds=True)
        self.budget.sigPositionChangeFinished.connect(lambda line: self.sig_budget_changed.emit(float(line.value())))
        self._proxy = pg.SignalProxy(self.view.scene().sigMouseMoved, rateLimit=20, slot=self._hover)

    def _apply_palette(self) -> None:
        pal = (QApplication.instance().palette() if QApplication.instance() else self.palette())
        bg = pal.color(QPalette.ColorRole.Base)
        fg = pal.color(QPalette.ColorRole.Text)
        self.view.setBackground(bg)
        self._fg = fg
        self._grid_color = _mix(bg, fg, 0.18)
        self._tick_font = QFont(self.font())
        self._tick_font.setPointSizeF(max(7.0, self.font().pointSizeF() - 1.5))
        self._dark = _is_dark(pal)
        pg.setConfigOption("foreground", fg)

    def _mem_geometry(self) -> None:
        self.mem_view.setGeometry(self.p_util.vb.sceneBoundingRect())

    def set_util_source(self, source: str | None, memory: str | None = None) -> None:
        util = "GPU util (%)" if source == "gpu" else "server CPU (%)"
        mem = {"rss": "server RSS (MB, dotted)", "gpu": "GPU memory (MB, dotted)"}.get(memory or "")
        title = f"{util} · {mem}" if mem else util
        if self.p_util.titleLabel.text != title:
            self.p_util.setTitle(title, size="9pt")

    @property
    def budget_ms(self) -> float:
        return float(self.budget.value())

    def set_budget(self, ms: float) -> None:
        self.budget.setValue(ms)

    def set_window(self, label: str) -> None:
        self.window_s = WINDOWS[label]
        self._x_shown = None
        self.redraw()

    # -- markers ------------------------------------------------------------------------------------------
    def add_marker(self, t: float, label: str, ok: bool = True, tooltip: str | None = None) -> None:
        color = COLORS["ok"] if ok else COLORS["failed"]
        lines = []
        for p in self.plots:
            labelled = p in (self.p_tp,)
            line = pg.InfiniteLine(pos=t, angle=90, movable=False,
                                   pen=pg.mkPen(color, width=2 if not ok else 1, style=pg.QtCore.Qt.PenStyle.DashLine),
                                   label=label if labelled else None,
                                   labelOpts={"position": 0.92 - 0.12 * (len(self.markers) % 4), "color": color,
                                              "fill": pg.mkBrush(self.view.backgroundBrush().color()),
                                              "anchors": [(1, 0.5), (1, 0.5)]} if labelled else None)
            line.setToolTip(tooltip or label)
            p.addItem(line, ignoreBounds=True)
            lines.append(line)
        self.markers.append((t, label, ok, lines))

    # -- drawing ------------------------------------------------------------------------------------------
    def _relayout(self, columns: int) -> None:
        """Arrange the six plots in `columns` columns (3 x 2, 2 x 3 or 1 x 6)."""
        if columns == self._columns:
            return
        self._columns = columns
        ci = self.view.ci
        for p in self.plots:
            if p.scene() is not None and p in ci.items:
                ci.removeItem(p)
        for i, p in enumerate(self.plots):
            ci.addItem(p, i // columns, i % columns)
        rows = (len(self.plots) + columns - 1) // columns
        for i, p in enumerate(self.plots):
            # the x axis only under the lowest plot of each column (the axes are linked): the others' axes would
            # be regenerated on every scroll step for tick lines nobody reads
            p.showAxis("bottom", i // columns == rows - 1 or i + columns >= len(self.plots))

    def resizeEvent(self, event) -> None:  # noqa: N802 - Qt
        super().resizeEvent(event)
        w = event.size().width()
        self._relayout(3 if w >= 1100 else 2 if w >= 480 else 1)

    def mark_stale(self) -> None:
        """New samples: every plot needs new data (redraw_step does one plot per call)."""
        self._stale = list(self.plots)

    @property
    def stale(self) -> bool:
        return bool(self._stale)

    def redraw(self) -> None:
        """Every plot now (exports, a new window, tests)."""
        self._stale = []
        for p in self.plots:
            self._update_plot(p)

    def redraw_step(self) -> bool:
        """Update the next stale, visible plot: one plot per event-loop turn, so no turn paints all six.
        True while plots are left."""
        while self._stale:
            p = self._stale.pop(0)
            if p.isVisible() and self.view.isVisible():
                self._update_plot(p)
                return bool(self._stale)
        return False

    def _x_range(self) -> tuple[float, float] | None:
        """The x range to show: the window ending at the newest sample, with room ahead of it (a tenth of the
        window, at least 2 s) so that the view scrolls in steps rather than on every sample."""
        s = self.series
        if not len(s):
            return None
        t = s.t()
        t_first, t_end = float(t[0]), float(t[-1])
        shown = self._x_shown
        if self.window_s is None:
            span = max(t_end - t_first, 1.0)
            ahead = max(2.0, 0.1 * span)
            if shown is not None and 0 <= t_first - shown[0] <= ahead and t_end + 0.25 <= shown[1] \
                    and shown[1] - t_end <= 2 * ahead:
                return shown
            return t_first, t_end + ahead
        ahead = max(2.0, 0.1 * self.window_s)
        if shown is not None and abs(shown[1] - shown[0] - self.window_s - ahead) < 1e-6 and t_end + 0.25 <= shown[1] \
                and shown[1] - t_end <= ahead + 0.5:
            return shown
        if t_end + 0.5 - self.window_s < t_first:
            # the window is not filled yet: the range grows from the first sample in steps of half its span
            # (few steps, each one repaint of the linked plots), never wider than the window
            if shown is not None and shown[0] == t_first and t_end + 0.25 <= shown[1] and \
                    shown[1] - shown[0] <= self.window_s + ahead:
                return shown
            span = min(self.window_s + ahead, max(10.0, 1.5 * (t_end - t_first)))
            return t_first, t_first + span
        start = t_end + 0.5 - self.window_s
        return start, start + self.window_s + ahead

    def _scroll(self) -> None:
        """Move the linked x range when the newest sample reaches its right end (all plots repaint then)."""
        rng = self._x_range()
        if rng is not None and rng != self._x_shown:
            self._x_shown = rng
            self.plots[0].setXRange(*rng, padding=0)

    @staticmethod
    def _nice(v: float) -> float:
        """A round number >= v (1, 2, 2.5, 5 x 10^k)."""
        if not np.isfinite(v) or v <= 0:
            return 1.0
        e = 10 ** np.floor(np.log10(v))
        for m in (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10):
            if m * e >= v:
                return float(m * e)
        return float(10 * e)

    def _fit_y(self, p, vb, hi: float, key=None) -> None:
        """Set the y range [0, top] only when the data leaves it or uses less than 40% of it: the axis is not
        re-rendered on every sample."""
        key = key or p
        top = self._y_top.get(key)
        if not np.isfinite(hi) or hi <= 0:
            hi = 0.0
        if top is None or hi > top or hi < 0.4 * top:
            new = self._nice(hi * 1.15) if hi > 0 else (top if top is not None and hi == 0 and top <= 1 else 1.0)
            if new != top:
                self._y_top[key] = new
                vb.setYRange(0, new, padding=0)

    def _update_plot(self, p) -> None:
        s = self.series
        if not len(s):
            return
        self._scroll()
        sl = s.window(self.window_s)
        t = s.t()[sl]
        limit = max(200, 2 * int(p.vb.width() or 400))
        if p is self.p_srv:
            q = np.nan_to_num(s.column("queue_us")[sl])
            total = q + np.nan_to_num(s.column("compute_us")[sl])
            self._queue.setData(*peak_downsample(t, q, limit))
            self._qc.setData(*peak_downsample(t, total, limit))
            self._fit_y(p, p.vb, float(total.max()) if len(total) else 0.0)
            return
        hi = 0.0
        for key in self._members[p]:
            col = s.column(key)[sl]
            finite = ~np.isnan(col)
            has_nan = not finite.all()
            tx, cx = peak_downsample(t, col, limit)
            if key == "mem_mb":
                self.mem_curve.setData(tx, cx, connect="finite" if has_nan else "all", skipFiniteCheck=not has_nan)
                self._fit_y(p, self.mem_view, float(col[finite].max()) if finite.any() else 0.0, key="mem")
                continue
            self.curves[key].setData(tx, cx, connect="finite" if has_nan else "all", skipFiniteCheck=not has_nan)
            if finite.any():
                hi = max(hi, float(col[finite].max()))
        self._fit_y(p, p.vb, hi)

    def _hover(self, event) -> None:
        pos = event[0]
        for p in self.plots:
            if p.sceneBoundingRect().contains(pos):
                x = p.vb.mapSceneToView(pos).x()
                self.readout.setText(self.describe_at(x))
                return

    def describe_at(self, x: float) -> str:
        s = self.series
        t = s.t()
        if not len(t):
            return " "
        i = int(np.clip(np.searchsorted(t, x), 0, len(t) - 1))
        if i > 0 and abs(t[i - 1] - x) < abs(t[i] - x):
            i -= 1

        def v(key, fmt):
            val = s.column(key)[i]
            return "-" if np.isnan(val) else fmt.format(val)

        near = [m[1] for m in self.markers if abs(m[0] - t[i]) < 0.5]
        text = (f"t {t[i]:.2f} s   throughput {v('throughput', '{:,.0f}')}/s   p50 {v('p50_ms', '{:.2f}')}   "
                f"p90 {v('p90_ms', '{:.2f}')}   p99 {v('p99_ms', '{:.2f}')} ms   queue {v('queue_us', '{:.0f}')} us   "
                f"compute {v('compute_us', '{:.0f}')} us   batch {v('avg_batch_size', '{:.1f}')}   "
                f"errors {v('errors', '{:.0f}')}")
        if near:
            text += "   | change: " + "; ".join(near)
        return text

    def export_png(self, path: str) -> None:
        from pyqtgraph.exporters import ImageExporter

        ImageExporter(self.view.scene()).export(path)

    def export_svg(self, path: str) -> None:
        """SVG of the plots (pyqtgraph's SVGExporter when it copes with this Qt, else Qt's SVG generator)."""
        try:
            from pyqtgraph.exporters import SVGExporter

            SVGExporter(self.view.scene()).export(path)
            return
        except Exception:  # noqa: BLE001 - pyqtgraph 0.14's path parser fails on some PySide6 path strings
            pass
        from PySide6.QtCore import QRect, QSize
        from PySide6.QtGui import QPainter
        from PySide6.QtSvg import QSvgGenerator

        gen = QSvgGenerator()
        gen.setFileName(path)
        gen.setSize(QSize(self.view.width(), self.view.height()))
        gen.setViewBox(QRect(0, 0, self.view.width(), self.view.height()))
        gen.setTitle("Triton Config Studio: live tuning")
        painter = QPainter(gen)
        self.view.render(painter)
        painter.end()
