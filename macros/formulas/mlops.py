"""MLOps arithmetic: two-proportion sample size, experiment duration, the false-positive rate of
peeking, shadow-traffic cost, and a build-versus-buy cost comparison.

Units: proportions as fractions (0.05 for 5 %), requests or users per day, US dollars, months.
Statistics use the normal approximation; the standard library's ``statistics.NormalDist`` gives the
quantiles, so nothing here needs SciPy.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

from . import _checks as chk

__all__ = [
    "z_quantile",
    "two_proportion_sample_size",
    "rule_of_thumb_sample_size",
    "experiment_days",
    "peeking_false_positive_rate",
    "build_vs_buy_costs",
]

_STD = NormalDist()


def _open_fraction(name: str, value: float) -> float:
    """``value`` must lie strictly between 0 and 1."""
    if not chk._is_real(value) or not math.isfinite(value) or not 0 < value < 1:
        raise ValueError(f"{name} must be a fraction strictly between 0 and 1, got {value!r}")
    return value


def z_quantile(p: float) -> float:
    """The standard normal quantile ``z`` with ``P(Z <= z) = p``."""
    return _STD.inv_cdf(_open_fraction("p", p))


def two_proportion_sample_size(p_control: float, p_treatment: float, alpha: float = 0.05,
                               power: float = 0.8, two_sided: bool = True) -> float:
    """Units per arm for a two-sample test of proportions with equal arms (normal approximation).

    ``n = (z_a × sqrt(2 p̄ (1 − p̄)) + z_b × sqrt(p1 (1 − p1) + p2 (1 − p2)))² / (p2 − p1)²`` with
    ``p̄ = (p1 + p2) / 2``, ``z_a = z(1 − alpha/2)`` (two-sided) or ``z(1 − alpha)``, and
    ``z_b = z(power)``: the variance is pooled under H0 (first term) and unpooled under H1 (second
    term). This is Fleiss's formula without continuity correction and what R's ``power.prop.test``
    solves (``strict = FALSE``). Returns the unrounded value; round up for a plan.
    """
    p1 = _open_fraction("p_control", p_control)
    p2 = _open_fraction("p_treatment", p_treatment)
    if p1 == p2:
        raise ValueError("p_treatment must differ from p_control: a zero effect needs an infinite sample")
    _open_fraction("alpha", alpha)
    _open_fraction("power", power)
    z_a = z_quantile(1 - alpha / 2) if two_sided else z_quantile(1 - alpha)
    z_b = z_quantile(power)
    p_bar = (p1 + p2) / 2
    root = z_a * math.sqrt(2 * p_bar * (1 - p_bar)) + z_b * math.sqrt(p1 * (1 - p1) + p2 * (1 - p2))
    return root ** 2 / (p2 - p1) ** 2


def rule_of_thumb_sample_size(p_control: float, delta: float) -> float:
    """Kohavi et al.'s shortcut for alpha 0.05 (two-sided) and power 0.8: ``n ≈ 16 σ² / δ²`` per arm.

    ``σ² = p (1 − p)`` is the variance of a conversion metric at the control rate; ``delta`` is the
    absolute difference to detect. The 16 is ``2 × (1.96 + 0.84)²`` rounded.
    """
    p = _open_fraction("p_control", p_control)
    chk.positive("delta", delta)
    return 16 * p * (1 - p) / delta ** 2


def experiment_days(n_per_arm: float, units_per_day: float, treatment_share: float,
                    control_share: float | None = None) -> float:
    """Days until both arms hold ``n_per_arm`` units: ``n / (units per day × smaller arm's share)``.

    ``treatment_share`` is the share of traffic routed to the new version; ``control_share``
    defaults to the rest (``1 − treatment_share``). The smaller arm sets the duration.
    """
    chk.positive("n_per_arm", n_per_arm)
    chk.positive("units_per_day", units_per_day)
    t = _open_fraction("treatment_share", treatment_share)
    c = 1 - t if control_share is None else _open_fraction("control_share", control_share)
    if t + c > 1 + 1e-12:
        raise ValueError(f"treatment_share + control_share must be <= 1, got {t} + {c}")
    return n_per_arm / (units_per_day * min(t, c))


# Remembered: one call integrates about a million grid terms (0.1 to 0.2 s at 20 looks), and `mkdocs serve`
# re-renders the page that uses it, and the tests its example, on every rebuild.
@functools.lru_cache(maxsize=64)
def peeking_false_positive_rate(looks: int, alpha: float = 0.05, step: float = 0.05) -> float:
    """Chance that a true null is rejected at some look when a fixed two-sided z-test is repeated.

    ``looks`` equally spaced analyses of accumulating data, each at nominal ``alpha``, stopping at the
    first |Z| > z(1 − alpha/2) (Armitage, McPherson and Rowe, 1969). Computed by propagating the
    density of the running sum S_j = X_1 + ... + X_j (X_i independent N(0, 1)) through the
    continuation regions |S_j| <= z √j on a grid of width ``step`` (trapezoid rule); the answer is
    1 − the probability mass still inside after the last look.
    """
    k = chk.positive_int("looks", looks)
    _open_fraction("alpha", alpha)
    chk.positive("step", step)
    c = z_quantile(1 - alpha / 2)
    inv_root_2pi = 1 / math.sqrt(2 * math.pi)

    def closed_grid(bound: float) -> tuple[list[float], float]:
        """Points from -bound to +bound inclusive, spacing at most ``step``."""
        m = max(2, math.ceil(2 * bound / step))
        h = 2 * bound / m
        return [-bound + i * h for i in range(m + 1)], h

    xs, h = closed_grid(c)
    dens = [inv_root_2pi * math.exp(-0.5 * x * x) for x in xs]  # S_1 ~ N(0, 1), kept where |S_1| <= c
    for j in range(2, k + 1):
        # trapezoid weights of the current grid times the density: the mass each point carries
        mass = [d * h * (0.5 if i in (0, len(dens) - 1) else 1.0) for i, d in enumerate(dens)]
        ys, h_new = closed_grid(c * math.sqrt(j))
        dens = [inv_root_2pi * sum(w * math.exp(-0.5 * (y - x) ** 2) for x, w in zip(xs, mass) if abs(y - x) < 8)
                for y in ys]
        xs, h = ys, h_new
    inside = h * (sum(dens) - 0.5 * (dens[0] + dens[-1]))
    return 1 - inside


def build_vs_buy_costs(months: int, *, build_engineer_months: float, maintain_engineers: float,
                       engineer_cost_per_month: float, build_infra_per_month: float,
                       seats: int = 0, licence_per_seat_month: float = 0.0,
                       nodes: int = 0, licence_per_node_month: float = 0.0,
                       buy_integration_engineer_months: float = 0.0,
                       buy_infra_per_month: float = 0.0) -> dict[str, float]:
    """Cumulative cost of building and of buying a platform over ``months`` months.

    build = build_engineer_months × cost + months × (maintain_engineers × cost + build_infra)
    buy   = integration_engineer_months × cost + months × (seats × per-seat + nodes × per-node + buy_infra)

    Engineer cost is the loaded monthly cost (salary, overhead). Returns ``build``, ``buy`` and
    ``breakeven_month``: the first whole month from which on building has cost no more than buying
    and stays so, or ``math.inf`` when there is none. With a higher monthly run rate for building there
    is none, even if building starts cheaper: buying catches up and then stays ahead.
    """
    n = chk.positive_int("months", months)
    for name, v in (("build_engineer_months", build_engineer_months), ("maintain_engineers", maintain_engineers),
                    ("build_infra_per_month", build_infra_per_month),
                    ("licence_per_seat_month", licence_per_seat_month),
                    ("licence_per_node_month", licence_per_node_month),
                    ("buy_integration_engineer_months", buy_integration_engineer_months),
                    ("buy_infra_per_month", buy_infra_per_month)):
        chk.non_negative(name, v)
    chk.positive("engineer_cost_per_month", engineer_cost_per_month)
    chk.non_negative_int("seats", seats)
    chk.non_negative_int("nodes", nodes)
    cost = engineer_cost_per_month
    build_once = build_engineer_months * cost
    build_monthly = maintain_engineers * cost + build_infra_per_month
    buy_once = buy_integration_engineer_months * cost
    buy_monthly = seats * licence_per_seat_month + nodes * licence_per_node_month + buy_infra_per_month
    if build_monthly < buy_monthly:
        breakeven = max(1, math.ceil(round((build_once - buy_once) / (buy_monthly - build_monthly), 9)))
    elif build_once <= buy_once and build_monthly == buy_monthly:
        breakeven = 1
    else:
        breakeven = math.inf
    return {
        "build_once": build_once, "build_monthly": build_monthly, "build": build_once + n * build_monthly,
        "buy_once": buy_once, "buy_monthly": buy_monthly, "buy": buy_once + n * buy_monthly,
        "breakeven_month": breakeven,
    }
