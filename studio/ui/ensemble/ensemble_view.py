"""Ensemble view: inputs -> steps -> outputs drawn left to right in layers sized to their labels; broken or
unused wires in red; clicking a step opens that model. Ctrl+wheel zooms, the Fit button (or F) shows the
whole pipeline; colours follow the palette (light and dark). The graph and its layout come from
studio.validate.ensemble_graph; this module only paints them."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPainter, QPainterPath, QPalette, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
    QHBoxLayout,
    QToolButton,
    QWidget,
)

from studio.validate.ensemble_graph import Graph, Wire, ensemble_graph, layout, node_lines

__all__ = ["EnsembleView", "Graph", "Wire", "ensemble_graph"]

RED = QColor("#d0312d")
ZOOM_STEP, ZOOM_MIN, ZOOM_MAX = 1.15, 0.1, 6.0


def _dark(pal: QPalette) -> bool:
    return pal.color(QPalette.ColorRole.Base).lightnessF() < 0.5


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    return QColor.fromRgbF(a.redF() * (1 - t) + b.redF() * t, a.greenF() * (1 - t) + b.greenF() * t,
                           a.blueF() * (1 - t) + b.blueF() * t)


def colours(pal: QPalette) -> dict[str, QColor]:
    """The graph's colours from a palette: text in the palette's text colour on its base colour."""
    base, text = pal.color(QPalette.ColorRole.Base), pal.color(QPalette.ColorRole.Text)
    accent = pal.color(QPalette.ColorRole.Highlight)
    dark = _dark(pal)
    return {
        "background": base,
        "text": text,
        "node": _mix(base, text, 0.08),
        "step": _mix(base, accent, 0.22 if dark else 0.16),
        "border": _mix(base, text, 0.55),
        "wire": QColor("#6cc17c") if dark else QColor("#2f6f3e"),
        "broken": QColor("#ff6b63") if dark else RED,
        "label": _mix(base, text, 0.85),
    }


class _StepItem(QGraphicsRectItem):
    def __init__(self, view: EnsembleView, node: str, label: str, rect: QRectF) -> None:
        super().__init__(rect)
        self.view = view
        self.node = node
        self.label = label
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        if node.startswith("step:"):
            self.setToolTip(f"{label}: click to open its config")

    def mousePressEvent(self, event) -> None:  # noqa: N802
        if self.node.startswith("step:"):
            self.view.sig_open_model.emit(self.label)
        super().mousePressEvent(event)


class EnsembleView(QGraphicsView):
    sig_open_model = Signal(str)
    """A step was clicked: the model's name."""

    def __init__(self, config, models: dict | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.scene_ = QGraphicsScene(self)
        self.setScene(self.scene_)
        self.graph = ensemble_graph(config, models)
        self.red_wires: list[QGraphicsPathItem] = []
        self.node_items: dict[str, _StepItem] = {}
        self.text_items: dict[str, QGraphicsSimpleTextItem] = {}
        self.wire_labels: list[QGraphicsSimpleTextItem] = []
        self._fitted = False
        bar = QWidget(self)
        bar.setObjectName("ensemble_zoom_bar")
        row = QHBoxLayout(bar)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(4)
        self.fit_button = QToolButton(text="Fit", toolTip="Show the whole pipeline (F)")
        self.fit_button.clicked.connect(self.fit_to_view)
        self.actual_button = QToolButton(text="100%", toolTip="Actual size (Ctrl+0); Ctrl+wheel zooms")
        self.actual_button.clicked.connect(self.reset_zoom)
        row.addWidget(self.fit_button)
        row.addWidget(self.actual_button)
        self.zoom_bar = bar
        self._draw()

    # -- zoom -------------------------------------------------------------------------------------------------
    def zoom(self) -> float:
        return self.transform().m11()

    def zoom_by(self, factor: float) -> None:
        z = self.zoom()
        factor = max(ZOOM_MIN / z, min(ZOOM_MAX / z, factor))
        self.scale(factor, factor)

    def reset_zoom(self) -> None:
        self.resetTransform()

    def fit_to_view(self) -> None:
        """The whole pipeline in the viewport (never magnified beyond 100%)."""
        r = self.scene_.itemsBoundingRect().adjusted(-12, -12, 12, 12)
        self.fitInView(r, Qt.AspectRatioMode.KeepAspectRatio)
        if self.zoom() > 1.0:
            self.resetTransform()
        self.centerOn(r.center())

    def wheelEvent(self, event) -> None:  # noqa: N802
        if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
            steps = event.angleDelta().y() / 120
            if steps:
                self.zoom_by(ZOOM_STEP ** steps)
            event.accept()
            return
        super().wheelEvent(event)

    def keyPressEvent(self, event) -> None:  # noqa: N802
        ctrl = event.modifiers() & Qt.KeyboardModifier.ControlModifier
        if event.key() == Qt.Key.Key_F and not ctrl:
            self.fit_to_view()
        elif ctrl and event.key() in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(ZOOM_STEP)
        elif ctrl and event.key() == Qt.Key.Key_Minus:
            self.zoom_by(1 / ZOOM_STEP)
        elif ctrl and event.key() == Qt.Key.Key_0:
            self.reset_zoom()
        else:
            super().keyPressEvent(event)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.zoom_bar.adjustSize()
        vp = self.viewport().geometry()
        self.zoom_bar.move(vp.right() - self.zoom_bar.width() - 8, vp.top() + 8)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._fitted:  # first shown: all of it, when it does not fit at 100%
            self._fitted = True
            self.fit_to_view()

    def changeEvent(self, event) -> None:  # noqa: N802
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._paint_colours()

    # -- drawing ----------------------------------------------------------------------------------------------
    def _draw(self) -> None:
        g = self.graph
        fm = QFontMetricsF(self.font())
        lay = layout(g, lambda t: (fm.horizontalAdvance(t), fm.height()))
        self.layout_ = lay
        pos: dict[str, QRectF] = {}
        for n, (x, y, w, h) in lay.nodes.items():
            r = QRectF(x, y, w, h)
            pos[n] = r
            item = _StepItem(self, n, g.nodes[n], r)
            self.scene_.addItem(item)
            self.node_items[n] = item
            t = QGraphicsSimpleTextItem("\n".join(node_lines(g, n)), item)
            t.setFont(self.font())
            tx, ty, _tw, _th = lay.texts[n]
            t.setPos(tx, ty)
            self.text_items[n] = t
        for w in g.wires:
            a, b = pos.get(w.source), pos.get(w.target)
            if a is None or b is None:
                continue
            self._wire(QPointF(a.right(), a.center().y()), QPointF(b.left(), b.center().y()), w)
        for w in g.dangling:
            if w.source in pos:
                a = pos[w.source]
                self._wire(QPointF(a.right(), a.center().y()), QPointF(a.right() + 40, a.bottom() + 14), w)
            elif w.target in pos:
                b = pos[w.target]
                self._wire(QPointF(b.left() - 40, b.top() - 14), QPointF(b.left(), b.center().y()), w)
        for w, (x, y, _tw, _th) in lay.labels:
            label = QGraphicsSimpleTextItem(w.tensor)
            label.setFont(self.font())
            label.setPos(x, y)
            label.setData(0, w.broken)
            label.setToolTip(w.tensor + (f": {w.why}" if w.broken else ""))
            label.setZValue(2)
            self.scene_.addItem(label)
            self.wire_labels.append(label)
        self.scene_.setSceneRect(self.scene_.itemsBoundingRect().adjusted(-12, -12, 12, 12))
        self._paint_colours()

    def _wire(self, p: QPointF, q: QPointF, w: Wire) -> None:
        path = QPainterPath(p)
        dx = (q.x() - p.x()) / 2
        path.cubicTo(QPointF(p.x() + dx, p.y()), QPointF(q.x() - dx, q.y()), q)
        item = QGraphicsPathItem(path)
        item.setData(0, w.broken)
        item.setToolTip(f"{w.tensor}" + (f": {w.why}" if w.broken else ""))
        item.setZValue(-1)
        self.scene_.addItem(item)
        if w.broken:
            self.red_wires.append(item)

    def _paint_colours(self) -> None:
        c = colours(self.palette())
        self.setBackgroundBrush(QBrush(c["background"]))
        for n, item in self.node_items.items():
            item.setBrush(QBrush(c["step"] if n.startswith("step:") else c["node"]))
            item.setPen(QPen(c["border"], 1.2))
            self.text_items[n].setBrush(QBrush(c["text"]))
        for item in self.scene_.items():
            if isinstance(item, QGraphicsPathItem):
                broken = bool(item.data(0))
                item.setPen(QPen(c["broken"] if broken else c["wire"], 2.2 if broken else 1.6,
                                 Qt.PenStyle.DashLine if broken else Qt.PenStyle.SolidLine))
        for label in self.wire_labels:
            label.setBrush(QBrush(c["broken"] if label.data(0) else c["label"]))
