"""Paired comparison of a baseline and a candidate model on the same evaluation items (formulas:
:mod:`macros.formulas.evalstats`)."""

from __future__ import annotations

from .. import formulas as F
from .blocks import GIVEN, Example, _i
from . import inputs
from .registry import COUNT, Arg, macro

_COUNT0 = Arg(lambda name, v: inputs.number(name, v, positive=False), "a whole number", ">= 0")


def _p(x: float) -> str:
    return "< 0.001" if x < 0.001 else f"= {x:.3f}"


def _pts(x: float) -> str:
    return f"{x * 100:+.1f} points"


@macro("block", args={"n": COUNT, "base_correct": _COUNT0, "base_only": _COUNT0, "candidate_only": _COUNT0},
       example='paired_eval(1319, 1000, 45, 25)')
def paired_eval(n: int, base_correct: int, base_only: int, candidate_only: int, label: str = "benchmark") -> str:
    """Worked example: McNemar's test and the paired interval for a candidate vs a baseline on the same items.

    `base_only` = items only the baseline answered correctly (b), `candidate_only` = items only the
    candidate did (c). Shows the difference, McNemar's z = (c − b)/sqrt(b + c) with its two-sided p
    (normal and exact binomial), the 95 % paired Wald interval, and the z an unpaired two-proportion
    test would give for the same difference.
    """
    for name, v in (("base_correct", base_correct), ("base_only", base_only), ("candidate_only", candidate_only)):
        if int(v) != v:
            raise ValueError(f"{name} must be a whole number of items, got {v!r}")
    r = F.paired_comparison(n, int(base_correct), int(base_only), int(candidate_only))
    b, c = int(base_only), int(candidate_only)
    ex = Example(f"paired comparison on {_i(n)} {label} items")
    ex.formula("difference = (c − b) / n;  McNemar z = (c − b) / sqrt(b + c)")
    ex.formula("95% interval = difference ± 1.96 × sqrt(b + c − (c − b)² / n) / n")
    ex.input("items n", _i(n), GIVEN)
    ex.input("baseline correct", _i(base_correct), GIVEN)
    ex.input("b: right only for the baseline", _i(b), "per-item results of both runs")
    ex.input("c: right only for the candidate", _i(c), "per-item results of both runs")
    ex.step(f"accuracy: baseline {r.base_accuracy * 100:.1f}%, candidate {r.candidate_accuracy * 100:.1f}%, "
            f"difference ({_i(c)} − {_i(b)}) / {_i(n)} = {_pts(r.difference)}")
    ex.step(f"McNemar: z = ({_i(c)} − {_i(b)}) / sqrt({_i(b + c)}) = {r.z:.2f}; two-sided p {_p(r.p_value)} "
            f"(exact binomial: p {_p(r.exact_p_value)})")
    ex.step(f"paired 95% interval: {_pts(r.ci_low)} to {_pts(r.ci_high)}")
    ex.step(f"the same two accuracies treated as independent samples: z = {r.unpaired_z:.2f}")
    verdict = ("the interval excludes zero: a change beyond chance at the 95% level" if r.ci_high < 0 or r.ci_low > 0
               else "the interval includes zero: not distinguishable from no change on this set")
    ex.result(f"{_pts(r.difference)}, {verdict}")
    ex.note("Assumes deterministic scoring of each item (greedy decoding or a fixed seed), so that b and c "
            "come from the models rather than from sampling noise.")
    return ex.render()
