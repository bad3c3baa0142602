"""A/B comparison of two configs at the same load: alternate them (A B A B ...), one steady measurement per
turn, then the difference of the means with a 95% confidence interval (Welch's t, no scipy).

    plan = ab_schedule(rounds=3)          # ["A", "B", "A", "B", "A", "B"]
    r = compare([a1, a2, a3], [b1, b2, b3])
    r.diff, r.low, r.high, r.significant  # B - A
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

# two-sided 95%: t_{0.975, df} for df = 1..30
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
Z975 = 1.959964


def t975(df: float) -> float:
    """The 97.5% quantile of Student's t with df degrees of freedom (table to 30, then Cornish-Fisher)."""
    if df <= 0 or math.isnan(df):
        return float("inf")
    if df <= 30:
        lo = max(1, math.floor(df))
        hi = min(30, lo + 1)
        a, b = _T975[lo - 1], _T975[hi - 1]
        return a + (b - a) * (df - lo) if hi != lo else a
    z = Z975
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def ab_schedule(rounds: int) -> list[str]:
    if rounds < 1:
        raise ValueError("at least one round")
    return ["A", "B"] * rounds


@dataclass
class Comparison:
    mean_a: float
    mean_b: float
    diff: float  # mean_b - mean_a
    low: float
    high: float
    df: float

    @property
    def significant(self) -> bool:
        return self.low > 0 or self.high < 0

    @property
    def ratio(self) -> float | None:
        return self.mean_b / self.mean_a if self.mean_a else None

    def text(self, unit: str = "") -> str:
        u = f" {unit}" if unit else ""
        return f"B-A {self.diff:+.4g}{u} (95% CI {self.low:+.4g} .. {self.high:+.4g}{u})"


def compare(a: list[float], b: list[float]) -> Comparison:
    """Welch's two-sample interval for mean(b) - mean(a); needs at least 2 values on each side."""
    if len(a) < 2 or len(b) < 2:
        raise ValueError("need at least two measurements of each config")
    ma, mb = statistics.fmean(a), statistics.fmean(b)
    va, vb = statistics.variance(a), statistics.variance(b)
    sa, sb = va / len(a), vb / len(b)
    se = math.sqrt(sa + sb)
    diff = mb - ma
    if se == 0:
        return Comparison(ma, mb, diff, diff, diff, float("inf"))
    df = (sa + sb) ** 2 / ((sa**2 / (len(a) - 1) if sa else 0) + (sb**2 / (len(b) - 1) if sb else 0))
    h = t975(df) * se
    return Comparison(ma, mb, diff, diff - h, diff + h, df)
