"""Side-by-side text diff with intra-line spans (pure, standard library, with size guards).

Offsets in spans are code-point offsets into the line; a Qt view converts them to UTF-16 when it paints.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field

MAX_INTRALINE_CHARS = 2_000  # longer lines get no intra-line spans
MAX_INTRALINE_PAIRS = 5_000  # more replaced line pairs than this: no intra-line spans at all
EXACT_LINES = 2_000  # above this many lines, difflib's popular-line heuristic (autojunk) keeps it fast


@dataclass
class DiffRow:
    tag: str  # equal | replace | delete | insert
    left_no: int | None  # 1-based line numbers
    left: str | None
    right_no: int | None
    right: str | None
    left_spans: list[tuple[int, int]] = field(default_factory=list)  # changed character ranges [start, end)
    right_spans: list[tuple[int, int]] = field(default_factory=list)


def intraline(a: str, b: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    if len(a) > MAX_INTRALINE_CHARS or len(b) > MAX_INTRALINE_CHARS:
        return [(0, len(a))] if a else [], [(0, len(b))] if b else []
    la, lb = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        if i2 > i1:
            la.append((i1, i2))
        if j2 > j1:
            lb.append((j1, j2))
    return la, lb


def _line_opcodes(a: list[str], b: list[str]):
    """difflib opcodes, with the common head and tail cut off first (most edits touch a few lines)."""
    head = 0
    n = min(len(a), len(b))
    while head < n and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < n - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    ma, mb = a[head : len(a) - tail], b[head : len(b) - tail]
    ops = []
    if head:
        ops.append(("equal", 0, head, 0, head))
    autojunk = max(len(ma), len(mb)) > EXACT_LINES
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ma, mb, autojunk=autojunk).get_opcodes():
        ops.append((tag, i1 + head, i2 + head, j1 + head, j2 + head))
    if tail:
        ops.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return ops


def side_by_side(left: str, right: str, cancelled=lambda: False) -> list[DiffRow]:
    """Aligned rows; replaced lines are paired and carry intra-line spans. `cancelled()` stops early."""
    a = left.splitlines()
    b = right.splitlines()
    rows: list[DiffRow] = []
    pairs = 0
    for tag, i1, i2, j1, j2 in _line_opcodes(a, b):
        if cancelled():
            break
        if tag == "equal":
            rows.extend(DiffRow("equal", i1 + k + 1, a[i1 + k], j1 + k + 1, b[j1 + k]) for k in range(i2 - i1))
        elif tag == "delete":
            rows.extend(DiffRow("delete", i1 + k + 1, a[i1 + k], None, None) for k in range(i2 - i1))
        elif tag == "insert":
            rows.extend(DiffRow("insert", None, None, j1 + k + 1, b[j1 + k]) for k in range(j2 - j1))
        else:
            n = max(i2 - i1, j2 - j1)
            for k in range(n):
                la = a[i1 + k] if i1 + k < i2 else None
                lb = b[j1 + k] if j1 + k < j2 else None
                row = DiffRow(
                    "replace" if la is not None and lb is not None else ("delete" if lb is None else "insert"),
                    i1 + k + 1 if la is not None else None,
                    la,
                    j1 + k + 1 if lb is not None else None,
                    lb,
                )
                if la is not None and lb is not None:
                    pairs += 1
                    if pairs <= MAX_INTRALINE_PAIRS:
                        row.left_spans, row.right_spans = intraline(la, lb)
                rows.append(row)
    return rows
