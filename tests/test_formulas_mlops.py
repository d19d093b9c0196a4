"""MLOps formulas against published figures and hand arithmetic, never against their own output."""

from __future__ import annotations

import math

import pytest

from macros.formulas import mlops as M

# Standard normal quantiles from printed tables: z(0.975), z(0.95), z(0.90), z(0.80).
Z975, Z95, Z90, Z80 = 1.959964, 1.644854, 1.281552, 0.841621


def test_quantiles_match_printed_tables():
    for p, z in ((0.975, Z975), (0.95, Z95), (0.90, Z90), (0.80, Z80)):
        assert M.z_quantile(p) == pytest.approx(z, abs=1e-6)


def _r_power_prop_test_power(n, p1, p2, sig_level=0.05):
    # R's power equation, transcribed from src/library/stats/R/power.R (power.prop.test, two-sided, strict = FALSE):
    # pnorm((sqrt(n) * |p1 - p2| - qnorm(sig.level / 2, lower = FALSE) * sqrt((p1 + p2) * (1 - (p1 + p2) / 2)))
    #       / sqrt(p1 (1 - p1) + p2 (1 - p2)))
    from statistics import NormalDist
    nd = NormalDist()
    q = nd.inv_cdf(1 - sig_level / 2)
    return nd.cdf((math.sqrt(n) * abs(p1 - p2) - q * math.sqrt((p1 + p2) * (1 - (p1 + p2) / 2)))
                  / math.sqrt(p1 * (1 - p1) + p2 * (1 - p2)))


def test_sample_size_matches_r_power_prop_test_example():
    # The example in R's power.prop.test documentation: power.prop.test(p1 = .50, p2 = .75, power = .90).
    # R finds n with uniroot on its power equation; bisection on the transcribed equation does the same here.
    lo, hi = 1.0, 1e4
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _r_power_prop_test_power(mid, 0.50, 0.75) < 0.90 else (lo, mid)
    assert round(lo, 1) == 76.7
    assert M.two_proportion_sample_size(0.50, 0.75, alpha=0.05, power=0.90) == pytest.approx(lo, rel=1e-9)


def test_sample_size_closed_form_by_hand():
    # p1 = 0.05, p2 = 0.06, alpha 0.05 two-sided, power 0.8, evaluated with the table quantiles:
    # p_bar = 0.055; sqrt(2 x 0.055 x 0.945) = 0.322413; sqrt(0.0475 + 0.0564) = 0.322335
    # (1.959964 x 0.322413 + 0.841621 x 0.322335)^2 / 0.01^2 = (0.631918 + 0.271284)^2 / 1e-4 = 8157.7
    by_hand = (Z975 * math.sqrt(2 * 0.055 * 0.945) + Z80 * math.sqrt(0.05 * 0.95 + 0.06 * 0.94)) ** 2 / 0.01 ** 2
    assert by_hand == pytest.approx(8157.7, abs=0.1)
    assert M.two_proportion_sample_size(0.05, 0.06) == pytest.approx(by_hand, rel=1e-5)


def test_one_sided_needs_fewer_units():
    one = M.two_proportion_sample_size(0.05, 0.06, two_sided=False)
    by_hand = (Z95 * math.sqrt(2 * 0.055 * 0.945) + Z80 * math.sqrt(0.05 * 0.95 + 0.06 * 0.94)) ** 2 / 1e-4
    assert one == pytest.approx(by_hand, rel=1e-5)


def test_rule_of_thumb_is_close_to_the_exact_formula():
    # Kohavi et al.: n = 16 sigma^2 / delta^2 per variant at alpha 0.05, power 0.8.
    assert M.rule_of_thumb_sample_size(0.05, 0.0025) == pytest.approx(16 * 0.0475 / 0.0025 ** 2)
    exact = M.two_proportion_sample_size(0.05, 0.0525)
    assert abs(exact / M.rule_of_thumb_sample_size(0.05, 0.0025) - 1) < 0.02


def test_experiment_days_smaller_arm_sets_the_pace():
    # 10,000 per arm, 100,000 users a day, 5 % canary: the canary arm gets 5,000 a day, so 2 days.
    assert M.experiment_days(10_000, 100_000, 0.05) == pytest.approx(2.0)
    # 50/50: each arm gets 50,000 a day.
    assert M.experiment_days(10_000, 100_000, 0.5) == pytest.approx(0.2)
    # 10 % vs 10 % held-out control, rest untouched.
    assert M.experiment_days(10_000, 100_000, 0.1, control_share=0.1) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="treatment_share \\+ control_share must be <= 1"):
        M.experiment_days(10_000, 100_000, 0.6, control_share=0.6)


@pytest.mark.parametrize("looks, published", [(1, 0.05), (2, 0.083), (3, 0.107), (4, 0.126), (5, 0.142),
                                                (10, 0.193), (20, 0.248)])
def test_peeking_matches_armitage_mcpherson_rowe(looks, published):
    # Armitage, McPherson & Rowe (1969), repeated significance tests at nominal 5 %, as tabulated in
    # Jennison & Turnbull, "Group Sequential Methods with Applications to Clinical Trials", Table 1.1.
    assert M.peeking_false_positive_rate(looks) == pytest.approx(published, abs=0.0015)


def test_build_vs_buy_by_hand():
    # Build: 24 engineer-months at 20,000 = 480,000 once; 2 engineers (40,000) + 10,000 infra = 50,000 a month.
    # Buy: 3 engineer-months integration = 60,000 once; 20 seats x 1,500 + 8 nodes x 5,000 + 10,000 = 80,000 a month.
    r = M.build_vs_buy_costs(36, build_engineer_months=24, maintain_engineers=2, engineer_cost_per_month=20_000,
                             build_infra_per_month=10_000, seats=20, licence_per_seat_month=1_500, nodes=8,
                             licence_per_node_month=5_000, buy_integration_engineer_months=3,
                             buy_infra_per_month=10_000)
    assert r["build"] == 480_000 + 36 * 50_000 == 2_280_000
    assert r["buy"] == 60_000 + 36 * 80_000 == 2_940_000
    # (480,000 - 60,000) / (80,000 - 50,000) = 14 months exactly
    assert r["breakeven_month"] == 14


def test_build_cheaper_at_first_but_dearer_per_month_never_breaks_even():
    # Build: 0 once, 30,000 a month; buy: 100,000 once, 20,000 a month. Building is cheaper until month 10
    # (300,000 vs 300,000 at month 10), then dearer for ever: no month from which it stays no dearer.
    r = M.build_vs_buy_costs(24, build_engineer_months=0, maintain_engineers=1.5, engineer_cost_per_month=20_000,
                             build_infra_per_month=0, seats=20, licence_per_seat_month=1_000,
                             buy_integration_engineer_months=5)
    assert (r["build_once"], r["build_monthly"], r["buy_once"], r["buy_monthly"]) == (0, 30_000, 100_000, 20_000)
    assert r["breakeven_month"] == math.inf


def test_build_never_breaks_even_when_it_runs_dearer():
    r = M.build_vs_buy_costs(12, build_engineer_months=12, maintain_engineers=3, engineer_cost_per_month=20_000,
                             build_infra_per_month=0, seats=10, licence_per_seat_month=1_000)
    assert r["breakeven_month"] == math.inf


@pytest.mark.parametrize("call, message", [
    (lambda: M.two_proportion_sample_size(0.05, 0.05), "p_treatment must differ"),
    (lambda: M.two_proportion_sample_size(1.2, 0.05), "p_control must be a fraction strictly between 0 and 1"),
    (lambda: M.two_proportion_sample_size(0.05, 0.06, power=1), "power must be a fraction"),
    (lambda: M.experiment_days(0, 10, 0.1), "n_per_arm must be a positive number"),
    (lambda: M.peeking_false_positive_rate(0), "looks must be a whole number >= 1"),
    (lambda: M.build_vs_buy_costs(12, build_engineer_months=-1, maintain_engineers=1, engineer_cost_per_month=1,
                                  build_infra_per_month=0), "build_engineer_months must be a number >= 0"),
])
def test_bad_input_names_the_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_peeking_rate_is_remembered_and_bad_input_still_fails():
    M.peeking_false_positive_rate.cache_clear()
    first = M.peeking_false_positive_rate(7)
    assert M.peeking_false_positive_rate(7) == first
    info = M.peeking_false_positive_rate.cache_info()
    assert (info.hits, info.misses) == (1, 1)
    assert M.peeking_false_positive_rate(7.0) == first  # computed again (another key), the same figure
    with pytest.raises(ValueError, match="looks must be a whole number >= 1"):
        M.peeking_false_positive_rate(7.5)
