"""The ensemble graph on the corpus's real ensembles (issue 12): labels never overlap, Ctrl+wheel zooms, Fit shows
the whole pipeline, and the text stays readable under a dark palette."""

from __future__ import annotations

import itertools

import pytest

from studio.ui.common.colors import contrast as _contrast
from tests.conftest import CORPUS
from tests.ui.conftest import shot
from tests.ui.test_browser_defects import dark

pytestmark = pytest.mark.gui

ENSEMBLES = sorted(p for p in (CORPUS / "real-configs").rglob("*.pbtxt") if "ensemble_scheduling" in p.read_text())


def _view(qtbot, path, size=(1280, 800)):
    from studio.config import ConfigDocument
    from studio.ui.ensemble.ensemble_view import EnsembleView

    view = EnsembleView(ConfigDocument.load(path).to_message())
    qtbot.addWidget(view)
    view.resize(*size)
    view.show()
    qtbot.waitExposed(view)
    return view


def test_the_corpus_has_tutorial_ensembles():
    assert len(ENSEMBLES) >= 20


@pytest.mark.parametrize("path", ENSEMBLES, ids=lambda p: p.parent.name if p.name == "config.pbtxt" else p.stem)
def test_no_two_labels_overlap_on_the_corpus_ensembles(qtbot, path):
    view = _view(qtbot, path, (900, 600))
    steps = {n: t.sceneBoundingRect() for n, t in view.text_items.items()}
    for (a, ra), (b, rb) in itertools.combinations(steps.items(), 2):
        assert not ra.intersects(rb), f"{path}: labels of {a} and {b} overlap"
    for n, r in steps.items():  # each label inside its own box
        assert view.node_items[n].sceneBoundingRect().contains(r), f"{path}: the label of {n} spills out of its box"
    wires = [t.sceneBoundingRect() for t in view.wire_labels]
    boxes = [i.sceneBoundingRect().adjusted(1, 1, -1, -1) for i in view.node_items.values()]
    for i, j in itertools.combinations(range(len(wires)), 2):
        assert not wires[i].intersects(wires[j]), f"{path}: tensor labels {view.wire_labels[i].text()} and {view.wire_labels[j].text()} overlap"
    for k, r in enumerate(wires):
        assert not any(r.intersects(b) for b in boxes), f"{path}: tensor label {view.wire_labels[k].text()} lies on a box"


def test_ctrl_wheel_zooms_and_fit_shows_the_whole_scene(qtbot):
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication

    path = max(ENSEMBLES, key=lambda p: p.read_text().count("model_name"))
    view = _view(qtbot, path, (420, 300))
    view.reset_zoom()
    vp = view.viewport()

    def wheel(dy, mods):
        centre = QPointF(vp.width() / 2, vp.height() / 2)
        ev = QWheelEvent(centre, vp.mapToGlobal(centre), QPoint(0, 0), QPoint(0, dy), Qt.MouseButton.NoButton, mods,
                         Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(vp, ev)

    wheel(240, Qt.KeyboardModifier.ControlModifier)
    assert view.zoom() == pytest.approx(1.15 ** 2)
    wheel(-120, Qt.KeyboardModifier.ControlModifier)
    assert view.zoom() == pytest.approx(1.15)
    wheel(-120, Qt.KeyboardModifier.NoModifier)  # a plain wheel scrolls, it does not zoom
    assert view.zoom() == pytest.approx(1.15)
    everything = view.scene().itemsBoundingRect()
    assert not vp.rect().contains(view.mapFromScene(everything).boundingRect())
    qtbot.mouseClick(view.fit_button, Qt.MouseButton.LeftButton)
    shown = view.mapFromScene(everything).boundingRect()
    assert vp.rect().contains(shown), (vp.rect(), shown)
    assert view.zoom() < 1.0
    qtbot.mouseClick(view.actual_button, Qt.MouseButton.LeftButton)
    assert view.zoom() == 1.0


def test_dark_palette_keeps_the_text_readable(qtbot):
    from PySide6.QtGui import QPalette

    path = next(p for p in ENSEMBLES if "ensemble_python_resnet50" in str(p))
    view = _view(qtbot, path)
    restore = dark(view)
    try:
        bg = view.backgroundBrush().color()
        assert bg == view.palette().color(QPalette.ColorRole.Base)
        for n, t in view.text_items.items():
            box = view.node_items[n].brush().color()
            assert _contrast(t.brush().color(), box) >= 4.5, n
        for label in view.wire_labels:
            assert _contrast(label.brush().color(), bg) >= 4.5 if not label.data(0) else 3.0, label.text()
        shot(view, "ensemble_view_dark.png")
    finally:
        restore()
    assert _contrast(view.text_items["step:0"].brush().color(), view.node_items["step:0"].brush().color()) >= 4.5
    shot(view, "ensemble_view_light.png")
