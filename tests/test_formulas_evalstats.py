"""Paired evaluation statistics (macros/formulas/evalstats.py), against a textbook example and by hand."""

from __future__ import annotations

import math

import pytest

from macros.errors import MacroInputError
from macros.formulas import mcnemar_exact_p, paired_comparison
from macros.render import MACROS


def test_agresti_presidential_approval():
    # Agresti, An Introduction to Categorical Data Analysis (2nd ed.), section 8.1: 1,600 people, 944
    # approve at the first survey; 150 switch approve -> disapprove (b), 86 the reverse (c).
    # The book gives z = -4.17 (z^2 = 17.36), a difference of -0.04 and the 95% interval (-0.059, -0.021)
    # (reported there as 0.04 with interval (0.021, 0.059), first minus second survey).
    r = paired_comparison(1600, 944, 150, 86)
    assert r.z == pytest.approx(-4.17, abs=0.005)
    assert r.z**2 == pytest.approx(17.36, abs=0.01)
    assert r.difference == pytest.approx(-0.04)
    assert r.ci_low == pytest.approx(-0.059, abs=0.0005)
    assert r.ci_high == pytest.approx(-0.021, abs=0.0005)
    assert r.base_accuracy == pytest.approx(0.59) and r.candidate_accuracy == pytest.approx(0.55)


def test_exact_p_by_hand():
    # b = 1, c = 5: P(X <= 1) for Binomial(6, 1/2) = (1 + 6) / 64; two-sided 14/64
    assert mcnemar_exact_p(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact_p(3, 3) == 1.0          # capped at 1
    assert mcnemar_exact_p(0, 0) == 1.0


def test_pairing_detects_what_unpaired_misses():
    # 1,319 items, baseline 1,000 right, 45 lost and 25 gained: difference -20/1319.
    r = paired_comparison(1319, 1000, 45, 25)
    assert r.z == pytest.approx(-20 / math.sqrt(70))
    assert r.p_value == pytest.approx(math.erfc(20 / math.sqrt(70) / math.sqrt(2)))
    assert r.p_value < 0.05
    # unpaired: sqrt(p1 q1 / n + p2 q2 / n) with p1 = 1000/1319, p2 = 980/1319
    p1, p2 = 1000 / 1319, 980 / 1319
    se = math.sqrt(p1 * (1 - p1) / 1319 + p2 * (1 - p2) / 1319)
    assert r.unpaired_z == pytest.approx((-20 / 1319) / se)
    assert abs(r.unpaired_z) < 1.96


def test_inconsistent_counts_are_rejected():
    with pytest.raises(ValueError, match="base_only"):
        paired_comparison(100, 10, 11, 0)
    with pytest.raises(ValueError, match="candidate_only"):
        paired_comparison(100, 95, 0, 6)
    with pytest.raises(ValueError, match="base_correct"):
        paired_comparison(100, 101, 0, 0)


def test_macro_renders_and_rejects():
    html = MACROS["paired_eval"](1319, 1000, 45, 25, label="GSM8K test")
    assert "z = (25 − 45) / sqrt(70) = -2.39" in html
    assert "the interval excludes zero" in html
    html = MACROS["paired_eval"](1319, 1000, 12, 9)
    assert "includes zero" in html
    with pytest.raises(MacroInputError, match="whole number"):
        MACROS["paired_eval"](1319, 1000, 4.5, 2)
    with pytest.raises(MacroInputError, match="base_only"):
        MACROS["paired_eval"](1319, 10, 45, 2)
