"""The dashboard's long runs and load shapes against the real embedded Triton, driven by real clicks and keys
(offscreen, pytest-qt): A/B of two rows (alternating, the CI in the results note), the four-step recipe (each
step a row with its figures, the summary in the note), traffic shapes (step, ramp, a trace CSV picked in the
file dialog: the load follows), auto-tune started and stopped from its buttons, the server's RSS plot and the
linked, scrolling x axes. One server for the module."""

from __future__ import annotations

import re
import time

import numpy as np
import pytest

from tests.conftest import scaled, scaled_s
from tests.runtime.helpers import embedded_demo

pytestmark = pytest.mark.gui
MODEL = "batched_sleep"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with embedded_demo(tmp_path_factory.mktemp("dashruns"), MODEL) as s:
        yield s


@pytest.fixture
def make_dash(qtbot, server):
    from studio.config import ConfigDocument
    from studio.ui.tuning.dashboard import TuningDashboard

    rt, ep, client, repo = server
    made = []

    def make(batching=True, concurrency=8, **kw):
        doc = ConfigDocument.load(repo / MODEL / "config.pbtxt")
        if batching:
            doc.set("dynamic_batching.max_queue_delay_microseconds", 0)
        client.load(MODEL, config=doc)  # the server runs what the dashboard starts from
        kw.setdefault("steady_budget_s", scaled_s(4))
        dash = TuningDashboard(ep.grpc, MODEL, doc, client, concurrency=concurrency, **kw)
        dash.resize(1280, 800)
        qtbot.addWidget(dash)
        dash.show()
        made.append(dash)
        qtbot.waitUntil(lambda: len(dash.series) >= 4, timeout=scaled(10_000))
        return dash

    yield make
    for d in made:
        d.shutdown()


def _click(widget) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    QTest.mouseClick(widget, Qt.MouseButton.LeftButton)


def _click_row(table, row: int, ctrl: bool = False) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    rect = table.visualRect(table.model().index(row, 0))
    mod = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, mod, rect.center())


def _choose(combo, text: str) -> None:
    """Pick an item of a combo box with the keyboard (emits activated, like a user's choice)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    combo.setFocus()
    target = combo.findText(text)
    assert target >= 0, text
    while combo.currentIndex() != target:
        QTest.keyClick(combo, Qt.Key.Key_Down if combo.currentIndex() < target else Qt.Key.Key_Up)


def _set_spin(spin, value) -> None:
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    spin.setFocus()
    spin.selectAll()
    QTest.keyClicks(spin, str(value))
    QTest.keyClick(spin, Qt.Key.Key_Return)


def _mean_tp(dash, t_from: float, t_to: float) -> float:
    t = dash.series.t()
    tp = dash.series.column("throughput")
    sel = (t >= t_from) & (t <= t_to)
    assert sel.any(), f"no samples between {t_from:.1f} and {t_to:.1f} s"
    return float(np.nanmean(tp[sel]))


def test_ab_alternates_two_rows_and_reports_a_confidence_interval(qtbot, make_dash):
    dash = make_dash(batching=True, concurrency=8)
    qtbot.waitUntil(lambda: len(dash.results.rows) == 1, timeout=scaled(5000))  # "initial config"
    qc = dash.control("dynamic_batching.max_queue_delay_microseconds")
    with qtbot.waitSignal(dash.sig_change, timeout=scaled(15_000)):
        qc.box.setFocus()
        qc.box.selectAll()
        from PySide6.QtCore import Qt
        from PySide6.QtTest import QTest

        QTest.keyClicks(qc.box, "20000")
        QTest.keyClick(qc.box, Qt.Key.Key_Return)
    table = dash.results.table
    assert table.rowCount() == 2
    _click_row(table, 0)
    _click_row(table, 1, ctrl=True)
    assert dash.results.selected_rows() == [0, 1]
    _set_spin(dash.results.ab_rounds, 2)
    n0 = len(dash.engine.changes)
    with qtbot.waitSignal(dash.sig_job_done, timeout=scaled(60_000)) as done:
        _click(dash.results.ab_button)
        assert dash.job_running and dash.results.stop_button.isEnabled()
        assert not dash.control("dynamic_batching.max_queue_delay_microseconds").isEnabled()  # locked
    summary = done.args[0]
    print(summary)
    ab = [c for c in dash.engine.changes[n0:] if c.source == "ab"]
    assert [c.diff for c in ab] == ["A (row 1)", "B (row 2)", "A (row 1)", "B (row 2)"]
    assert all(c.ok for c in ab)
    assert [m[1] for m in dash.plots.markers[-4:]] == [c.diff for c in ab]
    # the figures: B (a 20 ms queue delay at 8 in flight) against A, with the interval, in the widget
    note = dash.results.note.text()
    assert note == summary
    m = re.search(r"A/B row 1 vs 2, 2 rounds: throughput B-A ([-+][\d.e+]+) infer/s "
                  r"\(95% CI ([-+][\d.e+]+) \.\. ([-+][\d.e+]+) infer/s\)", note)
    assert m, note
    diff, low, high = (float(x) for x in m.groups())
    assert low <= diff <= high
    assert "; p99 B-A" in note and "95% CI" in note.split("; p99")[1]
    assert not dash.job_running and dash.control("dynamic_batching.max_queue_delay_microseconds").isEnabled()


def test_four_step_recipe_shows_each_steps_figures(qtbot, make_dash):
    dash = make_dash(batching=True, concurrency=8, steady_budget_s=scaled_s(3))
    dash.plots.set_budget(8.0)  # a tight budget: the preferred-size doubling stops early (the test stays short)
    dash.results.set_budget(8.0)
    with qtbot.waitSignal(dash.sig_job_done, timeout=scaled(90_000)) as done:
        _click(dash.results.recipe_button)
        assert dash.job_running
    summary = done.args[0]
    print(summary)
    rows = [c for c in dash.engine.changes if c.source == "recipe"]
    steps = [int(c.diff.split(":")[0].removeprefix("step ")) for c in rows]
    assert steps[:2] == [1, 2] and 3 in steps and steps[-4:] == [4, 4, 4, 4], [c.diff for c in rows]
    assert rows[0].diff == "step 1: batching on->off" and rows[1].diff.startswith("step 2: batching off->on")
    assert [c.concurrency for c in rows[-4:]] == [8, 16, 32, 64]
    # every step has its figures, in the table and in the summary
    for c in rows:
        assert c.steady and c.steady["throughput"] > 0, c.diff
    assert summary.startswith("four-step: 1. baseline: no batching: ")
    parts = summary.removeprefix("four-step: ").split("; ")
    assert len(parts) == len(rows)
    for part in parts:
        assert re.fullmatch(r"[1-4]\. .+: [\d,]+/s p99 [\d.]+ ms", part), part
    # batching beats no batching at the same load (the recipe's point), and the table shows the rows
    assert rows[1].steady["throughput"] > 2 * rows[0].steady["throughput"]
    assert dash.results.table.rowCount() == len(dash.engine.changes)
    assert dash.results.note.text() == summary


def test_step_and_ramp_shapes_drive_the_load(qtbot, make_dash):
    dash = make_dash(batching=True, concurrency=2)
    dash.side_tabs.setCurrentIndex(1)  # the Load tab
    _set_spin(dash.shape_to, 24)
    _set_spin(dash.shape_s, 2)
    t_set = dash.engine.now()
    _choose(dash.shape, "step")
    qtbot.waitUntil(lambda: dash.engine.concurrency == 24, timeout=scaled(5000))
    t_step = dash.engine.now()
    assert 1.5 <= t_step - t_set <= 3.5
    qtbot.waitUntil(lambda: dash.engine.now() > t_step + 3, timeout=scaled(8000))
    before = _mean_tp(dash, t_set + 0.5, t_set + 1.8)
    after = _mean_tp(dash, t_step + 1.5, t_step + 3)
    print(f"step 2 -> 24 in flight: {before:.0f}/s -> {after:.0f}/s")
    assert after > 3 * before
    # ramp back down to 2 over 3 s: the concurrency passes through the values between
    _set_spin(dash.shape_to, 2)
    _set_spin(dash.shape_s, 3)
    seen = []
    dash.sig_sample.connect(lambda _s: seen.append(dash.engine.concurrency))
    _choose(dash.shape, "ramp")
    qtbot.waitUntil(lambda: dash.engine.concurrency == 2, timeout=scaled(8000))
    between = {c for c in seen if 2 < c < 24}
    assert len(between) >= 3, seen
    assert seen == sorted(seen, reverse=True)
    _choose(dash.shape, "steady")
    assert dash.engine._shape is None


def test_a_trace_csv_picked_in_the_dialog_drives_the_rate(qtbot, make_dash, tmp_path):
    from PySide6.QtCore import Qt, QTimer
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QApplication, QFileDialog, QLineEdit

    trace = tmp_path / "rate.csv"
    trace.write_text("t_s,requests_per_s\n0,40\n3,400\n6,400\n", encoding="utf-8")
    dash = make_dash(batching=True, concurrency=4)
    dash.side_tabs.setCurrentIndex(1)
    picked = []
    deadline = time.monotonic() + scaled(10_000) / 1000

    def pick():
        # the open file dialog among the top-level widgets; the user types the path and presses Enter
        dlg = next((w for w in QApplication.topLevelWidgets() if isinstance(w, QFileDialog) and w.isVisible()), None)
        if dlg is None:
            if time.monotonic() < deadline:
                QTimer.singleShot(50, pick)
            return  # no file dialog came: the asserts below fail
        if time.monotonic() > deadline:
            dlg.reject()  # fail, do not hang
            return
        edit = dlg.findChild(QLineEdit, "fileNameEdit")
        if not picked:
            picked.append(dlg.windowTitle())
        if edit is not None:
            edit.setFocus()
            edit.setText(str(trace))
            QTest.keyClick(edit, Qt.Key.Key_Return)
        QTimer.singleShot(100, pick)  # until it has closed

    QTimer.singleShot(50, pick)
    t0 = dash.engine.now()
    target = dash.shape.findText("trace CSV…")
    dash.shape.setFocus()
    for _ in range(target - dash.shape.currentIndex()):  # the last key press opens the dialog, once
        QTest.keyClick(dash.shape, Qt.Key.Key_Down)
    assert picked == ["Rate trace (t_s,requests_per_s)"]
    assert dash.mode.currentIndex() > 0 and dash.rate.isEnabled() and not dash.conc.isEnabled()  # rate mode
    qtbot.waitUntil(lambda: dash.engine.rate is not None, timeout=scaled(3000))  # the shape switched the engine
    qtbot.waitUntil(lambda: dash.engine.rate == 400, timeout=scaled(6000))
    t_up = dash.engine.now()
    assert 2.5 <= t_up - t0 <= 4.5
    qtbot.waitUntil(lambda: dash.engine.now() > t_up + 2.5, timeout=scaled(6000))
    low = _mean_tp(dash, t0 + 1.0, t_up - 0.5)
    high = _mean_tp(dash, t_up + 1.0, t_up + 2.5)
    print(f"trace 40 -> 400 req/s: {low:.0f}/s -> {high:.0f}/s")
    assert 25 <= low <= 60
    assert 320 <= high <= 480


def test_autotune_starts_from_its_button_and_stops_from_stop(qtbot, make_dash):
    dash = make_dash(batching=True, concurrency=8)
    n0 = len(dash.engine.changes)
    _click(dash.results.tune_button)
    assert dash.job_running and dash.results.stop_button.isEnabled() and not dash.results.tune_button.isEnabled()
    assert dash.status_text == "auto-tune running…"
    assert not dash.control("dynamic_batching.max_queue_delay_microseconds").isEnabled()
    # the first probe is a recorded change: a marker and a row
    qtbot.waitUntil(lambda: any(c.source == "autotune" for c in dash.engine.changes[n0:]), timeout=scaled(30_000))
    probe = next(c for c in dash.engine.changes[n0:] if c.source == "autotune")
    # the marker and the row come by signal on the UI thread, a moment after the engine records the change
    qtbot.waitUntil(lambda: any(m[1] == probe.diff for m in dash.plots.markers) and probe in dash.results.rows,
                    timeout=scaled(5000))
    with qtbot.waitSignal(dash.sig_job_done, timeout=scaled(60_000)) as done:
        _click(dash.results.stop_button)
    print(done.args[0])
    assert done.args[0].startswith("auto-tune")
    assert not dash.job_running and dash.results.tune_button.isEnabled() and not dash.results.stop_button.isEnabled()
    assert dash.control("dynamic_batching.max_queue_delay_microseconds").isEnabled()
    n = len(dash.engine.changes)
    qtbot.wait(scaled(1500))
    assert len(dash.engine.changes) == n  # stopped: no probe after the end
    assert dash.engine.running  # the load keeps running


def test_autotune_runs_to_a_confirmed_best_with_a_confidence_interval(qtbot, make_dash):
    """The CLI's tune (issue 17) live: the probes and the alternating re-measurements are changes, markers and
    rows; the note names the best with its 95% interval."""
    from studio.tuning.search import Point, Space

    dash = make_dash(batching=True, concurrency=16)
    n0 = len(dash.engine.changes)
    space = Space(max_batch_size=[32], max_queue_delay_microseconds=[0], instances=[1, 2], concurrency=[16],
                  seed=Point(32, 0, 1, 16))
    # both configs must count as candidates: a busy CI machine put one over the default 50 ms p99 budget,
    # leaving one to re-measure (this test is about the alternating re-measurement, not the budget)
    dash.results.set_budget(1000.0)
    with qtbot.waitSignal(dash.sig_job_done, timeout=scaled(120_000)) as done:
        assert dash.results.autotune(space=space, point_budget_s=scaled_s(4))
    note = done.args[0]
    print(note)
    assert note.startswith("auto-tune: best instances ") and "95% CI" in note and "top 2 re-measured" in note, \
        [(c.diff, c.ok, c.steady) for c in dash.engine.changes[n0:]]
    probes = [c for c in dash.engine.changes[n0:] if c.source == "autotune"]
    assert len(probes) >= 4, [c.diff for c in probes]  # 2 configs searched + each re-measured once
    assert all(p in dash.results.rows for p in probes)
    assert all(any(m[1] == p.diff for m in dash.plots.markers) for p in probes)
    assert not dash.job_running and dash.engine.running


def test_server_rss_plot_and_linked_scrolling_x_axes(qtbot, make_dash, server):
    from studio.tuning.live import process_tree_rss_mb

    rt, _, _, _ = server
    dash = make_dash(batching=True, concurrency=4, server_pid=rt.pid)
    qtbot.waitUntil(lambda: np.isfinite(dash.series.column("mem_mb")).any(), timeout=scaled(5000))
    rss = float(dash.series.column("mem_mb")[np.isfinite(dash.series.column("mem_mb"))][-1])
    direct = process_tree_rss_mb(rt.pid)
    print(f"server RSS {rss:.0f} MB (direct read {direct:.0f} MB)")
    # the tree changes as reloads start and end backend stubs: the same order of size, not the same bytes
    assert rss > 50 and 0.5 * direct < rss < 2 * direct
    assert dash.engine.memory_source == "rss"
    dash._redraw()
    assert "server RSS" in dash.plots.p_util.titleLabel.text
    xs, ys = dash.plots.mem_curve.getData()
    assert len(xs) and np.nanmax(ys) > 50
    # x axes: linked to the throughput plot, one range for all
    plots = dash.plots.plots
    for p in plots[1:]:
        assert p.vb.linkedView(p.vb.XAxis) is plots[0].vb
    ranges = {tuple(round(v, 6) for v in p.vb.viewRange()[0]) for p in plots}
    assert len(ranges) == 1
    # the window: 30 s (+ 3 s ahead) at most, from the first sample while it is not filled, past the newest;
    # "all" starts at the first sample
    _choose(dash.window_combo, "30 s")
    x0, x1 = plots[0].vb.viewRange()[0]
    t = dash.series.t()
    assert t[-1] - t[0] < 29.5
    assert abs(x0 - t[0]) < 1e-6 and x1 >= t[-1] and x1 - x0 <= 33.0 + 1e-6
    _choose(dash.window_combo, "all")
    x0, x1 = plots[0].vb.viewRange()[0]
    assert abs(x0 - dash.series.t()[0]) < 1e-6 and x1 >= dash.series.t()[-1]
    assert {tuple(round(v, 6) for v in p.vb.viewRange()[0]) for p in plots} == {(round(x0, 6), round(x1, 6))}
