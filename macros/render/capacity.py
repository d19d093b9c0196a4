"""Capacity and cost: Little's law, replicas, the Kubernetes HPA, cost per token, crossover, cost floor
(formulas: :mod:`macros.formulas.capacity`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import ApiPrice, Gpu
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _esc, _n, catalog_link
from .registry import macro


@macro("block", example='littles_law(arrival_rate=40, latency=2.5)')
def littles_law(concurrency: float | None = None, arrival_rate: float | None = None,
                latency: float | None = None) -> str:
    """Worked example: Little's law L = λ × W; give two of concurrency, arrival_rate (1/s), latency (s).

    Pass exactly two (arrival rate per second, latency in seconds); renders the third.
    """
    given = [x is not None for x in (concurrency, arrival_rate, latency)]
    if sum(given) != 2:
        raise MacroInputError("littles_law needs exactly two of concurrency, arrival_rate (per second), "
                              "latency (seconds)")
    value = F.littles_law(concurrency=concurrency, arrival_rate=arrival_rate, time_in_system=latency)
    ex = Example("Little's law")
    ex.formula("L = λ × W (in flight = arrival rate × time in system)")
    if concurrency is not None:
        ex.input("in flight L", _n(concurrency), GIVEN)
    if arrival_rate is not None:
        ex.input("arrival rate λ", f"{_n(arrival_rate)} /s", GIVEN)
    if latency is not None:
        ex.input("time in system W", U.fmt_seconds(latency), GIVEN)
    if concurrency is None:
        ex.step(f"L = {_n(arrival_rate)} /s × {_n(latency)} s = {_n(value)}")
        ex.result(f"{_n(value)} requests in flight on average")
    elif arrival_rate is None:
        ex.step(f"λ = {_n(concurrency)} / {_n(latency)} s = {_n(value)} /s")
        ex.result(f"{_n(value)} requests per second")
    else:
        ex.step(f"W = {_n(concurrency)} / {_n(arrival_rate)} /s = {_n(value)} s")
        ex.result(f"{U.fmt_seconds(value)} average time in system")
    ex.note("Averages in steady state; holds for any arrival and service distribution.")
    return ex.render()


@macro("block", example='replicas(900, 100, target_util=0.75, redundancy=1)')
def replicas(peak_load: float, per_replica: float, target_util: float = 0.7, redundancy: int = 1,
             unit: str = "requests/s") -> str:
    """Worked example: replicas = ceil(peak / (per-replica capacity at the SLO × target utilization)) + redundancy."""
    n = F.replicas_needed(peak_load, per_replica, target_util, redundancy)
    base = n - redundancy
    ex = Example("replica count for peak load")
    ex.formula("replicas = ceil(peak load / (capacity per replica × target utilization)) + redundancy")
    ex.input("peak load", f"{_n(peak_load)} {unit}", GIVEN)
    ex.input("capacity per replica at the SLO", f"{_n(per_replica)} {unit}", "measured (given)")
    ex.input("target utilization", _bits(target_util), "assumption")
    ex.input("redundancy", str(redundancy), "N+1 or a zone's worth")
    ex.step(f"ceil({_n(peak_load)} / ({_n(per_replica)} × {_bits(target_util)})) = {base}")
    ex.step(f"{base} + {redundancy} = {n}")
    ex.result(f"{n} replicas")
    return ex.render()


@macro("block", example='zone_replicas(20000, 400, zones=3, target_util=0.7)')
def zone_replicas(peak_load: float, per_replica: float, zones: int = 3, target_util: float = 0.7,
                  unit: str = "requests/s") -> str:
    """Worked example: replicas per zone so that the other zones carry the peak when one zone is lost.

    With one of `zones` zones lost the others carry the peak, so each zone needs
    `ceil(peak / (zones − 1) / (per-replica capacity × target utilization))`; fleet = zones × that, compared
    with the plain N+1 count.
    """
    z = zones
    per_zone, total = F.zone_replicas(peak_load, per_replica, z, target_util)
    n_plus_1 = F.replicas_needed(peak_load, per_replica, target_util, 1)
    ex = Example(f"replicas to survive losing one of {z} zones")
    ex.formula("per zone = ceil(peak load / (zones − 1) / (capacity per replica × target utilization))")
    ex.formula("fleet = zones × per zone")
    ex.input("peak load", f"{_n(peak_load)} {unit}", GIVEN)
    ex.input("capacity per replica at the SLO", f"{_n(per_replica)} {unit}", "measured (given)")
    ex.input("target utilization", _bits(target_util), "assumption")
    ex.input("zones", str(z), GIVEN)
    ex.step(f"one zone lost: {z - 1} zones carry {_n(peak_load)} {unit}, "
            f"{_n(peak_load / (z - 1))} {unit} each")
    ex.step(f"per zone: ceil({_n(peak_load / (z - 1))} / ({_n(per_replica)} × {_bits(target_util)})) = {per_zone}")
    ex.step(f"fleet: {z} × {per_zone} = {total}")
    ex.result(f"{per_zone} replicas per zone, {total} in total")
    ex.result(f"against {n_plus_1} for N+1 without zone loss: {_n(total / n_plus_1)}× the replicas")
    ex.note(f"Assumes the load balancer spreads traffic evenly across zones and drains a lost zone. With all "
            f"zones up, each zone carries {z - 1}/{z} of the load it is sized for.")
    return ex.render()


@macro("block", example='hpa(50, 90, 75)')
def hpa(current_replicas: int, current_metric: float, target_metric: float,
        tolerance: float = F.HPA_DEFAULT_TOLERANCE) -> str:
    """Worked example: Kubernetes HPA desired = ceil(current × metric / target), skipped within tolerance.

    No change when the ratio is within the tolerance of 1.0.
    """
    cur = current_replicas
    desired = F.hpa_desired_replicas(cur, current_metric, target_metric, tolerance)
    ratio = current_metric / target_metric
    ex = Example("Kubernetes HPA scaling decision")
    ex.formula("desired = ceil(current_replicas × current_metric / target_metric); "
               "no change if |ratio − 1| ≤ tolerance")
    ex.input("current replicas", str(cur), GIVEN)
    ex.input("current metric (average per pod)", _n(current_metric), GIVEN)
    ex.input("target metric", _n(target_metric), GIVEN)
    ex.input("tolerance", _bits(tolerance), "`--horizontal-pod-autoscaler-tolerance` (default 0.1)")
    ex.step(f"ratio = {_n(current_metric)} / {_n(target_metric)} = {_n(ratio)}")
    if abs(ratio - 1) <= tolerance:
        ex.step(f"|{_n(ratio)} − 1| ≤ {_bits(tolerance)}: inside the tolerance band")
        ex.result(f"no scaling: stays at {cur} replicas")
    else:
        ex.step(f"ceil({cur} × {_n(ratio)}) = {desired}")
        ex.result(f"{desired} replicas (before min/max bounds and the scale-down stabilization window)")
    return ex.render()


@macro("block", example='cost_per_million("h100-sxm", tokens_per_s=12000, n_gpus=8, utilization=0.6)')
def cost_per_million(gpu: Gpu, tokens_per_s: float, n_gpus: int = 1, utilization: float = 1.0) -> str:
    """Worked example: self-hosted $ per million tokens = $/h × GPUs / (tokens/s × 3600 × utilization) × 1e6.

    From the GPU's illustrative hourly price in prices.yaml.
    """
    g, n = gpu, n_gpus
    p = inputs.gpu_price_of(g)
    cost = F.cost_per_million_tokens(p.usd_per_hour, n, tokens_per_s, utilization)
    ex = Example(f"cost per million tokens on {n} × {g.name}")
    ex.formula("$/M tokens = $/GPU-hour × GPUs / (tokens/s × 3600 × utilization) × 10^6")
    ex.input("price per GPU-hour", U.fmt_usd(p.usd_per_hour), catalog_link("price", p.key, f"{p.key} (illustrative)"))
    ex.input("GPUs", str(n), GIVEN)
    ex.input("sustained throughput", U.fmt_rate(tokens_per_s), GIVEN)
    ex.input("utilization (busy share of paid hours)", _bits(utilization), "assumption")
    ex.step(f"{U.fmt_usd(p.usd_per_hour)} × {n} / ({_n(tokens_per_s)} × 3600 × {_bits(utilization)}) × 10^6 "
            f"= {U.fmt_usd(cost)}")
    ex.result(f"{U.fmt_usd(cost)} per million tokens")
    ex.note(_esc(inputs.cat().prices.disclaimer))
    return ex.render()


@macro("block", example='crossover("h100-sxm", "gpt-oss-120b-hosted", n_gpus=1, input_share=0.75)')
def crossover(gpu: Gpu, api: ApiPrice, n_gpus: int = 1, input_share: float = 0.5) -> str:
    """Worked example: sustained tokens/s above which a fixed self-hosted deployment beats an API price.

    `api` is an `api` entry of prices.yaml; its input and output prices are blended at `input_share`.
    """
    g, n, a = gpu, n_gpus, api
    p = inputs.gpu_price_of(g)
    blended = F.blended_api_price(a.usd_per_m_input, a.usd_per_m_output, input_share)
    rate = F.crossover_tokens_per_s(p.usd_per_hour, n, blended)
    ex = Example(f"self-hosted {n} × {g.name} vs {a.name}")
    ex.formula("API $/M = input $/M × share + output $/M × (1 − share)")
    ex.formula("crossover tokens/s = $/GPU-hour × GPUs / 3600 / (API $/M / 10^6)")
    ex.input("price per GPU-hour", U.fmt_usd(p.usd_per_hour), catalog_link("price", p.key, f"{p.key} (illustrative)"))
    ex.input("API input / output $/M", f"{U.fmt_usd(a.usd_per_m_input)} / {U.fmt_usd(a.usd_per_m_output)}",
             catalog_link("api", a.key, f"{a.key} (illustrative)"))
    ex.input("input share of tokens", _bits(input_share), "assumption")
    ex.input("GPUs", str(n), GIVEN)
    ex.step(f"API: {U.fmt_usd(a.usd_per_m_input)} × {_bits(input_share)} + {U.fmt_usd(a.usd_per_m_output)} × "
            f"{_bits(1 - input_share)} = {U.fmt_usd(blended)} per M tokens")
    ex.step(f"{U.fmt_usd(p.usd_per_hour)} × {n} / 3600 / ({U.fmt_usd(blended)} / 10^6) = {_n(rate)} tokens/s")
    ex.result(f"self-hosting is cheaper above a sustained {U.fmt_rate(rate)} "
              f"({_n(rate * 3600 * U.HOURS_PER_MONTH / 1e9)} billion tokens a month)")
    ex.note("Only if the deployment can actually serve that rate at the SLO; otherwise add replicas and "
            "recompute. " + _esc(inputs.cat().prices.disclaimer))
    return ex.render()


@macro("block", example='cost_floor("h100-sxm", n_gpus=8, min_replicas=2)')
def cost_floor(gpu: Gpu, n_gpus: int = 1, min_replicas: int = 1) -> str:
    """Worked example: the minimum deployment's monthly cost, paid whatever the traffic.

    730 hours a month.
    """
    g, n, r = gpu, n_gpus, min_replicas
    p = inputs.gpu_price_of(g)
    cost = F.fixed_cost_floor(p.usd_per_hour, n, r)
    ex = Example(f"fixed cost floor of {r} × {n} × {g.name}")
    ex.formula("monthly floor = $/GPU-hour × GPUs per replica × min replicas × 730 h")
    ex.input("price per GPU-hour", U.fmt_usd(p.usd_per_hour), catalog_link("price", p.key, f"{p.key} (illustrative)"))
    ex.input("GPUs per replica / min replicas", f"{n} / {r}", GIVEN)
    ex.step(f"{U.fmt_usd(p.usd_per_hour)} × {n} × {r} × 730 = {U.fmt_usd(cost)}")
    ex.result(f"{U.fmt_usd(cost)} per month before the first request")
    ex.note("730 h = 8,760 h / 12. " + _esc(inputs.cat().prices.disclaimer))
    return ex.render()


@macro("inline", example='gpu_price("h100-sxm")')
def gpu_price(gpu: Gpu) -> str:
    """Illustrative price per GPU-hour, e.g. '$2.95'."""
    return U.fmt_usd(inputs.gpu_price_of(gpu).usd_per_hour)
