"""Capacity and cost: Little's law, replica counts, the Kubernetes HPA rule, cost per million tokens.

Units: requests (or tokens) per second, seconds, US dollars, hours. Prices in the catalog are
illustrative assumptions, not quotes.
"""

from __future__ import annotations

import math

from . import _checks as chk

__all__ = [
    "littles_law",
    "replicas_needed",
    "zone_replicas",
    "HPA_DEFAULT_TOLERANCE",
    "hpa_desired_replicas",
    "cost_per_million_tokens",
    "crossover_tokens_per_s",
    "fixed_cost_floor",
    "blended_api_price",
]

HPA_DEFAULT_TOLERANCE = 0.1  # kube-controller-manager --horizontal-pod-autoscaler-tolerance default
HOURS_PER_MONTH = 730  # 8,760 h / 12


def littles_law(*, concurrency: float | None = None, arrival_rate: float | None = None,
                time_in_system: float | None = None) -> float:
    """Little's law ``L = lambda x W``: give exactly two of the three, get the third.

    ``concurrency`` L: average items in the system (requests in flight); ``arrival_rate`` lambda:
    items per second; ``time_in_system`` W: average seconds each item spends inside. Holds for any
    stable system in steady state, whatever the arrival or service distribution.
    """
    given = {k: v for k, v in (("concurrency", concurrency), ("arrival_rate", arrival_rate),
                               ("time_in_system", time_in_system)) if v is not None}
    if len(given) != 2:
        raise ValueError("littles_law needs exactly two of concurrency, arrival_rate, time_in_system; "
                         f"got {', '.join(given) or 'none'}")
    for k, v in given.items():
        chk.non_negative(k, v)
    if concurrency is None:
        return arrival_rate * time_in_system
    if arrival_rate is None:
        chk.positive("time_in_system", time_in_system)
        return concurrency / time_in_system
    chk.positive("arrival_rate", arrival_rate)
    return concurrency / arrival_rate


def replicas_needed(peak_load: float, per_replica_capacity: float, target_utilization: float = 1.0,
                    redundancy: int = 1) -> int:
    """Replicas to serve ``peak_load``: ``ceil(peak / (capacity x target_utilization)) + redundancy``.

    ``per_replica_capacity`` is what one replica sustains while meeting the latency SLO (measured, in
    the same unit as the load); ``target_utilization`` leaves headroom for bursts; ``redundancy`` adds
    spare replicas (1 for N+1, or a zone's worth of replicas to survive losing a zone).
    """
    chk.non_negative("peak_load", peak_load)
    chk.positive("per_replica_capacity", per_replica_capacity)
    chk.fraction("target_utilization", target_utilization)
    redundancy = chk.non_negative_int("redundancy", redundancy)
    base = peak_load / (per_replica_capacity * target_utilization)
    return math.ceil(round(base, 9)) + redundancy


def zone_replicas(peak_load: float, per_replica_capacity: float, zones: int = 3,
                  target_utilization: float = 1.0) -> tuple[int, int]:
    """Replicas per zone and in total so that losing any one of ``zones`` zones still serves the peak.

    With the load spread evenly and one zone down, the other ``zones - 1`` carry all of it, so each
    zone needs ``ceil(peak / (zones - 1) / (capacity x target_utilization))`` replicas and the fleet
    ``zones`` times that: ``zones / (zones - 1)`` times the capacity the peak needs (1.5x for three
    zones, 2x for two). Returns ``(per_zone, total)``.
    """
    chk.non_negative("peak_load", peak_load)
    chk.positive("per_replica_capacity", per_replica_capacity)
    chk.fraction("target_utilization", target_utilization)
    zones = chk.positive_int("zones", zones)
    if zones < 2:
        raise ValueError(f"zones must be >= 2 to survive losing one, got {zones}")
    per_zone = math.ceil(round(peak_load / (zones - 1) / (per_replica_capacity * target_utilization), 9))
    return per_zone, per_zone * zones


def hpa_desired_replicas(current_replicas: int, current_metric: float, target_metric: float,
                         tolerance: float = HPA_DEFAULT_TOLERANCE) -> int:
    """Kubernetes HPA: ``desired = ceil(current_replicas x current_metric / target_metric)``.

    The controller skips scaling when the ratio is within ``tolerance`` of 1.0
    (``|ratio - 1| <= tolerance``, default 0.1 from ``--horizontal-pod-autoscaler-tolerance``).
    Ignores min/max replicas, readiness and the scale-down stabilization window.
    """
    current = chk.positive_int("current_replicas", current_replicas)
    chk.non_negative("current_metric", current_metric)
    chk.positive("target_metric", target_metric)
    chk.non_negative("tolerance", tolerance)
    ratio = current_metric / target_metric
    if abs(ratio - 1.0) <= tolerance:
        return current
    return math.ceil(round(current * ratio, 9))


def cost_per_million_tokens(gpu_usd_per_hour: float, n_gpus: int, tokens_per_s: float,
                            utilization: float = 1.0) -> float:
    """Self-hosted $ per million tokens: ``$/h x GPUs / (tokens/s x 3600 x utilization) x 1e6``.

    ``tokens_per_s`` is the deployment's sustained throughput when busy; ``utilization`` the share of
    paid hours it is actually busy (idle GPU hours still cost money).
    """
    chk.positive("gpu_usd_per_hour", gpu_usd_per_hour)
    chk.positive_int("n_gpus", n_gpus)
    chk.positive("tokens_per_s", tokens_per_s)
    chk.fraction("utilization", utilization)
    return gpu_usd_per_hour * n_gpus / (tokens_per_s * 3600 * utilization) * 1e6


def crossover_tokens_per_s(gpu_usd_per_hour: float, n_gpus: int, api_usd_per_million: float) -> float:
    """Sustained token rate above which a fixed self-hosted deployment is cheaper than an API.

    Self-hosting costs ``$/h x GPUs`` per hour whatever the traffic; the API costs
    ``price / 1e6`` per token. Equal when ``tokens/s = $/h x GPUs / 3600 / (price / 1e6)``. Only
    meaningful if the deployment can actually serve that rate; above its capacity add replicas.
    """
    chk.positive("gpu_usd_per_hour", gpu_usd_per_hour)
    chk.positive_int("n_gpus", n_gpus)
    chk.positive("api_usd_per_million", api_usd_per_million)
    return gpu_usd_per_hour * n_gpus / 3600 / (api_usd_per_million / 1e6)


def fixed_cost_floor(gpu_usd_per_hour: float, n_gpus: int, min_replicas: int = 1,
                     hours: float = HOURS_PER_MONTH) -> float:
    """Monthly cost of the smallest deployment, paid regardless of traffic.

    ``$/h x GPUs per replica x min_replicas x hours`` (730 hours = an average month).
    """
    chk.positive("gpu_usd_per_hour", gpu_usd_per_hour)
    chk.positive_int("n_gpus", n_gpus)
    chk.positive_int("min_replicas", min_replicas)
    chk.positive("hours", hours)
    return gpu_usd_per_hour * n_gpus * min_replicas * hours


def blended_api_price(usd_per_m_input: float, usd_per_m_output: float, input_share: float) -> float:
    """API $ per million tokens for a traffic mix: ``in x share + out x (1 - share)``.

    ``input_share`` is the fraction of all tokens that are input (prompt) tokens, e.g. 0.75 for a
    3:1 input:output mix.
    """
    chk.non_negative("usd_per_m_input", usd_per_m_input)
    chk.non_negative("usd_per_m_output", usd_per_m_output)
    chk.fraction("input_share", input_share, allow_zero=True)
    return usd_per_m_input * input_share + usd_per_m_output * (1 - input_share)
