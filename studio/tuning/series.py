"""Fixed-memory time series for live plots: one preallocated numpy column per figure, written twice (at i and
i + capacity) so the newest n values are always one contiguous slice: plotting takes a view, never a copy, and
memory does not grow however long the session runs (an hour at 4 Hz is 14,400 rows).
"""

from __future__ import annotations

import math

import numpy as np

FIELDS = ("throughput", "p50_ms", "p90_ms", "p99_ms", "errors", "queue_us", "compute_us", "avg_batch_size",
          "util", "mem_mb")


def sample_row(s) -> dict:
    """A studio.tuning.sampler.Sample as the figures the dashboard plots (None where unknown)."""
    def us(*ms):
        vals = [m for m in ms if m is not None]
        return sum(vals) * 1000.0 if vals else None

    return {
        "throughput": s.throughput,
        "p50_ms": s.p50_ms,
        "p90_ms": s.p90_ms,
        "p99_ms": s.p99_ms,
        "errors": float(s.errors),
        "queue_us": us(s.queue_ms),
        "compute_us": us(s.compute_input_ms, s.compute_infer_ms, s.compute_output_ms),
        "avg_batch_size": s.avg_batch_size,
        "util": s.gpu_utilization,
        # the server's memory: RSS of the Triton process tree when the studio knows its pid, else the GPU's
        "mem_mb": s.server_rss_mb if getattr(s, "server_rss_mb", None) is not None else s.gpu_memory_used_mb,
    }


class RingSeries:
    """Columns of float64 (NaN = no value) over a time column, newest last."""

    def __init__(self, capacity: int = 16_384, fields: tuple[str, ...] = FIELDS) -> None:
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.capacity = capacity
        self.fields = tuple(fields)
        self._t = np.full(2 * capacity, np.nan)
        self._cols = {f: np.full(2 * capacity, np.nan) for f in self.fields}
        self._n = 0  # rows written in total

    def __len__(self) -> int:
        return min(self._n, self.capacity)

    @property
    def total(self) -> int:
        return self._n

    def append(self, t: float, values: dict) -> None:
        i = self._n % self.capacity
        j = i + self.capacity
        self._t[i] = self._t[j] = t
        for f, col in self._cols.items():
            v = values.get(f)
            x = float(v) if v is not None and not (isinstance(v, float) and math.isnan(v)) else np.nan
            col[i] = col[j] = x
        self._n += 1

    def _bounds(self) -> tuple[int, int]:
        n = len(self)
        end = (self._n - 1) % self.capacity + 1 + self.capacity if self._n else self.capacity
        return end - n, end

    def t(self) -> np.ndarray:
        a, b = self._bounds()
        return self._t[a:b]

    def column(self, field: str) -> np.ndarray:
        a, b = self._bounds()
        return self._cols[field][a:b]

    def window(self, seconds: float | None) -> slice:
        """The slice (of t() and column()) covering the last `seconds` (None: everything kept)."""
        t = self.t()
        if seconds is None or not len(t):
            return slice(0, len(t))
        start = int(np.searchsorted(t, t[-1] - seconds, side="left"))
        return slice(start, len(t))

    def last(self) -> dict | None:
        if not self._n:
            return None
        i = (self._n - 1) % self.capacity
        out = {"t": float(self._t[i])}
        for f, col in self._cols.items():
            v = col[i]
            out[f] = None if np.isnan(v) else float(v)
        return out

    def rows(self) -> list[dict]:
        """Every kept row as dicts (exports; not for the redraw path)."""
        t = self.t()
        cols = {f: self.column(f) for f in self.fields}
        out = []
        for k in range(len(t)):
            row = {"t": round(float(t[k]), 3)}
            for f, c in cols.items():
                v = c[k]
                row[f] = None if np.isnan(v) else round(float(v), 4)
            out.append(row)
        return out

    @property
    def nbytes(self) -> int:
        return self._t.nbytes + sum(c.nbytes for c in self._cols.values())
