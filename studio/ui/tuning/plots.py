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
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication, QLabel, QVBoxLayout, QWidget

from studio.tuning.series import RingSeries
from studio.ui.tuning.pyside_guard import guard

guard()

WINDOWS = {"30 s": 30.0, "2 min": 120.0, "10 min": 600.0, "all": None}
COLORS = {"throughput": "#2e86de", "p50_ms": "#10ac84", "p90_ms": "#ff9f43", "p99_ms": "#ee5253",
          "queue_us": "#feca57", "compute_us": "#54a0ff", "avg_batch_size": "#5f27cd", "errors": "#c0392b",
          "util": "#01a3a4", "mem_mb": "#8395a7", "ok": "#7f8c8d", "failed": "#e74c3c", "budget": "#e74c3c"}


def _is_dark(pal: QPalette) -> bool:
    return pal.color(QPalette.ColorRole.Window).lightness() < 128


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
        self.p_tp = v.addPlot(0, 0, title="throughput (infer/s)")
        self.p_lat = v.addPlot(0, 1, title="client latency (ms)")
        self.p_srv = v.addPlot(1, 0, title="server time per request (us): queue + compute")
        self.p_batch = v.addPlot(1, 1, title="average batch size")
        self.p_err = v.addPlot(2, 0, title="errors per sample")
        self.p_util = v.addPlot(2, 1, title="server CPU utilization (%)")
        self.plots = [self.p_tp, self.p_lat, self.p_srv, self.p_batch, self.p_err, self.p_util]
        for p in self.plots:
            p.setClipToView(True)
            p.setDownsampling(auto=True, mode="peak")
            p.showGrid(x=True, y=True, alpha=0.2)
            p.setMenuEnabled(False)
            p.getAxis("left").setWidth(46)
            if p is not self.p_tp:
                p.setXLink(self.p_tp)
            p.enableAutoRange(axis="y", enable=True)
            p.setMouseEnabled(x=False, y=False)
        self.p_lat.addLegend(offset=(-4, 4), labelTextSize="8pt")
        self.p_srv.addLegend(offset=(-4, 4), labelTextSize="8pt")

        def curve(p, key, name=None, width=2):
            return p.plot(pen=pg.mkPen(COLORS[key], width=width), name=name)

        self.curves = {
            "throughput": curve(self.p_tp, "throughput"),
            "p50_ms": curve(self.p_lat, "p50_ms", "p50"),
            "p90_ms": curve(self.p_lat, "p90_ms", "p90"),
            "p99_ms": curve(self.p_lat, "p99_ms", "p99"),
            "avg_batch_size": curve(self.p_batch, "avg_batch_size"),
            "errors": curve(self.p_err, "errors"),
            "util": curve(self.p_util, "util"),
        }
        self._zero = self.p_srv.plot(pen=pg.mkPen(None))
        self._queue = self.p_srv.plot(pen=pg.mkPen(COLORS["queue_us"], width=1), name="queue")
        self._qc = self.p_srv.plot(pen=pg.mkPen(COLORS["compute_us"], width=1), name="compute")
        self._fill_q = pg.FillBetweenItem(self._zero, self._queue, brush=pg.mkBrush(QColor(COLORS["queue_us"]).lighter(110)))
        self._fill_c = pg.FillBetweenItem(self._queue, self._qc, brush=pg.mkBrush(QColor(COLORS["compute_us"]).lighter(110)))
        self.p_srv.addItem(self._fill_q)
        self.p_srv.addItem(self._fill_c)
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
        self._dark = _is_dark(pal)
        pg.setConfigOption("foreground", fg)

    def set_util_source(self, source: str | None) -> None:
        self.p_util.setTitle("GPU utilization (%)" if source == "gpu" else "server CPU utilization (%)")

    @property
    def budget_ms(self) -> float:
        return float(self.budget.value())

    def set_budget(self, ms: float) -> None:
        self.budget.setValue(ms)

    def set_window(self, label: str) -> None:
        self.window_s = WINDOWS[label]
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
    def redraw(self) -> None:
        s = self.series
        if not len(s):
            return
        sl = s.window(self.window_s)
        t = s.t()[sl]
        for key, c in self.curves.items():
            c.setData(t, s.column(key)[sl], connect="finite")
        q = np.nan_to_num(s.column("queue_us")[sl])
        qc = q + np.nan_to_num(s.column("compute_us")[sl])
        self._zero.setData(t, np.zeros_like(q))
        self._queue.setData(t, q)
        self._qc.setData(t, qc)
        t_end = float(t[-1])
        t_start = float(t[0]) if self.window_s is None else max(float(s.t()[0]), t_end - self.window_s)
        self.p_tp.setXRange(t_start, t_end + 0.5, padding=0)

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
