"""The graph of an ensemble (no Qt): which tensors wire which steps, which wires are broken, and a layered
layout that leaves room for every label (studio/ui/ensemble paints it).

    g = ensemble_graph(config, models)            # nodes, wires, dangling (broken) wires, columns
    lay = layout(g, measure)                      # measure(text) -> (width, height) of one line in the view's font
    lay.nodes["step:0"], lay.labels[i]            # rectangles (x, y, w, h) in scene units
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

Rect = tuple[float, float, float, float]  # x, y, width, height


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


@dataclass
class Layout:
    nodes: dict[str, Rect] = field(default_factory=dict)  # node id -> its box
    texts: dict[str, Rect] = field(default_factory=dict)  # node id -> its label's box (inside the node's box)
    labels: list[tuple[Wire, Rect]] = field(default_factory=list)  # each wire's tensor label
    width: float = 0.0
    height: float = 0.0


MIN_W, PAD_X, PAD_Y, GAP_Y, GAP_X, LABEL_GAP, LINE_GAP = 110.0, 10.0, 6.0, 26.0, 60.0, 8.0, 3.0


def _kind(node: str) -> str:
    return "step" if node.startswith("step:") else ("input" if node.startswith("in:") else "output")


def node_lines(g: Graph, node: str) -> list[str]:
    return [g.nodes[node], f"({_kind(node)})"]


def _intersects(a: Rect, b: Rect) -> bool:
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def layout(g: Graph, measure: Callable[[str], tuple[float, float]]) -> Layout:
    """Layered left-to-right layout: columns from g.columns, each node as wide as its label, nodes of a column
    ordered by their producers' positions (fewer crossings), each wire's tensor name stacked at its source's
    right edge, and the gap after a column as wide as the longest of those names. No two boxes overlap."""
    out = Layout()
    text_h = max(measure("Ag")[1], 1.0)
    line_h = text_h + LINE_GAP
    cols: dict[int, list[str]] = {}
    for n in g.nodes:  # insertion order: inputs, steps, outputs as written
        cols.setdefault(g.columns[n], []).append(n)
    sources: dict[str, list[str]] = {}  # node -> the nodes it feeds
    for w in g.wires:
        sources.setdefault(w.target, []).append(w.source)
    outgoing: dict[str, list[Wire]] = {}  # one label per tensor a node writes (a tensor feeding two steps: once)
    for w in g.wires + g.dangling:
        if w.source and not any(o.tensor == w.tensor and o.broken == w.broken for o in outgoing.get(w.source, [])):
            outgoing.setdefault(w.source, []).append(w)
    size: dict[str, tuple[float, float]] = {}
    for n in g.nodes:
        lines = node_lines(g, n)
        tw = max(measure(t)[0] for t in lines)
        size[n] = (max(MIN_W, tw + 2 * PAD_X), len(lines) * text_h + 2 * PAD_Y)
    label_w = {n: max((measure(w.tensor)[0] for w in ws), default=0.0) for n, ws in outgoing.items()}
    row_of: dict[str, float] = {}
    x = 0.0
    heights: dict[int, float] = {}
    placed: dict[int, list[tuple[str, float]]] = {}
    for c in sorted(cols):
        nodes = cols[c]
        if c > 0:
            def bary(n: str) -> float:
                ps = [row_of[p] for p in sources.get(n, []) if p in row_of]
                return sum(ps) / len(ps) if ps else float("inf")
            nodes = sorted(nodes, key=lambda n: (bary(n), nodes.index(n)))
        y = 0.0
        col_w = max(size[n][0] for n in nodes)
        placed[c] = []
        for i, n in enumerate(nodes):
            w, h = size[n]
            slot = max(h, len(outgoing.get(n, [])) * line_h)  # room for its stacked wire labels
            placed[c].append((n, y))
            row_of[n] = i
            y += slot + GAP_Y
        heights[c] = y - GAP_Y
        for n, ny in placed[c]:
            w, h = size[n]
            out.nodes[n] = (x + (col_w - w) / 2, ny, w, h)
        gap = max((label_w.get(n, 0.0) for n in nodes), default=0.0)
        x += col_w + max(GAP_X, gap + 2 * LABEL_GAP + 24)
    tallest = max(heights.values(), default=0.0)
    for c, items in placed.items():  # centre each column on the tallest
        dy = (tallest - heights[c]) / 2
        for n, _ny in items:
            rx, ry, rw, rh = out.nodes[n]
            out.nodes[n] = (rx, ry + dy, rw, rh)
    for n, (rx, ry, rw, _rh) in out.nodes.items():
        lines = node_lines(g, n)
        tw = max(measure(t)[0] for t in lines)
        out.texts[n] = (rx + (rw - tw) / 2, ry + PAD_Y, tw, len(lines) * text_h)
    for n, ws in outgoing.items():
        rx, ry, rw, rh = out.nodes[n]
        for k, w in enumerate(ws):
            tw = measure(w.tensor)[0]
            out.labels.append((w, (rx + rw + LABEL_GAP, ry + k * line_h, tw, text_h)))
    for w in g.dangling:  # broken wires with no source: the label sits left of the target
        if not w.source and w.target in out.nodes:
            rx, ry, rw, rh = out.nodes[w.target]
            tw = measure(w.tensor)[0]
            out.labels.append((w, (rx - tw - LABEL_GAP, ry + rh + LINE_GAP, tw, text_h)))
    boxes = list(out.nodes.values()) + [r for _w, r in out.labels]
    out.width = max((b[0] + b[2] for b in boxes), default=0.0)
    out.height = max((b[1] + b[3] for b in boxes), default=0.0)
    return out
