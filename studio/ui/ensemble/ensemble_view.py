"""Ensemble view: inputs -> steps -> outputs drawn left to right; broken or unused wires in red; clicking a
step opens that model."""

from __future__ import annotations

from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QPainter, QPainterPath, QPen
from PySide6.QtWidgets import (
    QGraphicsItem,
    QGraphicsPathItem,
    QGraphicsRectItem,
    QGraphicsScene,
    QGraphicsSimpleTextItem,
    QGraphicsView,
)

RED = QColor("#d0312d")


@dataclass
class Wire:
    tensor: str
    source: str  # node id: "in:<name>" or "step:<i>"
    target: str  # node id: "step:<i>" or "out:<name>"
    broken: bool = False
    why: str = ""


@dataclass
class Graph:
    nodes: dict[str, str] = field(default_factory=dict)  # id -> label
    columns: dict[str, int] = field(default_factory=dict)
    wires: list[Wire] = field(default_factory=list)
    dangling: list[Wire] = field(default_factory=list)  # tensors with one end only (drawn to nowhere, red)


def ensemble_graph(config, models: dict | None = None) -> Graph:
    """Pure layout: which node is in which column, which wires exist and which are broken.

    `models` (name -> ModelConfig) lets the graph check that mapped names are real inputs/outputs."""
    g = Graph()
    producers: dict[str, str] = {}
    for io in config.input:
        g.nodes[f"in:{io.name}"] = io.name
        producers[io.name] = f"in:{io.name}"
    steps = list(config.ensemble_scheduling.step)
    for i, s in enumerate(steps):
        g.nodes[f"step:{i}"] = s.model_name or f"step {i}"
        for _key, tensor in s.output_map.items():
            producers.setdefault(tensor, f"step:{i}")
    outputs = {io.name for io in config.output}
    for name in outputs:
        g.nodes[f"out:{name}"] = name
    consumed: set[str] = set()
    for i, s in enumerate(steps):
        mc = (models or {}).get(s.model_name)
        for key, tensor in s.input_map.items():
            consumed.add(tensor)
            src = producers.get(tensor)
            w = Wire(tensor, src or "", f"step:{i}")
            if src is None:
                w.broken, w.why = True, f"no step writes '{tensor}' and it is not an ensemble input"
            elif mc is not None and mc.input and key not in {x.name for x in mc.input}:
                w.broken, w.why = True, f"{s.model_name} has no input '{key}'"
            (g.wires if src else g.dangling).append(w)
        if mc is not None and mc.output:
            for key, tensor in s.output_map.items():
                if key not in {x.name for x in mc.output}:
                    g.dangling.append(Wire(tensor, f"step:{i}", "", True, f"{s.model_name} has no output '{key}'"))
    for name in outputs:
        src = producers.get(name)
        if src is None:
            g.dangling.append(Wire(name, "", f"out:{name}", True, f"nothing writes the ensemble output '{name}'"))
        else:
            g.wires.append(Wire(name, src, f"out:{name}"))
    for tensor, src in producers.items():
        if tensor not in consumed and tensor not in outputs:
            g.dangling.append(Wire(tensor, src, "", True, f"'{tensor}' is written but never used"))
    # columns: longest path from the inputs
    depth = {n: 0 for n in g.nodes if n.startswith("in:")}
    for _ in range(len(steps) + 1):
        for w in g.wires:
            if w.source in depth and not w.target.startswith("out:"):
                depth[w.target] = max(depth.get(w.target, 0), depth[w.source] + 1)
    for i in range(len(steps)):
        depth.setdefault(f"step:{i}", 1)
    last = max([d for n, d in depth.items()] + [0]) + 1
    for n in g.nodes:
        g.columns[n] = last if n.startswith("out:") else depth.get(n, 0)
    return g


class _StepItem(QGraphicsRectItem):
    def __init__(self, view: EnsembleView, node: str, label: str, rect: QRectF) -> None:
        super().__init__(rect)
        self.view = view
        self.node = node
        self.label = label
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemIsSelectable)
        self.setCursor(Qt.CursorShape.PointingHandCursor)

    def mousePressEvent(self, event) -> None:  # noqa: N802
        if self.node.startswith("step:"):
            self.view.sig_open_model.emit(self.label)
        super().mousePressEvent(event)


class EnsembleView(QGraphicsView):
    sig_open_model = Signal(str)
    """A step was clicked: the model's name."""

    W, H, GAP_X, GAP_Y = 170, 44, 90, 28

    def __init__(self, config, models: dict | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setRenderHint(QPainter.RenderHint.Antialiasing)
        self.scene_ = QGraphicsScene(self)
        self.setScene(self.scene_)
        self.graph = ensemble_graph(config, models)
        self.red_wires: list[QGraphicsPathItem] = []
        self._draw()

    def _draw(self) -> None:
        g = self.graph
        rows: dict[int, int] = {}
        pos: dict[str, QRectF] = {}
        for n in sorted(g.nodes, key=lambda n: (g.columns[n], n)):
            col = g.columns[n]
            row = rows.get(col, 0)
            rows[col] = row + 1
            r = QRectF(col * (self.W + self.GAP_X), row * (self.H + self.GAP_Y), self.W, self.H)
            pos[n] = r
            item = _StepItem(self, n, g.nodes[n], r)
            color = QColor("#dfe9f7") if n.startswith("step:") else QColor("#eeeeee")
            item.setBrush(QBrush(color))
            item.setPen(QPen(QColor("#555555"), 1.2))
            self.scene_.addItem(item)
            kind = "step" if n.startswith("step:") else ("input" if n.startswith("in:") else "output")
            t = QGraphicsSimpleTextItem(f"{g.nodes[n]}\n({kind})", item)
            t.setPos(r.x() + 8, r.y() + 5)
        for w in g.wires:
            a, b = pos.get(w.source), pos.get(w.target)
            if a is None or b is None:
                continue
            self._wire(QPointF(a.right(), a.center().y()), QPointF(b.left(), b.center().y()), w)
        for w in g.dangling:
            if w.source in pos:
                a = pos[w.source]
                self._wire(QPointF(a.right(), a.center().y()), QPointF(a.right() + self.GAP_X * 0.7, a.center().y() + 18), w)
            elif w.target in pos:
                b = pos[w.target]
                self._wire(QPointF(b.left() - self.GAP_X * 0.7, b.center().y() - 18), QPointF(b.left(), b.center().y()), w)

    def _wire(self, p: QPointF, q: QPointF, w: Wire) -> None:
        path = QPainterPath(p)
        dx = (q.x() - p.x()) / 2
        path.cubicTo(QPointF(p.x() + dx, p.y()), QPointF(q.x() - dx, q.y()), q)
        item = QGraphicsPathItem(path)
        item.setPen(QPen(RED if w.broken else QColor("#2f6f3e"), 2.2 if w.broken else 1.6,
                         Qt.PenStyle.DashLine if w.broken else Qt.PenStyle.SolidLine))
        item.setToolTip(f"{w.tensor}" + (f": {w.why}" if w.broken else ""))
        self.scene_.addItem(item)
        label = QGraphicsSimpleTextItem(w.tensor)
        label.setBrush(RED if w.broken else QColor("#333333"))
        label.setPos((p.x() + q.x()) / 2 - 20, (p.y() + q.y()) / 2 - 16)
        self.scene_.addItem(label)
        if w.broken:
            self.red_wires.append(item)
