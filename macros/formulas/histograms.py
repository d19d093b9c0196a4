"""Quantiles from cumulative histogram buckets, the way Prometheus's ``histogram_quantile`` computes
them for classic histograms (promql/quantile.go, ``bucketQuantile``, Prometheus 2.x).

Buckets are ``(upper_bound, cumulative_count)`` pairs, the last one ``+Inf``. The quantile is
interpolated linearly inside the bucket that holds the rank ``q x total``; the lowest bucket starts at
0 when its bound is positive; a rank that lands in the ``+Inf`` bucket returns the highest finite bound.
"""

from __future__ import annotations

import math
from typing import Sequence

from . import _checks as chk

__all__ = ["histogram_quantile", "quantile_bucket", "cumulative"]


def cumulative(counts: Sequence[float]) -> list[float]:
    """Per-bucket counts turned into the cumulative counts Prometheus exposes."""
    out, total = [], 0.0
    for i, c in enumerate(counts):
        total += chk.non_negative(f"counts[{i}]", c)
        out.append(total)
    return out


def _checked(buckets: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    if len(buckets) < 2:
        raise ValueError(f"need at least 2 buckets (one of them +Inf), got {len(buckets)}")
    bs = sorted((float(le), float(c)) for le, c in buckets)
    if not math.isinf(bs[-1][0]) or bs[-1][0] < 0:
        raise ValueError("the highest bucket must be +Inf")
    for i, (le, c) in enumerate(bs):
        chk.non_negative(f"count of bucket le={le}", c)
        if i and le == bs[i - 1][0]:
            raise ValueError(f"duplicate bucket bound le={le}")
        if i and c < bs[i - 1][1]:
            raise ValueError(f"bucket counts must be cumulative (non-decreasing); le={le} has {c} "
                             f"after {bs[i - 1][1]}")
    if bs[-1][1] == 0:
        raise ValueError("the histogram has no observations")
    return bs


def quantile_bucket(q: float, buckets: Sequence[tuple[float, float]]) -> tuple[float, float, float, float]:
    """The bucket that holds quantile ``q``: ``(lower bound, upper bound, rank inside it, count in it)``."""
    chk.fraction("q", q, allow_zero=True)
    bs = _checked(buckets)
    rank = q * bs[-1][1]
    b = next((i for i, (_, c) in enumerate(bs[:-1]) if c >= rank), len(bs) - 1)
    lower = bs[b - 1][0] if b > 0 else 0.0
    below = bs[b - 1][1] if b > 0 else 0.0
    return lower, bs[b][0], rank - below, bs[b][1] - below


def histogram_quantile(q: float, buckets: Sequence[tuple[float, float]]) -> float:
    """``histogram_quantile(q, ...)`` on one set of cumulative buckets, as Prometheus evaluates it.

    ``lower + (upper - lower) x (rank - count below) / count in bucket``. If the rank falls in the
    ``+Inf`` bucket, the highest finite bound is returned; if it falls in a lowest bucket whose bound
    is <= 0, that bound is returned.
    """
    chk.fraction("q", q, allow_zero=True)
    bs = _checked(buckets)
    rank = q * bs[-1][1]
    # First finite bucket whose cumulative count reaches the rank; len - 1 (the +Inf bucket) if none.
    b = next((i for i, (_, c) in enumerate(bs[:-1]) if c >= rank), len(bs) - 1)
    if b == len(bs) - 1:
        return bs[-2][0]
    if b == 0 and bs[0][0] <= 0:
        return bs[0][0]
    lower = bs[b - 1][0] if b > 0 else 0.0
    below = bs[b - 1][1] if b > 0 else 0.0
    return lower + (bs[b][0] - lower) * ((rank - below) / (bs[b][1] - below))
