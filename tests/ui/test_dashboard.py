"""The live tuning dashboard against the real embedded Triton, driven through its real controls (offscreen,
pytest-qt): batching on raises steady throughput > 3x, a queue-delay slider release is live and plotted within
3 s, a refused value never reaches the server, a failed reload keeps the old config serving, Keep hands over
minimal edits. One server for the module."""

from __future__ import annotations

import time

import pytest

from tests.conftest import REPO, scaled, scaled_s
from tests.runtime.helpers import embedded_demo

pytestmark = pytest.mark.gui
MODEL = "batched_sleep"
ARTIFACTS = REPO / "test-artifacts"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with embedded_demo(tmp_path_factory.mktemp("dash"), MODEL) as s:
        yield s


def _doc(repo, batching: bool = False):
    from studio.config import ConfigDocument

    doc = ConfigDocument.load(repo / MODEL / "config.pbtxt")
    if batching:
        doc.set("dynamic_batching.max_queue_delay_microseconds", 0)
    return doc


@pytest.fixture
def make_dash(qtbot, server):
    from studio.ui.tuning.dashboard import TuningDashboard

    rt, ep, client, repo = server
    made = []

    def make(batching=False, concurrency=16, **kw):
        doc = _doc(repo, batching)
        client.load(MODEL, config=doc)  # the server runs what the dashboard starts from
        dash = TuningDashboard(ep.grpc, MODEL, doc, client, concurrency=concurrency, **kw)
        dash.resize(1280, 800)
        qtbot.addWidget(dash)
        dash.show()
        made.append(dash)
        qtbot.waitUntil(lambda: len(dash.series) >= 4, timeout=scaled(10_000))
        return dash, doc

    yield make
    for d in made:
        d.shutdown()


def _shot(widget, name):
    ARTIFACTS.mkdir(exist_ok=True)
    assert widget.grab().save(str(ARTIFACTS / name))


def _last_change(dash):
    return dash.engine.changes[-1] if dash.engine.changes else None


def test_batching_toggle_raises_steady_throughput_more_than_3x(qtbot, make_dash):
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    dash, _ = make_dash(batching=False, concurrency=32, steady_budget_s=scaled_s(8))
    base = dash.engine.changes[0]
    assert base.diff == "initial config"
    qtbot.waitUntil(lambda: base.steady is not None, timeout=scaled(20_000))
    toggle = dash.control("dynamic_batching").box
    with qtbot.waitSignal(dash.sig_change, timeout=scaled(15_000)) as sig:
        QTest.mouseClick(toggle, Qt.MouseButton.LeftButton, pos=QPoint(8, toggle.height() // 2))  # the box
    change = sig.args[0]
    assert change.ok and change.diff == "batching off->on", change.message
    assert dash.working.has("dynamic_batching")
    qtbot.waitUntil(lambda: change.steady is not None, timeout=scaled(20_000))
    ratio = change.steady["throughput"] / base.steady["throughput"]
    print(f"steady throughput: off {base.steady['throughput']:.0f}/s, on {change.steady['throughput']:.0f}/s "
          f"({ratio:.1f}x), reload {change.reload_s:.2f} s")
    assert ratio > 3
    assert [m[1] for m in dash.plots.markers] == ["initial config", "batching off->on"]
    assert "live (" in dash.status_text
    # the results row shows both, with the ratio against the pinned baseline
    assert dash.results.table.rowCount() == 2
    qtbot.waitUntil(lambda: "x infer/s" in dash.results.table.item(1, 10).text(), timeout=scaled(2000))
    _shot(dash, "dashboard_batching.png")


def test_queue_delay_slider_release_is_live_and_plotted_within_3_s(qtbot, make_dash):
    dash, _ = make_dash(batching=True, concurrency=4)
    ctl = dash.control("dynamic_batching.max_queue_delay_microseconds")
    slider = ctl.slider
    pos = ctl.to_pos(20_000)
    slider.setSliderDown(True)  # a drag: the value moves, nothing is sent until the release
    for p in range(0, pos + 1, max(1, pos // 10)):
        slider.setValue(p)
    slider.setValue(pos)
    assert dash.coordinator.state == "idle"
    t_release = time.monotonic()
    slider.setSliderDown(False)  # emits sliderReleased
    target = ctl.to_value(pos)  # the slider's log scale: about 20,000 us
    assert 19_000 <= target <= 21_000 and ctl.value() == target
    assert dash.coordinator.state == "waiting"
    t_release_rel = dash.engine.rel(t_release)

    def seen():
        t = dash.series.t()
        q = dash.series.column("queue_us")
        b = dash.series.column("avg_batch_size")
        ch = _last_change(dash)
        if ch is None or ch.diff == "initial config" or ch.t_live is None:
            return None
        hits = [(t[i]) for i in range(len(t)) if t[i] > ch.t_live and q[i] > 5000 and b[i] >= 3]
        return hits[0] if hits else None

    qtbot.waitUntil(lambda: seen() is not None, timeout=scaled(6000))
    ch = _last_change(dash)
    delay = seen() - t_release_rel
    print(f"slider release -> first sample of the new config: {delay:.2f} s (reload {ch.reload_s:.2f} s)")
    assert ch.ok and ch.diff == f"max_queue_delay 0->{target} us"
    assert delay <= 3.0
    # visible: a marker at the change and the plotted batch-size curve holds the new samples
    assert dash.plots.markers[-1][1] == ch.diff
    dash._redraw()
    xs, ys = dash.plots.curves["avg_batch_size"].getData()
    assert xs is not None and xs[-1] >= seen()


def test_a_refused_value_never_reaches_the_server(qtbot, make_dash, server):
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    _, _, client, _ = server
    dash, _ = make_dash(batching=True, concurrency=4)
    served_before = client.resolved_config(MODEL)
    n = len(dash.engine.changes)
    box = dash.control("dynamic_batching.preferred_batch_size").box
    with qtbot.waitSignal(dash.sig_refused, timeout=scaled(2000)) as sig:
        QTest.keyClicks(box, "64")
        QTest.keyClick(box, Qt.Key.Key_Return)
    assert sig.args[0] == "dynamic_batching.preferred_batch_size"
    assert "preferred size must be <= max batch size" in sig.args[1]
    assert "preferred size must be <= max batch size" in dash.refusal.text()
    assert dash.control("dynamic_batching.preferred_batch_size").value() == []
    assert dash.coordinator.state == "idle" and not dash.coordinator.pending
    qtbot.wait(scaled(800))  # longer than the debounce: still nothing sent
    assert len(dash.engine.changes) == n
    assert client.resolved_config(MODEL) == served_before
    # a good value goes through the same box
    assert box.text() == "64"  # kept for the user to fix
    box.selectAll()
    with qtbot.waitSignal(dash.sig_change, timeout=scaled(15_000)) as sig:
        QTest.keyClicks(box, "8")
        QTest.keyClick(box, Qt.Key.Key_Return)
    assert sig.args[0].ok and sig.args[0].diff == "preferred batch size []->[8]"
    assert client.resolved_config(MODEL)["dynamic_batching"]["preferred_batch_size"] == [8]


def test_a_failed_reload_keeps_the_old_config_serving(qtbot, make_dash, server):
    _, _, client, _ = server
    dash, _ = make_dash(batching=True, concurrency=8)
    combo = dash.control("instance_group[0].kind").combo
    i = combo.findText("KIND_GPU")  # valid for the schema and the validator; this CPU server cannot load it
    with qtbot.waitSignal(dash.sig_change, timeout=scaled(20_000)) as sig:
        combo.setCurrentIndex(i)
        combo.activated.emit(i)
    change = sig.args[0]
    assert not change.ok and change.message
    print(f"refused by Triton in {change.reload_s:.2f} s: {change.message}")
    assert dash.status_text.startswith("failed: ")
    assert dash.plots.markers[-1][2] is False  # the marker is red
    assert dash.control("instance_group[0].kind").value() == "KIND_CPU"  # back to what serves
    assert dash.working.get("instance_group[0].kind") == "KIND_CPU"
    assert client.model_ready(MODEL)
    n = len(dash.series)
    qtbot.waitUntil(lambda: len(dash.series) >= n + 4, timeout=scaled(5000))
    assert dash.series.column("throughput")[-1] > 0  # still served
    assert "FAILED" in dash.results.table.item(len(dash.results.rows) - 1, 1).text()
    _shot(dash, "dashboard_failed_reload.png")


def test_keep_hands_minimal_edits_to_the_shell(qtbot, make_dash, server, tmp_path):
    from studio.config import ConfigDocument
    from studio.tuning.controls import apply_edits

    _, _, _, repo = server
    kept = []
    dash, doc = make_dash(batching=False, concurrency=4, keep=kept.append)
    dash.document = ConfigDocument.load(repo / MODEL / "config.pbtxt")  # the open document, without batching
    ctl = dash.control("dynamic_batching")
    with qtbot.waitSignal(dash.sig_change, timeout=scaled(15_000)):
        ctl.box.click()
    qc = dash.control("dynamic_batching.max_queue_delay_microseconds")
    with qtbot.waitSignal(dash.sig_change, timeout=scaled(15_000)):
        qc.box.setText("500")
        qc.box.returnPressed.emit()
    dash.keep_button.click()
    assert kept == [{"dynamic_batching": {}, "dynamic_batching.max_queue_delay_microseconds": 500}]
    before = dash.document.text
    apply_edits(dash.document, kept[0])
    after = dash.document.text
    assert [ln for ln in before.splitlines() if ln.startswith("#")] == [ln for ln in after.splitlines() if ln.startswith("#")]
    assert dash.document.get("dynamic_batching.max_queue_delay_microseconds") == 500
    # exports
    files = dash.export_all(str(tmp_path))
    for f in files:
        assert (tmp_path / f.split("/")[-1]).stat().st_size > 0
    assert "perf_analyzer -m batched_sleep" in (tmp_path / f"{MODEL}-tuning-perf_analyzer.txt").read_text()


def test_dark_palette_screenshot(qtbot, make_dash):
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance()
    old = app.palette()
    pal = QPalette()
    for role, color in ((QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#e0e0e0"),
                        (QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.Text, "#e0e0e0"),
                        (QPalette.ColorRole.Button, "#3a3a3a"), (QPalette.ColorRole.ButtonText, "#e0e0e0")):
        pal.setColor(role, QColor(color))
    app.setPalette(pal)
    try:
        dash, _ = make_dash(batching=True, concurrency=8)
        assert dash.plots.view.backgroundBrush().color().lightness() < 128
        _shot(dash, "dashboard_dark.png")
    finally:
        app.setPalette(old)
