"""Traffic shapes for the load generator: a value (requests per second, or requests in flight) as a function
of the time since the shape started. Step, ramp, and replay of a recorded rate trace (CSV `t_s,requests_per_s`).

    shape = Ramp(10, 400, 30)            # 10 -> 400 over 30 s, then 400
    shape.value_at(12.5)
    Trace.from_csv("trace.csv").value_at(t)  # step-wise replay of the recorded rates
"""

from __future__ import annotations

import bisect
import csv
from dataclasses import dataclass
from pathlib import Path


class ShapeError(ValueError):
    pass


@dataclass(frozen=True)
class Constant:
    value: float

    def value_at(self, t: float) -> float:
        return self.value

    @property
    def duration_s(self) -> float:
        return 0.0


@dataclass(frozen=True)
class Step:
    """`before` until `at_s`, then `after` (optionally several: steps=((t, v), ...) sorted by t)."""

    steps: tuple[tuple[float, float], ...]

    @classmethod
    def once(cls, before: float, after: float, at_s: float) -> Step:
        return cls(((0.0, before), (at_s, after)))

    def value_at(self, t: float) -> float:
        times = [s[0] for s in self.steps]
        i = max(0, bisect.bisect_right(times, t) - 1)
        return self.steps[i][1]

    @property
    def duration_s(self) -> float:
        return self.steps[-1][0]


@dataclass(frozen=True)
class Ramp:
    start: float
    end: float
    seconds: float

    def value_at(self, t: float) -> float:
        if self.seconds <= 0 or t >= self.seconds:
            return self.end
        return self.start + (self.end - self.start) * max(0.0, t) / self.seconds

    @property
    def duration_s(self) -> float:
        return self.seconds


@dataclass(frozen=True)
class Trace:
    """A recorded rate trace: points (t_s, requests_per_s), replayed step-wise; loops when `loop`."""

    points: tuple[tuple[float, float], ...]
    loop: bool = False

    @classmethod
    def from_csv(cls, path: str | Path, loop: bool = False) -> Trace:
        path = Path(path)
        points = []
        with open(path, newline="", encoding="utf-8") as f:
            for lineno, row in enumerate(csv.reader(f), 1):
                if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                    continue
                if len(row) < 2:
                    raise ShapeError(f"{path}:{lineno}: expected t_s,requests_per_s")
                try:
                    t, r = float(row[0]), float(row[1])
                except ValueError:
                    if not points and lineno == 1:
                        continue  # a header line
                    raise ShapeError(f"{path}:{lineno}: not numbers: {','.join(row)}") from None
                if r < 0 or t < 0:
                    raise ShapeError(f"{path}:{lineno}: negative time or rate")
                if points and t <= points[-1][0]:
                    raise ShapeError(f"{path}:{lineno}: times must increase ({t:g} after {points[-1][0]:g})")
                points.append((t, r))
        if not points:
            raise ShapeError(f"{path}: no t_s,requests_per_s rows")
        return cls(tuple(points), loop)

    def value_at(self, t: float) -> float:
        if self.loop and self.duration_s > 0:
            t = t % self.duration_s
        times = [p[0] for p in self.points]
        i = max(0, bisect.bisect_right(times, t) - 1)
        return self.points[i][1]

    @property
    def duration_s(self) -> float:
        return self.points[-1][0]
