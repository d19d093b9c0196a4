"""Q127: examples/operations/paired_eval.py. Binomial tails worked by hand in the comments."""

from __future__ import annotations

import math

from examples.operations.paired_eval import mcnemar_exact, paired_report


def test_mcnemar_exact_by_hand() -> None:
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(12, 0) == 2 / 2 ** 12                 # only "all twelve lost" is as extreme: 0.000488
    assert mcnemar_exact(3, 3) == 1.0                          # 2 x P(X <= 3 | n = 6) > 1, capped
    # n = 5, k = 1: 2 x (C(5,0) + C(5,1)) / 32 = 2 x 6 / 32 = 0.375
    assert math.isclose(mcnemar_exact(4, 1), 0.375)


def items() -> list[tuple[str, bool, bool]]:
    out = []
    # chat, 900 items: 798 right on both, 2 lost, 10 gained, 90 wrong on both (reference 800, candidate 808).
    out += [("chat", True, True)] * 798 + [("chat", True, False)] * 2 + [("chat", False, True)] * 10
    out += [("chat", False, False)] * 90
    # json, 100 items: 78 right on both, 12 lost, 0 gained, 10 wrong on both (reference 90, candidate 78).
    out += [("json", True, True)] * 78 + [("json", True, False)] * 12 + [("json", False, False)] * 10
    return out


def test_the_overall_average_hides_a_broken_slice() -> None:
    r = paired_report(items())
    # Overall: reference 890/1000, candidate 886/1000; 14 lost vs 10 gained, p = 2 x P(X <= 10 | n = 24) = 0.541.
    assert (r["ALL"]["reference"], r["ALL"]["candidate"]) == (0.89, 0.886)
    assert (r["ALL"]["lost"], r["ALL"]["gained"]) == (14, 10)
    assert math.isclose(r["ALL"]["p"], 0.5413, abs_tol=1e-4) and not r["ALL"]["regressed"]
    # The json slice: 12 lost, 0 gained, p = 0.000488 < 0.01.
    assert r["json"]["regressed"] and (r["json"]["lost"], r["json"]["gained"]) == (12, 0)
    assert not r["chat"]["regressed"]                           # it improved
