"""Data drift statistics: the population stability index (PSI) and the two-sample
Kolmogorov-Smirnov (KS) statistic.

PSI compares binned distributions (shares per bin, baseline vs current); KS compares two samples
through their empirical cumulative distribution functions. Pure Python; no SciPy.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from typing import Sequence

from . import _checks as chk

__all__ = ["bin_shares", "psi", "psi_terms", "ks_statistic", "ks_critical_value"]


def bin_shares(counts: Sequence[float], name: str = "counts") -> list[float]:
    """Counts per bin turned into shares that sum to 1."""
    if len(counts) < 2:
        raise ValueError(f"{name} needs at least 2 bins, got {len(counts)}")
    for i, c in enumerate(counts):
        chk.non_negative(f"{name}[{i}]", c)
    total = sum(counts)
    if total <= 0:
        raise ValueError(f"{name} must contain at least one observation")
    return [c / total for c in counts]


def psi_terms(expected: Sequence[float], actual: Sequence[float], epsilon: float = 1e-4) -> list[float]:
    """Per-bin PSI contributions ``(a - e) x ln(a / e)`` from counts or shares per bin.

    ``expected`` is the baseline (training or reference window), ``actual`` the current window, with
    the same bins. Empty bins are floored at ``epsilon`` so the logarithm stays finite (a common
    convention; the floor changes the result, which is why it is a parameter).
    """
    if len(expected) != len(actual):
        raise ValueError(f"expected and actual need the same bins, got {len(expected)} and {len(actual)}")
    chk.positive("epsilon", epsilon)
    e = bin_shares(expected, "expected")
    a = bin_shares(actual, "actual")
    out = []
    for ei, ai in zip(e, a):
        ei, ai = max(ei, epsilon), max(ai, epsilon)
        out.append((ai - ei) * math.log(ai / ei))
    return out


def psi(expected: Sequence[float], actual: Sequence[float], epsilon: float = 1e-4) -> float:
    """Population stability index: ``sum over bins of (a - e) x ln(a / e)``; 0 when nothing moved.

    Symmetric in its two arguments (it is the symmetrised Kullback-Leibler divergence, J-divergence).
    """
    return sum(psi_terms(expected, actual, epsilon))


def ks_statistic(sample_a: Sequence[float], sample_b: Sequence[float]) -> float:
    """Two-sample Kolmogorov-Smirnov statistic ``D = max_x |F_a(x) - F_b(x)|`` of the empirical CDFs.

    The maximum is taken over every observed value (the ECDFs only change there), ties included.
    """
    if not sample_a or not sample_b:
        raise ValueError("ks_statistic needs two non-empty samples")
    a, b = sorted(sample_a), sorted(sample_b)
    for name, s in (("sample_a", a), ("sample_b", b)):
        for v in s:
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
                raise ValueError(f"{name} must contain finite numbers, got {v!r}")
    d = 0.0
    for x in a + b:
        fa = bisect_right(a, x) / len(a)
        fb = bisect_right(b, x) / len(b)
        d = max(d, abs(fa - fb))
    return d


def ks_critical_value(n: int, m: int, alpha: float = 0.05) -> float:
    """Large-sample critical value of the two-sample KS test: ``c(alpha) x sqrt((n + m) / (n x m))``.

    ``c(alpha) = sqrt(-ln(alpha / 2) / 2)`` (1.358 at alpha = 0.05). Reject "same distribution" when
    D exceeds it. The approximation is for large samples; with huge samples any tiny shift rejects.
    """
    n = chk.positive_int("n", n)
    m = chk.positive_int("m", m)
    chk.fraction("alpha", alpha, allow_one=False)
    c = math.sqrt(-math.log(alpha / 2) / 2)
    return c * math.sqrt((n + m) / (n * m))
