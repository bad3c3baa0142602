"""A fixed-memory, HDR-style latency histogram (log-linear buckets, under 1% relative error).

Recording is one integer computation and one list increment; percentiles walk 4,096 counters. No sorting of
samples, no growth with the number of requests.
"""

from __future__ import annotations

import math

SUB_BITS = 7
SUB = 1 << SUB_BITS  # 128 linear sub-buckets per power of two
DIRECT = 2 * SUB  # values below 256 us are counted exactly
SIZE = 4096  # covers up to about 2**37 us (38 hours); larger values land in the last bucket


def bucket_of(v: int) -> int:
    if v < DIRECT:
        return v if v > 0 else 0
    e = v.bit_length() - (SUB_BITS + 1)
    i = DIRECT + (e - 1) * SUB + ((v >> e) - SUB)
    return i if i < SIZE else SIZE - 1


def bucket_value(i: int) -> float:
    """The middle of bucket i, in microseconds."""
    if i < DIRECT:
        return float(i)
    e = (i - DIRECT) // SUB + 1
    mantissa = (i - DIRECT) % SUB + SUB
    low = mantissa << e
    return low + ((1 << e) - 1) / 2


class LatencyHistogram:
    __slots__ = ("counts", "count", "total", "min", "max")

    def __init__(self) -> None:
        self.counts = [0] * SIZE
        self.count = 0
        self.total = 0
        self.min = math.inf
        self.max = 0

    def record(self, us: int) -> None:
        self.counts[bucket_of(us)] += 1
        self.count += 1
        self.total += us
        if us < self.min:
            self.min = us
        if us > self.max:
            self.max = us

    def merge(self, other: LatencyHistogram) -> None:
        c = self.counts
        for i, n in enumerate(other.counts):
            if n:
                c[i] += n
        self.count += other.count
        self.total += other.total
        self.min = min(self.min, other.min)
        self.max = max(self.max, other.max)

    def percentile(self, p: float) -> float | None:
        """The p-th percentile in microseconds (None when empty)."""
        if not self.count:
            return None
        target = max(1, math.ceil(p / 100.0 * self.count))
        seen = 0
        for i, n in enumerate(self.counts):
            if n:
                seen += n
                if seen >= target:
                    return min(max(bucket_value(i), float(self.min)), float(self.max))
        return float(self.max)

    def percentiles(self, ps=(50, 90, 95, 99)) -> dict[float, float | None]:
        if not self.count:
            return {p: None for p in ps}
        targets = sorted((max(1, math.ceil(p / 100.0 * self.count)), p) for p in ps)
        out: dict[float, float | None] = {}
        seen = 0
        k = 0
        for i, n in enumerate(self.counts):
            if not n:
                continue
            seen += n
            while k < len(targets) and seen >= targets[k][0]:
                out[targets[k][1]] = min(max(bucket_value(i), float(self.min)), float(self.max))
                k += 1
            if k == len(targets):
                break
        return out

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None
