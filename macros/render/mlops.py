"""MLOps: A/B and canary sample size and duration, the cost of peeking, shadow-traffic GPUs, build vs
buy (formulas: :mod:`macros.formulas.mlops`, :mod:`macros.formulas.capacity`)."""

from __future__ import annotations

import math

from .. import formulas as F
from .. import units as U
from ..catalog import Gpu
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _esc, _i, _n, catalog_link
from .registry import macro


def _pct(x: float) -> str:
    return U.fmt_pct(x)


def _days(d: float) -> str:
    if d < 1:
        return f"{_n(d * 24)} hours"
    return f"{_n(d)} days"


@macro("block", example='ab_sample_size(0.05, 0.05, units_per_day=200000, treatment_share=0.05)')
def ab_sample_size(baseline: float, mde: float, alpha: float = 0.05, power: float = 0.8,
                   relative: bool = True, two_sided: bool = True, units_per_day: float | None = None,
                   treatment_share: float | None = None) -> str:
    """Worked example: units per arm for a two-proportion test, and the days a canary share needs to collect them.

    `mde` is the minimum detectable effect, relative to `baseline` by default (`relative=False`: absolute,
    in proportion points). Pooled variance under H0, unpooled under H1 (Fleiss without continuity
    correction; R's `power.prop.test`). With `units_per_day` and `treatment_share` the duration follows.
    """
    p1 = baseline
    p2 = p1 * (1 + mde) if relative else p1 + mde
    if not 0 < p2 < 1:
        raise MacroInputError(f"baseline {baseline} with mde {mde} gives a treatment rate of {p2}, outside (0, 1)")
    n = F.two_proportion_sample_size(p1, p2, alpha, power, two_sided)
    n_up = math.ceil(n)
    thumb = F.rule_of_thumb_sample_size(p1, abs(p2 - p1))
    z_a = F.z_quantile(1 - alpha / 2) if two_sided else F.z_quantile(1 - alpha)
    z_b = F.z_quantile(power)
    ex = Example("sample size per arm for a conversion-rate test")
    ex.formula("n = (z_α × √(2 p̄ (1 − p̄)) + z_β × √(p1 (1 − p1) + p2 (1 − p2)))² / (p2 − p1)²,  p̄ = (p1 + p2) / 2")
    ex.input("baseline rate p1", _pct(p1), GIVEN)
    ex.input("minimum detectable effect", f"{_pct(mde)} relative" if relative else f"{_n(mde * 100)} points",
             GIVEN)
    ex.input("significance α", f"{_bits(alpha)} ({'two' if two_sided else 'one'}-sided)", GIVEN)
    ex.input("power 1 − β", _bits(power), GIVEN)
    ex.step(f"p2 = {_pct(p2)}; z_α = {z_a:.3f}; z_β = {z_b:.3f}")
    ex.step(f"n = {_n(n)} → {_i(n_up)} units per arm")
    ex.result(f"{_i(n_up)} units per arm, {_i(2 * n_up)} in total")
    if units_per_day is not None or treatment_share is not None:
        if units_per_day is None or treatment_share is None:
            raise MacroInputError("ab_sample_size: give both units_per_day and treatment_share, or neither")
        days = F.experiment_days(n_up, units_per_day, treatment_share)
        ex.input("eligible units per day", _i(units_per_day), GIVEN)
        ex.input("share routed to the new version", _pct(treatment_share), GIVEN)
        ex.formula("duration = n / (units per day × smaller arm's share)")
        arm = min(treatment_share, 1 - treatment_share)
        ex.step(f"duration = {_i(n_up)} / ({_i(units_per_day)} × {_bits(arm)}) = {_days(days)}")
        ex.result(f"{_days(days)} at a {_pct(treatment_share)} split; round up to whole weeks for weekly cycles")
    ex.note(f"Normal approximation, variance pooled under H0 and unpooled under H1. Cross-check, Kohavi et al.'s "
            f"16 σ²/δ² with σ² = p1 (1 − p1): {_i(math.ceil(thumb))} per arm (that shortcut holds for α 0.05 "
            f"two-sided and power 0.8 only). Units are the randomization unit (users, sessions), and the "
            f"metric must be analysed per that unit.")
    return ex.render()


@macro("block", example='peeking_table([1, 2, 5, 10, 20])')
def peeking_table(looks: list | None = None, alpha: float = 0.05) -> str:
    """Worked example: false-positive rate when a fixed-horizon z-test is checked at several equally spaced looks.

    Repeated significance tests at nominal `alpha`, stopping at the first |Z| above the fixed critical
    value (Armitage, McPherson and Rowe 1969), computed by numerical integration.
    """
    looks = looks or [1, 2, 5, 10, 20]
    try:
        ks = [int(k) for k in looks]
    except (TypeError, ValueError):
        raise MacroInputError(f"peeking_table: looks must be a list of whole numbers, got {looks!r}") from None
    rates = [F.peeking_false_positive_rate(k, alpha) for k in ks]
    rows = ["| Looks at the data | Chance of a false \"significant\" result | × nominal |", "| --- | --- | --- |"]
    rows += [f"| {_i(k)} | {_pct(r)} | {_n(r / alpha)} |" for k, r in zip(ks, rates)]
    ex = Example(f"peeking at a test with no effect, nominal α = {_bits(alpha)}")
    ex.formula("P(reject at some look | H0) = 1 − P(|S_j| ≤ z_(1−α/2) × √j for every look j)")
    ex.input("nominal significance per look", _bits(alpha), GIVEN)
    ex.input("looks", ", ".join(_i(k) for k in ks), "equally spaced")
    ex.result("\n\n" + "\n".join(rows))
    ex.note("S_j is the running sum of standard normal increments, so Z at "
            "look j is S_j / √j; the continuation region is integrated numerically. Matches the table of "
            "Armitage, McPherson and Rowe (1969) to three decimals.")
    return ex.render()


@macro("block", example='shadow_cost("h100-sxm", peak_load=40, per_replica=6, n_gpus=1, mirror_share=1.0)')
def shadow_cost(gpu: Gpu, peak_load: float, per_replica: float, n_gpus: int = 1, mirror_share: float = 1.0,
                target_util: float = 0.7, unit: str = "requests/s") -> str:
    """Worked example: extra replicas and monthly GPU cost of mirroring a share of production traffic to a shadow.

    The shadow must keep up with the mirrored load at its own per-replica capacity; no redundancy is
    added (a shadow that falls behind drops mirrored requests, not user requests).
    """
    inputs.number("mirror_share", mirror_share)
    if mirror_share > 1:
        raise MacroInputError(f"mirror_share must be at most 1, got {mirror_share}")
    mirrored = peak_load * mirror_share
    reps = F.replicas_needed(mirrored, per_replica, target_util, redundancy=0)
    p = inputs.gpu_price_of(gpu)
    monthly = F.fixed_cost_floor(p.usd_per_hour, n_gpus, max(reps, 1))
    ex = Example(f"shadow deployment on {gpu.name}")
    ex.formula("shadow replicas = ceil(peak load × mirrored share / (capacity per replica × target utilization))")
    ex.formula("monthly cost = replicas × GPUs per replica × $/GPU-hour × 730 h")
    ex.input("production peak", f"{_n(peak_load)} {unit}", GIVEN)
    ex.input("mirrored share", _pct(mirror_share), GIVEN)
    ex.input("capacity per shadow replica at the SLO", f"{_n(per_replica)} {unit}", "measured (given)")
    ex.input("target utilization", _bits(target_util), "assumption")
    ex.input("GPUs per replica", str(n_gpus), GIVEN)
    ex.input("price per GPU-hour", U.fmt_usd(p.usd_per_hour),
             catalog_link("price", p.key, f"{p.key} (illustrative)"))
    ex.step(f"ceil({_n(mirrored)} / ({_n(per_replica)} × {_bits(target_util)})) = {reps} replicas")
    ex.step(f"{reps} × {n_gpus} × {U.fmt_usd(p.usd_per_hour)} × 730 = {U.fmt_usd(monthly)}")
    ex.result(f"{reps * n_gpus} extra GPUs, {U.fmt_usd(monthly)} a month while the shadow runs")
    ex.note("If the shadow runs on the production replicas instead, it takes the same capacity from them. "
            + _esc(inputs.cat().prices.disclaimer))
    return ex.render()


@macro("block", example=('build_vs_buy(36, build_engineer_months=24, maintain_engineers=2, '
                         'engineer_cost_per_month=20000, build_infra_per_month=10000, seats=20, '
                         'licence_per_seat_month=1500, buy_integration_engineer_months=3, buy_infra_per_month=10000)'))
def build_vs_buy(months: int, build_engineer_months: float, maintain_engineers: float,
                 engineer_cost_per_month: float, build_infra_per_month: float = 0.0, seats: int = 0,
                 licence_per_seat_month: float = 0.0, nodes: int = 0, licence_per_node_month: float = 0.0,
                 buy_integration_engineer_months: float = 0.0, buy_infra_per_month: float = 0.0) -> str:
    """Worked example: cumulative cost of building vs buying an MLOps platform over a horizon, and the break-even month.

    All inputs are stated assumptions of the page (loaded engineer cost, licence prices, infrastructure);
    none comes from a vendor price list.
    """
    r = F.build_vs_buy_costs(months, build_engineer_months=build_engineer_months,
                             maintain_engineers=maintain_engineers, engineer_cost_per_month=engineer_cost_per_month,
                             build_infra_per_month=build_infra_per_month, seats=seats,
                             licence_per_seat_month=licence_per_seat_month, nodes=nodes,
                             licence_per_node_month=licence_per_node_month,
                             buy_integration_engineer_months=buy_integration_engineer_months,
                             buy_infra_per_month=buy_infra_per_month)
    usd, eng = U.fmt_usd, engineer_cost_per_month
    ex = Example(f"build vs buy over {_i(months)} months")
    ex.formula("build = build engineer-months × cost + months × (maintainers × cost + infrastructure)")
    ex.formula("buy = integration engineer-months × cost + months × (seats × per seat + nodes × per node "
               "+ infrastructure)")
    ex.input("loaded cost per engineer-month", usd(eng), "assumption")
    ex.input("build: engineer-months to first version / maintainers after", f"{_n(build_engineer_months)} / "
             f"{_n(maintain_engineers)}", "assumption")
    ex.input("build: infrastructure per month", usd(build_infra_per_month), "assumption")
    if seats:
        ex.input("buy: seats × licence per seat-month", f"{_i(seats)} × {usd(licence_per_seat_month)}", "assumption")
    if nodes:
        ex.input("buy: nodes × licence per node-month", f"{_i(nodes)} × {usd(licence_per_node_month)}", "assumption")
    ex.input("buy: integration engineer-months / infrastructure per month",
             f"{_n(buy_integration_engineer_months)} / {usd(buy_infra_per_month)}", "assumption")
    ex.step(f"build: {usd(r['build_once'])} once + {usd(r['build_monthly'])} a month × {_i(months)} "
            f"= {usd(r['build'])}")
    ex.step(f"buy: {usd(r['buy_once'])} once + {usd(r['buy_monthly'])} a month × {_i(months)} = {usd(r['buy'])}")
    cheaper = "building" if r["build"] < r["buy"] else "buying"
    ex.result(f"over {_i(months)} months {cheaper} is cheaper: build {usd(r['build'])}, buy {usd(r['buy'])}")
    if r["breakeven_month"] == math.inf:
        ex.result("building never stays cheaper: its monthly run rate is not below the buy run rate")
    else:
        ex.result(f"building has cost no more than buying from month {_i(r['breakeven_month'])} on")
    ex.note("Costs not in the inputs (opportunity cost of the engineers, vendor lock-in, security review, "
            "price rises at renewal) go into the decision, not into this sum.")
    return ex.render()
