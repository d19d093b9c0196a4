"""Comparing two models on the same evaluation items: the paired test.

When a baseline and a quantized model answer the same ``n`` items, only the discordant items carry
information about the difference: ``b`` items the baseline got right and the candidate got wrong,
``c`` the reverse. McNemar's test (McNemar 1947; Agresti, *An Introduction to Categorical Data
Analysis*, 2nd ed., section 8.1) uses ``z = (c − b) / sqrt(b + c)``; the Wald interval for the paired
difference of accuracies is ``(c − b)/n ± z_{1−α/2} × sqrt(b + c − (c − b)²/n) / n``. Treating the two
runs as independent samples ignores the pairing and overstates the noise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

from . import _checks as chk

__all__ = ["PairedComparison", "paired_comparison", "mcnemar_exact_p"]

_STD = NormalDist()


@dataclass(frozen=True)
class PairedComparison:
    n: int
    base_accuracy: float
    candidate_accuracy: float
    difference: float          # candidate − baseline, as a fraction of items
    z: float                   # McNemar (c − b) / sqrt(b + c); 0 when there are no discordant items
    p_value: float             # two-sided, normal approximation of McNemar (= chi-square, 1 df)
    exact_p_value: float       # two-sided exact binomial on the discordant items
    ci_low: float              # paired Wald interval of the difference
    ci_high: float
    unpaired_z: float          # the same difference tested as two independent proportions


def mcnemar_exact_p(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value: ``min(1, 2 × P(X <= min(b, c)))``, ``X ~ Binomial(b + c, 1/2)``."""
    b = chk.non_negative_int("b", b)
    c = chk.non_negative_int("c", c)
    m = b + c
    if m == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2**m
    return min(1.0, 2 * tail)


def paired_comparison(n: int, base_correct: int, base_only: int, candidate_only: int,
                      confidence: float = 0.95) -> PairedComparison:
    """Accuracy difference of a candidate against a baseline on the same ``n`` items.

    ``base_only`` (b): items only the baseline got right; ``candidate_only`` (c): items only the
    candidate got right. The candidate's correct count is ``base_correct − b + c``.
    """
    n = chk.positive_int("n", n)
    k = chk.non_negative_int("base_correct", base_correct)
    b = chk.non_negative_int("base_only", base_only)
    c = chk.non_negative_int("candidate_only", candidate_only)
    if k > n:
        raise ValueError(f"base_correct ({k}) cannot exceed n ({n})")
    if b > k:
        raise ValueError(f"base_only ({b}) cannot exceed base_correct ({k})")
    if c > n - k:
        raise ValueError(f"candidate_only ({c}) cannot exceed the items the baseline got wrong ({n - k})")
    chk.fraction("confidence", confidence, allow_one=False)
    zq = _STD.inv_cdf(1 - (1 - confidence) / 2)
    p1 = k / n
    p2 = (k - b + c) / n
    diff = (c - b) / n
    z = (c - b) / math.sqrt(b + c) if b + c else 0.0
    p = math.erfc(abs(z) / math.sqrt(2))
    se = math.sqrt(max(b + c - (c - b) ** 2 / n, 0.0)) / n
    se_unpaired = math.sqrt(p1 * (1 - p1) / n + p2 * (1 - p2) / n)
    uz = diff / se_unpaired if se_unpaired else 0.0
    return PairedComparison(n, p1, p2, diff, z, p, mcnemar_exact_p(b, c), diff - zq * se, diff + zq * se, uz)
