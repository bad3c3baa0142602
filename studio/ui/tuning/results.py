"""The dashboard's results: one row per applied config with its steady-state figures and ratios against a
pinned baseline, a throughput-vs-p99 scatter with the Pareto frontier and the budget, and the long runs that
make rows by themselves: auto-tune (studio.tuning.search), the four-step recipe (studio.tuning.recipes), and
A/B alternation of two rows with a 95% confidence interval (studio.tuning.abtest).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from studio.config import ConfigDocument
from studio.tuning.abtest import ab_schedule, compare
from studio.tuning.controls import apply_edits, describe
from studio.tuning.live import Change
from studio.tuning.recipes import FourStep

COLUMNS = ["#", "change", "by", "reload s", "to steady s", "infer/s", "p50 ms", "p99 ms", "batch", "failed req",
           "vs baseline"]


def pareto(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """(p99, throughput) points no other point beats on both (lower p99, higher throughput), by p99."""
    out, best = [], -1.0
    for p99, tp in sorted(points):
        if tp > best:
            out.append((p99, tp))
            best = tp
    return out


class ResultsPanel(QWidget):
    sig_row_applied = Signal(int)
    """A row's config was sent to be re-applied: the change index."""

    def __init__(self, dashboard, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.dash = dashboard
        self.rows: list[Change] = []
        self.baseline: int | None = None  # change index
        self.budget_ms = dashboard.plots.budget_ms if hasattr(dashboard, "plots") else 50.0
        self._tuner = None
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        bar = QHBoxLayout()
        self.pin_button = QPushButton("Pin baseline")
        self.apply_button = QPushButton("Apply row")
        self.ab_button = QPushButton("A/B")
        self.ab_rounds = QSpinBox()
        self.ab_rounds.setRange(2, 20)
        self.ab_rounds.setValue(3)
        self.ab_rounds.setSuffix(" rounds")
        self.tune_button = QPushButton("Auto-tune")
        self.recipe_button = QPushButton("Four-step recipe")
        self.stop_button = QPushButton("Stop run")
        self.stop_button.setEnabled(False)
        for w in (self.pin_button, self.apply_button, self.ab_button, self.ab_rounds, self.tune_button,
                  self.recipe_button, self.stop_button):
            bar.addWidget(w)
        bar.addStretch(1)
        lay.addLayout(bar)
        split = QSplitter(Qt.Orientation.Horizontal)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("resultsTable")
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().setVisible(False)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        self.table.setColumnWidth(1, 280)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        split.addWidget(self.table)
        self.scatter_plot = pg.PlotWidget(title="throughput vs p99")
        self.scatter_plot.setBackground(dashboard.plots.view.backgroundBrush().color())
        self.scatter_plot.setLabel("bottom", "p99 (ms)")
        self.scatter_plot.setLabel("left", "infer/s")
        self.scatter_plot.setMenuEnabled(False)
        self.scatter = pg.ScatterPlotItem(size=9, hoverable=True, tip=self._tip)
        self.frontier = self.scatter_plot.plot(pen=pg.mkPen("#8395a7", width=1), stepMode=None)
        self.scatter_plot.addItem(self.scatter)
        self.budget_line = pg.InfiniteLine(pos=self.budget_ms, angle=90,
                                           pen=pg.mkPen("#e74c3c", style=Qt.PenStyle.DashLine))
        self.scatter_plot.addItem(self.budget_line, ignoreBounds=True)
        self.scatter_plot.setMinimumWidth(220)
        split.addWidget(self.scatter_plot)
        split.setSizes([680, 220])
        lay.addWidget(split, 1)
        self.note = QLabel("")
        self.note.setObjectName("resultsNote")
        self.note.setWordWrap(True)
        lay.addWidget(self.note)
        self.pin_button.clicked.connect(self.pin_selected)
        self.apply_button.clicked.connect(self.apply_selected)
        self.table.cellDoubleClicked.connect(lambda r, _c: self.apply_row(r))
        # clicked(bool) would land in the first parameter (a checked flag as `rounds`, `space`, `concurrencies`)
        self.ab_button.clicked.connect(lambda: self.ab_selected())
        self.tune_button.clicked.connect(lambda: self.autotune())
        self.recipe_button.clicked.connect(lambda: self.four_step())
        self.stop_button.clicked.connect(self.stop)
        dashboard.sig_job_done.connect(self._job_done)

    # -- rows ---------------------------------------------------------------------------------------------------
    def add_change(self, change: Change) -> None:
        self.rows.append(change)
        self.table.insertRow(self.table.rowCount())
        if self.baseline is None and change.ok:
            self.baseline = change.index
        self._fill(len(self.rows) - 1)
        self._scatter()

    def update_change(self, change: Change) -> None:
        for i, c in enumerate(self.rows):
            if c is change or c.index == change.index:
                self._fill(i)
        self._refresh_ratios()
        self._scatter()

    def _tip(self, x, y, data) -> str:
        c = next((c for c in self.rows if c.index == data), None)
        return f"#{data} {c.diff if c else ''}: {y:,.0f} infer/s, p99 {x:.2f} ms"

    def _base(self) -> Change | None:
        return next((c for c in self.rows if c.index == self.baseline), None)

    def _fill(self, i: int) -> None:
        c = self.rows[i]
        st = c.steady or {}

        def num(v, fmt="{:.2f}"):
            return "" if v is None else fmt.format(v)

        base = self._base()
        ratio = ""
        if base is not None and base.steady and st and base is not c and base.steady.get("throughput"):
            tp = st["throughput"] / base.steady["throughput"]
            p99 = (st["p99_ms"] / base.steady["p99_ms"]) if st.get("p99_ms") and base.steady.get("p99_ms") else None
            ratio = f"{tp:.2f}x infer/s" + (f", {p99:.2f}x p99" if p99 is not None else "")
        elif base is c:
            ratio = "baseline"
        status = "" if c.ok else f"FAILED: {c.message}"
        vals = [str(c.index), c.diff if c.ok else f"{c.diff} — {status}", c.source, num(c.reload_s),
                num(st.get("time_to_steady_s"), "{:.1f}") + ("" if st.get("stable", True) else " (unstable)") if st else "…" if c.ok else "",
                num(st.get("throughput"), "{:,.0f}"), num(st.get("p50_ms")), num(st.get("p99_ms")),
                num(st.get("avg_batch_size"), "{:.1f}"), str(c.errors_during_reload), ratio]
        best = self._best()
        for col, v in enumerate(vals):
            item = QTableWidgetItem(v)
            item.setToolTip(c.message or c.diff)
            if not c.ok:
                item.setForeground(QBrush(QColor("#e74c3c")))
            elif best is not None and c is best:
                item.setBackground(QBrush(QColor(39, 174, 96, 70)))
            self.table.setItem(i, col, item)

    def _refresh_ratios(self) -> None:
        for i in range(len(self.rows)):
            self._fill(i)

    def _best(self) -> Change | None:
        ok = [c for c in self.rows if c.ok and c.steady and c.steady.get("p99_ms") is not None
              and c.steady["p99_ms"] <= self.budget_ms]
        return max(ok, key=lambda c: c.steady["throughput"]) if ok else None

    def set_budget(self, ms: float) -> None:
        self.budget_ms = ms
        self.budget_line.setValue(ms)
        self._refresh_ratios()
        self._scatter()

    def _scatter(self) -> None:
        pts = [(c.steady["p99_ms"], c.steady["throughput"], c) for c in self.rows
               if c.ok and c.steady and c.steady.get("p99_ms") is not None]
        best = self._best()
        spots = []
        for p99, tp, c in pts:
            color = "#27ae60" if c is best else ("#2e86de" if c.index == self.baseline else "#8395a7")
            spots.append({"pos": (p99, tp), "brush": pg.mkBrush(color), "data": c.index})
        self.scatter.setData(spots=spots)
        front = pareto([(p, t) for p, t, _ in pts])
        if front:
            xs = np.array([p for p, _ in front])
            ys = np.array([t for _, t in front])
            self.frontier.setData(xs, ys)
        else:
            self.frontier.setData([], [])

    def selected_rows(self) -> list[int]:
        return sorted({ix.row() for ix in self.table.selectionModel().selectedRows()})

    def pin_selected(self) -> None:
        sel = self.selected_rows()
        if sel:
            self.baseline = self.rows[sel[0]].index
            self._refresh_ratios()
            self._scatter()

    def apply_selected(self) -> None:
        sel = self.selected_rows()
        if sel:
            self.apply_row(sel[0])

    def apply_row(self, row: int) -> None:
        c = self.rows[row]
        if not c.ok:
            self.note.setText(f"row {c.index} failed to load; not re-applied")
            return
        message = self.dash.apply_config_text(c.text, source="row")
        if message:
            self.note.setText(f"row {c.index}: {message}")
        else:
            self.sig_row_applied.emit(c.index)

    # -- long runs ------------------------------------------------------------------------------------------
    def _started(self, ok: bool) -> None:
        self.stop_button.setEnabled(ok)
        for b in (self.tune_button, self.recipe_button, self.ab_button):
            b.setEnabled(not ok)

    def _job_done(self, summary: str) -> None:
        self._started(False)
        self._tuner = None
        self.note.setText(summary)

    def stop(self) -> None:
        self.dash.stop_job()
        if self._tuner is not None:
            self._tuner.budget_s = -1.0  # out of time: the search ends after the point it measures

    def ab_selected(self, rounds: int | None = None) -> bool:
        sel = self.selected_rows()
        if len(sel) != 2:
            self.note.setText("A/B: select two rows (Ctrl+click)")
            return False
        return self.ab(self.rows[sel[0]], self.rows[sel[1]], rounds or self.ab_rounds.value())

    def ab(self, a: Change, b: Change, rounds: int) -> bool:
        engine, dash = self.dash.engine, self.dash

        def run():
            tps = {"A": [], "B": []}
            p99s = {"A": [], "B": []}
            for which in ab_schedule(rounds):
                if dash._stop_job:
                    break
                src = a if which == "A" else b
                ch = engine.reload(src.text, diff=f"{which} (row {src.index})", source="ab")
                if not ch.ok:
                    return f"A/B stopped: row {src.index} failed to load: {ch.message}"
                st = engine.wait_steady(ch, 40.0)
                if st:
                    tps[which].append(st["throughput"])
                    if st.get("p99_ms") is not None:
                        p99s[which].append(st["p99_ms"])
            if min(len(tps["A"]), len(tps["B"])) < 2:
                return "A/B: not enough measurements"
            t = compare(tps["A"], tps["B"])
            out = f"A/B row {a.index} vs {b.index}, {rounds} rounds: throughput {t.text('infer/s')}"
            if min(len(p99s["A"]), len(p99s["B"])) >= 2:
                out += f"; p99 {compare(p99s['A'], p99s['B']).text('ms')}"
            return out

        ok = dash.run_job("A/B", run)
        self._started(ok)
        return ok

    def four_step(self, concurrencies=(8, 16, 32, 64)) -> bool:
        engine, dash = self.dash.engine, self.dash
        mbs = int(ConfigDocument.parse(engine.live_text).get("max_batch_size") or 1)
        recipe = FourStep(self.budget_ms, mbs, concurrencies)

        def run():
            figures = None
            while not dash._stop_job:
                action = recipe.next(figures)
                if action is None:
                    break
                before = ConfigDocument.parse(engine.live_text)
                after = ConfigDocument.parse(engine.live_text)
                if action.concurrency is not None:
                    engine.set_concurrency(action.concurrency)
                if action.edits:
                    apply_edits(after, action.edits)
                    diff = f"step {action.step}: " + describe(before, after)
                    ch = engine.reload(after.text, diff=diff, edits=action.edits, source="recipe")
                    if not ch.ok:
                        figures = None
                        continue
                else:
                    ch = engine.remeasure(f"step {action.step}: {action.title}", source="recipe")
                figures = engine.wait_steady(ch, 40.0)
            lines = [f"{s['step']}. {s['title']}: {s['throughput'] or 0:,.0f}/s p99 "
                     f"{(s['p99_ms'] or 0):.1f} ms" for s in recipe.summary()]
            return "four-step: " + "; ".join(lines)

        ok = dash.run_job("four-step recipe", run)
        self._started(ok)
        return ok

    def autotune(self, space=None, point_budget_s: float = 12.0, rounds: int = 1) -> bool:
        """The CLI's auto-tune (studio.tuning.search) run live at the dashboard's load: every probe is a change, a
        marker and a row; then the top three are re-measured alternating (`rounds`) before a best is named."""
        from studio.tuning.live import EngineSession
        from studio.tuning.search import Space, Tuner

        engine, dash = self.dash.engine, self.dash
        doc = ConfigDocument.parse(engine.live_text)
        if space is None:
            space = Space.for_model(doc.to_message())  # instances and batch sizes from the model and the machine
            space.concurrency = [engine.concurrency or 16]  # the load the user set: the search keeps it
        session = EngineSession(engine, doc)
        self._tuner = Tuner(session, self.budget_ms, budget_s=None, point_budget_s=point_budget_s)

        def run():
            result = self._tuner.tune(space, rounds=rounds)
            n = len(result.measurements)
            if result.best is None:
                return f"auto-tune: no configuration under p99 {self.budget_ms:.1f} ms ({n} measured)"
            b, w = result.best, result.winner
            ci = ""
            if w is not None and len(w.throughputs) >= 2:
                lo, hi = w.ci()
                ci = f" (95% CI {lo:,.0f}..{hi:,.0f})"
            return (f"auto-tune: best {b.point.label()}: {b.throughput:,.0f}/s{ci} at p99 {b.p99_ms:.1f} ms "
                    f"({n} points, top {len(result.confirmed)} re-measured): select its row and Apply, then Keep")

        ok = dash.run_job("auto-tune", run)
        self._started(ok)
        return ok
