"""Error budgets, burn rates, histogram quantiles and drift statistics against hand-computed and
published values."""

from __future__ import annotations

import math

import pytest

from macros.formulas import (MWMB_POLICY, budget_spent, burn_rate_error_ratio, burn_rate_threshold, cumulative,
                             error_budget_minutes, histogram_quantile, ks_critical_value, ks_statistic, psi,
                             time_to_exhaustion_hours)


def test_error_budget_minutes_by_hand():
    # 30 days = 43,200 minutes; 0.1% of that is 43.2 min, 0.01% is 4.32 min, 1% is 432 min.
    assert error_budget_minutes(0.999) == pytest.approx(43.2)
    assert error_budget_minutes(0.9999) == pytest.approx(4.32)
    assert error_budget_minutes(0.99) == pytest.approx(432)
    assert error_budget_minutes(0.995, window_days=28) == pytest.approx(201.6)
    for bad in (1.0, 0, -0.5, 1.2):
        with pytest.raises(ValueError, match="slo"):
            error_budget_minutes(bad)


def test_burn_rates_of_the_sre_workbook_table():
    # Google SRE workbook, "Alerting on SLOs", recommended parameters for a 30-day window:
    # 2% in 1 h -> 14.4, 5% in 6 h -> 6, 10% in 3 days -> 1.
    assert burn_rate_threshold(0.02, 1) == pytest.approx(14.4)
    assert burn_rate_threshold(0.05, 6) == pytest.approx(6)
    assert burn_rate_threshold(0.10, 72) == pytest.approx(1)
    assert [(s, b, lw) for s, b, lw, _ in MWMB_POLICY] == [("page", 0.02, 1.0), ("page", 0.05, 6.0),
                                                           ("ticket", 0.10, 72.0)]
    assert all(short == pytest.approx(long / 12) for _, _, long, short in MWMB_POLICY)
    # 14.4 x 0.1% = 1.44% errors; a full budget lasts 720 h / 14.4 = 50 h.
    assert burn_rate_error_ratio(14.4, 0.999) == pytest.approx(0.0144)
    assert time_to_exhaustion_hours(14.4) == pytest.approx(50)
    # Burning at 14.4 for one hour spends 2% of the budget; at 1.44% errors, the same.
    assert budget_spent(0.0144, 0.999, 1) == pytest.approx(0.02)
    with pytest.raises(ValueError, match="must not exceed"):
        burn_rate_threshold(0.1, 800)


def test_histogram_quantile_by_hand():
    b = list(zip([0.1, 0.5, 1.0, math.inf], cumulative([10, 50, 30, 10])))
    assert b[-1] == (math.inf, 100)
    # rank 50 in (0.1, 0.5]: 40 of its 50 -> 0.1 + 0.4 x 0.8 = 0.42
    assert histogram_quantile(0.5, b) == pytest.approx(0.42)
    # rank 5 in the first bucket, interpolated from 0: 0.1 x 5/10 = 0.05
    assert histogram_quantile(0.05, b) == pytest.approx(0.05)
    # rank 90 exactly fills (0.5, 1]: its upper bound
    assert histogram_quantile(0.9, b) == pytest.approx(1.0)
    # rank 99 in +Inf: the highest finite bound
    assert histogram_quantile(0.99, b) == 1.0
    # a lowest bucket with a bound <= 0 returns that bound
    assert histogram_quantile(0.1, [(-1.0, 20), (0.0, 40), (math.inf, 100)]) == -1.0
    with pytest.raises(ValueError, match="Inf"):
        histogram_quantile(0.5, [(0.1, 1), (0.5, 2)])
    with pytest.raises(ValueError, match="cumulative"):
        histogram_quantile(0.5, [(0.1, 5), (0.5, 2), (math.inf, 9)])
    with pytest.raises(ValueError, match="no observations"):
        histogram_quantile(0.5, [(0.1, 0), (math.inf, 0)])


def test_psi_by_hand():
    # e = 0.25 x 4, a = 0.1/0.2/0.3/0.4:
    # -0.15 ln 0.4 + -0.05 ln 0.8 + 0.05 ln 1.2 + 0.15 ln 1.6
    # = 0.137444 + 0.011157 + 0.009116 + 0.070501 = 0.228218
    assert psi([25, 25, 25, 25], [10, 20, 30, 40]) == pytest.approx(0.228218, abs=1e-6)
    assert psi([1, 2, 3], [2, 4, 6]) == pytest.approx(0)  # same shares, different sizes
    assert psi([10, 20, 30, 40], [25, 25, 25, 25]) == pytest.approx(psi([25, 25, 25, 25], [10, 20, 30, 40]))
    with pytest.raises(ValueError, match="same bins"):
        psi([1, 2], [1, 2, 3])


def test_ks_by_hand():
    # ECDFs of {1,2,3,4} and {3,4,5,6}: at x = 2, 0.5 vs 0 -> D = 0.5
    assert ks_statistic([1, 2, 3, 4], [3, 4, 5, 6]) == pytest.approx(0.5)
    assert ks_statistic([1, 2, 3], [4, 5, 6]) == 1.0
    assert ks_statistic([5, 1, 3], [3, 1, 5]) == 0.0
    # c(0.05) = sqrt(-ln(0.025) / 2) = 1.3581 (the tabulated 1.36); n = m = 50 -> 1.3581 x sqrt(0.04)
    assert ks_critical_value(50, 50) == pytest.approx(1.35810 * 0.2, abs=1e-5)
    with pytest.raises(ValueError):
        ks_statistic([], [1])


def test_ks_critical_macro():
    # 1.3581 x sqrt((10 + 10) / (10 x 10)) = 1.3581 x 0.44721 = 0.60736 (hand); a bad size is named
    from macros.errors import MacroInputError
    from macros.render.monitoring import ks_critical

    assert ks_critical(10, 10) == "0.6074"
    assert ks_critical(20000, 20000) == "0.0136"  # 1.3581 x sqrt(1e-4)
    with pytest.raises((MacroInputError, ValueError), match="n"):
        ks_critical(0, 10)


def test_drill_budget_example_by_hand():
    # 99.9% over 30 days: 0.001 x 30 x 1440 = 43.2 budget minutes. A drill failing 10% of requests for
    # 15 minutes costs 0.1 x 15 = 1.5 full-outage minutes; 1.5 / 43.2 = 0.034722..., shown as 3.47%.
    from tests.render_support import render_example
    out = render_example("drill_budget_example")
    assert "43.2 min of full outage" in out
    assert "1.50 full-outage minutes" in out
    assert "3.47% of the 30-day budget" in out


def test_drill_budget_example_rejects_bad_input():
    from macros.errors import MacroInputError
    from macros.render import MACROS
    with pytest.raises(MacroInputError, match="minutes"):
        MACROS["drill_budget_example"](0.1, -5, 0.999)
    with pytest.raises(Exception, match="error_ratio"):
        MACROS["drill_budget_example"](1.5, 15, 0.999)
