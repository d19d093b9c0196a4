"""Monitoring and reliability: error budgets, burn-rate alert thresholds, quantiles from histogram
buckets, drift statistics (PSI, KS) and the capacity step when traffic grows (formulas:
:mod:`macros.formulas.slo`, :mod:`macros.formulas.histograms`, :mod:`macros.formulas.drift`,
:mod:`macros.formulas.capacity`)."""

from __future__ import annotations

import math

from .. import formulas as F
from .. import units as U
from ..errors import MacroInputError
from .blocks import GIVEN, Example, _bits, _n
from .registry import macro

_WORKBOOK = "Google SRE workbook, \"Alerting on SLOs\""


def _pct(x: float) -> str:
    """A share as a percentage without float noise: 0.999 -> '99.9%', 0.02 -> '2%'."""
    return f"{round(x * 100, 6):g}%"


def _hours(h: float) -> str:
    h = round(h, 9)
    if h < 1:
        return f"{_n(round(h * 60, 6))} min"
    if h >= 48 and h % 24 == 0:
        return f"{_n(h / 24)} d"
    return f"{_n(h)} h"


def _num_list(name: str, values, minimum: int = 1) -> list[float]:
    if not isinstance(values, (list, tuple)) or len(values) < minimum:
        raise MacroInputError(f"{name} must be a list of at least {minimum} numbers, got {values!r}")
    for v in values:
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise MacroInputError(f"{name} must contain only numbers, got {v!r}")
    return [float(v) for v in values]


@macro("block", example="error_budget_table([0.99, 0.995, 0.999, 0.9999], window_days=30)")
def error_budget_table(slos=(0.99, 0.995, 0.999, 0.9999), window_days: float = 30) -> str:
    """Worked example: error budget per SLO target, as a share and as minutes of full outage per window.

    `slos` are targets as fractions (0.999 = 99.9%); budget minutes = (1 − SLO) × days × 1,440.
    """
    targets = _num_list("slos", slos)
    ex = Example(f"error budgets over {_n(window_days)} days")
    ex.formula("error budget = 1 − SLO; minutes = (1 − SLO) × window days × 1,440 min/day")
    ex.input("compliance window", f"{_n(window_days)} days", GIVEN)
    rows = ["| SLO | budget (share of events or minutes) | full-outage minutes per window | per day |",
            "| --- | --- | --- | --- |"]
    for s in targets:
        minutes = F.error_budget_minutes(s, window_days)
        minutes = round(minutes, 9)
        hours = f" ({_n(round(minutes / 60, 9))} h)" if minutes >= 120 else ""
        rows.append(f"| {_pct(s)} | {_pct(F.error_budget_fraction(s))} | {_n(minutes)} min{hours} "
                    f"| {U.fmt_seconds(minutes * 60 / window_days)} |")
    ex.table("\n".join(rows))
    ex.result(f"{_pct(targets[0])} leaves {_n(round(F.error_budget_minutes(targets[0], window_days), 9))} min; "
              f"{_pct(targets[-1])} leaves {_n(round(F.error_budget_minutes(targets[-1], window_days), 9))} min")
    ex.note("Each extra nine divides the budget by ten. For a request-based SLI the minutes are the same "
            "budget expressed as a full outage at constant traffic.")
    return ex.render()


@macro("block", example="burn_rate_table(0.999, window_days=30)")
def burn_rate_table(slo: float = 0.999, window_days: float = 30) -> str:
    """Worked example: the multi-window, multi-burn-rate alert thresholds for one SLO.

    Burn rate = budget share × window hours / alert window hours; the alert compares the error ratio
    with burn rate × (1 − SLO) over a long and a short window (SRE workbook policy).
    """
    budget = F.error_budget_fraction(slo)
    window_h = window_days * 24
    ex = Example(f"burn-rate alert thresholds for a {_pct(slo)} SLO over {_n(window_days)} days")
    ex.formula("burn rate = budget share spent × window hours / long-window hours")
    ex.formula("error-ratio threshold = burn rate × (1 − SLO); fire when both windows exceed it")
    ex.input("SLO", _pct(slo), GIVEN)
    ex.input("error budget", _pct(budget), "1 − SLO")
    ex.input("window", f"{_n(window_days)} days = {_n(window_h)} h", GIVEN)
    ex.input("policy (budget share, long window, short window)", "table", _WORKBOOK)
    rows = ["| Severity | Budget spent | Long window | Short window | Burn rate | Error-ratio threshold "
            "| Budget gone in |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for sev, share, long_h, short_h in F.MWMB_POLICY:
        rate = F.burn_rate_threshold(share, long_h, window_days)
        ratio = F.burn_rate_error_ratio(rate, slo)
        gone = F.time_to_exhaustion_hours(rate, window_days)
        ratio_txt = _pct(ratio) if ratio <= 1 else f"{_pct(ratio)} (cannot fire: above 100%)"
        rows.append(f"| {sev} | {_pct(share)} | {_hours(long_h)} | {_hours(short_h)} | {_n(rate)} | "
                    f"{ratio_txt} | {_hours(gone)} |")
        ex.step(f"{sev}: {_bits(share)} × {_n(window_h)} h / {_n(long_h)} h = burn rate {_n(rate)}; "
                f"{_n(rate)} × {_pct(budget)} = {_pct(ratio)} errors")
    ex.table("\n".join(rows))
    ex.result("the thresholds in the table above")
    ex.note("The short window is a twelfth of the long one: it stops the alert within minutes of the burn "
            "ending. Budget gone in = window hours / burn rate, from a full budget.")
    return ex.render()


@macro("inline", example="burn_rate(0.02, 1)")
def burn_rate(budget_share: float, alert_window_hours: float, window_days: float = 30) -> str:
    """Burn rate that spends `budget_share` of the budget in `alert_window_hours`, e.g. '14.4'."""
    return _n(F.burn_rate_threshold(budget_share, alert_window_hours, window_days))


@macro("inline", example="error_budget_minutes(0.999)")
def error_budget_minutes(slo: float, window_days: float = 30) -> str:
    """Error budget as minutes of full outage per window, e.g. '43.2 min'."""
    return f"{_n(F.error_budget_minutes(slo, window_days))} min"


@macro("inline", example="burn_rate_ratio(14.4, 0.999)")
def burn_rate_ratio(rate: float, slo: float) -> str:
    """Error ratio an alert at burn rate `rate` compares against, as a percentage, e.g. '1.44%'."""
    return _pct(F.burn_rate_error_ratio(rate, slo))


@macro("block", example="drill_budget_example(0.1, 15, 0.999)")
def drill_budget_example(error_ratio: float, minutes: float, slo: float = 0.999, window_days: float = 30) -> str:
    """Worked example: share of the window's error budget a fault drill spends, at constant traffic.

    `error_ratio` is the share of requests failing (or missing the latency bound) while the fault is
    active, `minutes` how long it lasts; spent = error_ratio / (1 − SLO) × minutes / window minutes.
    """
    if not isinstance(minutes, (int, float)) or isinstance(minutes, bool) or not math.isfinite(minutes) \
            or minutes <= 0:
        raise MacroInputError(f"minutes must be a positive number, got {minutes!r}")
    spent = F.budget_spent(error_ratio, slo, minutes / 60, window_days)
    budget_min = F.error_budget_minutes(slo, window_days)
    ex = Example(f"error budget spent by a drill against a {_pct(slo)} SLO")
    ex.formula("budget spent = bad-request share × fault minutes / budget minutes")
    ex.formula("budget minutes = (1 − SLO) × window days × 1,440 min/day")
    ex.input("bad-request share during the fault", _pct(error_ratio), GIVEN)
    ex.input("fault duration", f"{_n(minutes)} min", GIVEN)
    ex.input("SLO, window", f"{_pct(slo)}, {_n(window_days)} days", GIVEN)
    ex.step(f"budget = {_pct(F.error_budget_fraction(slo))} × {_n(window_days)} × 1,440 = "
            f"{_n(round(budget_min, 9))} min of full outage")
    ex.step(f"drill = {_bits(error_ratio)} × {_n(minutes)} min = {_n(round(error_ratio * minutes, 9))} "
            "full-outage minutes")
    ex.step(f"{_n(round(error_ratio * minutes, 9))} / {_n(round(budget_min, 9))} = {_pct(round(spent, 4))}")
    ex.result(f"{_pct(round(spent, 4))} of the {_n(window_days)}-day budget")
    ex.note("Assumes constant traffic during the drill; a drill at peak spends more requests, one at night "
            "fewer. Agree the budget a game day may spend before it starts, and stop when it is spent.")
    return ex.render()


@macro("inline", example="budget_exhaustion(14.4)")
def budget_exhaustion(rate: float, window_days: float = 30) -> str:
    """Time a full budget lasts at burn rate `rate`, e.g. '50 h'."""
    return _hours(F.time_to_exhaustion_hours(rate, window_days))


def _buckets(bounds, counts) -> list[tuple[float, float]]:
    b = _num_list("bounds", bounds)
    c = _num_list("counts", counts, minimum=2)
    if len(c) != len(b) + 1:
        raise MacroInputError(f"counts needs one entry per finite bound plus the +Inf bucket: "
                              f"{len(b)} bounds, so {len(b) + 1} counts, got {len(c)}")
    if b != sorted(b):
        raise MacroInputError(f"bounds must be increasing, got {bounds!r}")
    cum = F.cumulative(c)
    return list(zip(b + [math.inf], cum))


@macro("block", example="histogram_quantile_example(0.99, [0.1, 0.25, 0.5, 1.0], [400, 350, 180, 62, 8])")
def histogram_quantile_example(q: float, bounds, counts, unit: str = "s") -> str:
    """Worked example: histogram_quantile from bucket counts, by linear interpolation inside the bucket.

    `bounds` are the finite upper bounds (`le`); `counts` the observations per bucket (not cumulative),
    one more than `bounds` (the last is the +Inf bucket). Same rule as Prometheus 2.x `bucketQuantile`.
    """
    bs = _buckets(bounds, counts)
    total = bs[-1][1]
    value = F.histogram_quantile(q, bs)
    lower, upper, rank_in, in_bucket = F.quantile_bucket(q, bs)
    ex = Example(f"P{round(q * 100, 4):g} from {len(bs)} buckets")
    ex.formula("rank = q × total count; in the first bucket whose cumulative count ≥ rank:")
    ex.formula("value = lower + (upper − lower) × (rank − count below) / count in bucket")
    cum = " · ".join(f"le={_bits(le) if math.isfinite(le) else '+Inf'}: {_n(c)}" for le, c in bs)
    ex.input("cumulative buckets", cum, GIVEN)
    ex.input("q", _bits(q), GIVEN)
    ex.step(f"rank = {_bits(q)} × {_n(total)} = {_n(q * total)}")
    if math.isinf(upper):
        ex.step(f"the rank falls in the +Inf bucket: Prometheus returns the highest finite bound, {_bits(lower)}")
        ex.result(f"{_n(value)} {unit}, a floor: the true quantile is somewhere above it")
    else:
        ex.step(f"bucket ({_bits(lower)}, {_bits(upper)}] holds it: {_n(rank_in)} of its {_n(in_bucket)} "
                "observations")
        ex.step(f"{_bits(lower)} + ({_bits(upper)} − {_bits(lower)}) × {_n(rank_in)} / {_n(in_bucket)} = {_n(value)}")
        ex.result(f"{_n(value)} {unit}; the true value lies anywhere in ({_bits(lower)}, {_bits(upper)}] "
                  f"{unit}, an error of up to {_bits(upper - lower)} {unit}")
    ex.note("Linear interpolation assumes observations spread evenly inside the bucket; the real "
            "distribution usually bunches toward the lower bound, so the estimate errs high.")
    return ex.render()


@macro("inline", example="histogram_quantile_value(0.99, [0.1, 0.25, 0.5, 1.0], [400, 350, 180, 62, 8])")
def histogram_quantile_value(q: float, bounds, counts) -> str:
    """The histogram_quantile value alone, for a sentence (same inputs as histogram_quantile_example)."""
    return _n(F.histogram_quantile(q, _buckets(bounds, counts)))


@macro("block", example='psi_example(["0-512", "512-2K", "2K-8K", "8K+"], [50, 30, 15, 5], [30, 30, 25, 15])')
def psi_example(labels, expected, actual, epsilon: float = 1e-4) -> str:
    """Worked example: population stability index over bins, baseline (expected) vs current (actual).

    `expected` and `actual` are counts or shares per bin (normalised here); PSI = Σ (a − e) × ln(a / e).
    """
    if not isinstance(labels, (list, tuple)) or len(labels) != len(expected):
        raise MacroInputError(f"labels needs one name per bin ({len(expected)}), got {labels!r}")
    e = F.bin_shares(_num_list("expected", expected, 2), "expected")
    a = F.bin_shares(_num_list("actual", actual, 2), "actual")
    terms = F.psi_terms(expected, actual, epsilon)
    total = sum(terms)
    ex = Example(f"PSI over {len(e)} bins")
    ex.formula("PSI = Σ over bins (a − e) × ln(a / e), e and a the baseline and current shares")
    rows = ["| Bin | baseline e | current a | (a − e) × ln(a / e) |", "| --- | --- | --- | --- |"]
    for name, ei, ai, t in zip(labels, e, a, terms):
        rows.append(f"| {name} | {_bits(round(ei, 4))} | {_bits(round(ai, 4))} | {t:.4f} |")
    rows.append(f"| **sum** | 1 | 1 | **{total:.4f}** |")
    ex.input("bins and shares", "table", GIVEN)
    ex.step(" + ".join(f"{t:.4f}" for t in terms) + f" = {total:.4f}")
    ex.table("\n".join(rows))
    ex.result(f"PSI = {total:.4f}")
    ex.note(f"Empty bins are floored at {epsilon:g} so the logarithm stays finite.")
    return ex.render()


@macro("inline", example='psi_value([50, 30, 15, 5], [30, 30, 25, 15])')
def psi_value(expected, actual, epsilon: float = 1e-4) -> str:
    """PSI alone, four decimals, for a sentence."""
    return f"{F.psi(_num_list('expected', expected, 2), _num_list('actual', actual, 2), epsilon):.4f}"


@macro("block", example="ks_example([120, 180, 200, 260, 300, 410], [150, 320, 380, 450, 520, 700])")
def ks_example(baseline, current, alpha: float = 0.05) -> str:
    """Worked example: two-sample Kolmogorov-Smirnov statistic D and its large-sample critical value.

    D = max |F_baseline(x) − F_current(x)| over the observed values; reject "same distribution" at
    `alpha` when D > c(alpha) × sqrt((n + m) / (n × m)).
    """
    a = _num_list("baseline", baseline, 1)
    b = _num_list("current", current, 1)
    d = F.ks_statistic(a, b)
    crit = F.ks_critical_value(len(a), len(b), alpha)
    xs = sorted(set(a + b))
    best = max(xs, key=lambda x: abs(sum(v <= x for v in a) / len(a) - sum(v <= x for v in b) / len(b)))
    fa = sum(v <= best for v in a) / len(a)
    fb = sum(v <= best for v in b) / len(b)
    c = math.sqrt(-math.log(alpha / 2) / 2)
    ex = Example(f"KS statistic, {len(a)} vs {len(b)} observations")
    ex.formula("D = max over x of |F_baseline(x) − F_current(x)| (empirical CDFs)")
    ex.formula("critical value = sqrt(−ln(α/2) / 2) × sqrt((n + m) / (n × m))")
    ex.input("baseline sample", ", ".join(_n(v) for v in a), GIVEN)
    ex.input("current sample", ", ".join(_n(v) for v in b), GIVEN)
    ex.input("significance α", _bits(alpha), "assumption")
    ex.step(f"largest gap at x = {_n(best)}: F_baseline = {_bits(round(fa, 4))}, "
            f"F_current = {_bits(round(fb, 4))}, D = {d:.4f}")
    ex.step(f"critical value = {c:.4f} × sqrt(({len(a)} + {len(b)}) / ({len(a)} × {len(b)})) = {crit:.4f}")
    verdict = "reject: the samples differ" if d > crit else "cannot reject: no evidence of a shift at this size"
    ex.result(f"D = {d:.4f} against {crit:.4f}: {verdict}")
    ex.note("The critical value is the large-sample approximation; tiny samples need exact tables, and "
            "huge samples make any shift significant.")
    return ex.render()


@macro("inline", example="ks_critical(20000, 20000)")
def ks_critical(n: int, m: int, alpha: float = 0.05) -> str:
    """Large-sample two-sample KS critical value for sample sizes `n` and `m`, four decimals, e.g. '0.0136'."""
    return f"{F.ks_critical_value(n, m, alpha):.4f}"


@macro("block", example="qps_doubling(40, 6.5, gpus_per_replica=2, target_util=0.7, factor=2)")
def qps_doubling(peak_qps: float, per_replica_qps: float, gpus_per_replica: int = 1, target_util: float = 0.7,
                 factor: float = 2, redundancy: int = 1) -> str:
    """Worked example: replicas and GPUs before and after peak traffic grows by `factor`.

    replicas = ceil(peak / (measured per-replica QPS at the SLO × target utilization)) + redundancy;
    GPUs = replicas × GPUs per replica. Assumes the per-replica capacity holds at the new mix.
    """
    if not isinstance(gpus_per_replica, int) or isinstance(gpus_per_replica, bool) or gpus_per_replica < 1:
        raise MacroInputError(f"gpus_per_replica must be a whole number >= 1, got {gpus_per_replica!r}")
    if not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor <= 0:
        raise MacroInputError(f"factor must be a positive number, got {factor!r}")
    before = F.replicas_needed(peak_qps, per_replica_qps, target_util, redundancy)
    new_peak = peak_qps * factor
    after = F.replicas_needed(new_peak, per_replica_qps, target_util, redundancy)
    ex = Example(f"GPUs when peak QPS grows {_n(factor)}×")
    ex.formula("replicas = ceil(peak QPS / (QPS per replica at the SLO × target utilization)) + redundancy")
    ex.formula("GPUs = replicas × GPUs per replica")
    ex.input("current peak", f"{_n(peak_qps)} requests/s", GIVEN)
    ex.input("QPS per replica at the SLO", f"{_n(per_replica_qps)} requests/s", "load test at the traffic mix")
    ex.input("GPUs per replica", str(gpus_per_replica), "tensor-parallel degree")
    ex.input("target utilization", _bits(target_util), "headroom for bursts and scale-up lag")
    ex.input("redundancy", str(redundancy), "N+1")
    cap = per_replica_qps * target_util
    ex.step(f"now: ceil({_n(peak_qps)} / ({_n(per_replica_qps)} × {_bits(target_util)} = {_n(cap)})) + "
            f"{redundancy} = {before} replicas = {before * gpus_per_replica} GPUs")
    ex.step(f"after: peak {_n(peak_qps)} × {_n(factor)} = {_n(new_peak)} requests/s; ceil({_n(new_peak)} / "
            f"{_n(cap)}) + {redundancy} = {after} replicas = {after * gpus_per_replica} GPUs")
    ex.result(f"{before * gpus_per_replica} → {after * gpus_per_replica} GPUs "
              f"(+{(after - before) * gpus_per_replica}, {_n(after / before)}× the replicas)")
    ex.note("Valid only if the prompt and output lengths stay the same: capacity is measured in requests "
            "of a given shape, and longer outputs lower it. Re-run the load test on the new mix.")
    return ex.render()
