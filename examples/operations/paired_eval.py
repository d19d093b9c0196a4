"""Q127: compare a deployment with its reference item by item, per category, so that a broken slice is not
averaged away.

Each item was run on the reference (the known-good serving of the same weights) and on the candidate
deployment with the same prompt and explicit greedy sampling, and graded. Per category, the discordant
pairs decide: ``lost`` items the reference got right and the candidate got wrong, ``gained`` the reverse.
Under "no difference" each discordant pair is a fair coin, so the exact two-sided McNemar p-value is a
binomial tail (computed here with the standard library).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from math import comb


def mcnemar_exact(lost: int, gained: int) -> float:
    """Two-sided exact p-value: 2 x P(X <= min(lost, gained)) for X ~ Binomial(lost + gained, 1/2), capped at 1."""
    n, k = lost + gained, min(lost, gained)
    if n == 0:
        return 1.0
    return min(1.0, 2 * sum(comb(n, i) for i in range(k + 1)) / 2 ** n)


# --8<-- [start:paired]
def paired_report(items: Iterable[tuple[str, bool, bool]], alpha: float = 0.01) -> dict[str, dict]:
    """items: (category, reference correct, candidate correct). Per category and overall: accuracy of each,
    lost and gained items, the exact p-value, and whether the candidate regressed significantly."""
    cells: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])      # n, reference right, candidate right
    lost_gained: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for cat, ref, cand in items:
        for key in (cat, "ALL"):
            c = cells[key]
            c[0] += 1
            c[1] += ref
            c[2] += cand
            lost_gained[key][0] += ref and not cand
            lost_gained[key][1] += cand and not ref
    out = {}
    for key, (n, r, k) in sorted(cells.items()):
        lost, gained = lost_gained[key]
        p = mcnemar_exact(lost, gained)
        out[key] = {"n": n, "reference": r / n, "candidate": k / n, "lost": lost, "gained": gained,
                    "p": p, "regressed": lost > gained and p < alpha}
    return out
# --8<-- [end:paired]
