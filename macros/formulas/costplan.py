"""Capacity plans and cost curves: forward from a traffic profile to GPUs and cost per token; the
self-hosted cost curve against monthly volume with whole replicas; LoRA adapter slots on a GPU.

Units: requests and tokens per second, seconds, US dollars, hours; a month is 730 hours
(:data:`macros.formulas.capacity.HOURS_PER_MONTH`). Pure Python; nothing here formats numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _checks as chk
from .adapters import LORA_TARGETS, lora_params
from .capacity import HOURS_PER_MONTH, replicas_needed

__all__ = [
    "CapacityPlan",
    "capacity_plan",
    "self_host_monthly_cost",
    "self_host_usd_per_million",
    "first_crossover_volume",
    "cheaper_windows",
    "lora_slot_params",
    "keep_warm_tradeoff",
    "cascade_cost",
    "cascade_quality",
    "cascade_breakeven_escalation",
    "weighted_tokens",
    "SECONDS_PER_MONTH",
]

SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600


@dataclass(frozen=True)
class CapacityPlan:
    peak_input_tps: float       # step 2: prompt tokens/s at peak
    peak_output_tps: float      # step 2: generated tokens/s at peak
    concurrency: float          # step 3: requests in flight at peak (Little's law)
    base_replicas: int          # step 5: ceil(peak / (capacity x target utilization))
    replicas: int               # step 5: base + redundancy
    gpus: int                   # step 5: replicas x GPUs per replica
    monthly_usd: float          # step 6: GPUs x $/GPU-hour x 730 h
    monthly_tokens: float       # step 6: average (input + output) tokens/s x seconds per month
    usd_per_million: float      # step 6: fleet cost per million tokens, input + output
    fleet_utilization: float    # step 6: average output tokens/s / (replicas x capacity)
    busy_usd_per_million: float  # the same fleet's $/M if every replica ran at its measured capacity


def capacity_plan(*, peak_rps: float, input_tokens: float, output_tokens: float, latency_s: float,
                  per_replica_output_tps: float, gpus_per_replica: int, usd_per_gpu_hour: float,
                  target_utilization: float = 0.7, redundancy: int = 1,
                  average_to_peak: float = 0.5) -> CapacityPlan:
    """The six capacity steps, forward from traffic.

    1. profile: ``peak_rps`` requests/s at peak, ``input_tokens`` / ``output_tokens`` per request
       (means), ``average_to_peak`` the month's average load as a share of the peak;
    2. token demand at peak: ``peak_rps x input_tokens`` and ``peak_rps x output_tokens``;
    3. concurrency at peak by Little's law: ``peak_rps x latency_s`` (end-to-end seconds per request);
    4. ``per_replica_output_tps``: what one replica sustains at the latency SLO with this mix
       (measured by a load test, never derived);
    5. replicas ``= ceil(peak output / (capacity x target_utilization)) + redundancy``, GPUs;
    6. cost: ``GPUs x $/h x 730`` a month over the tokens actually served at the average load.

    The busy-replica figure divides the same fleet cost by the tokens the fleet would serve if every
    replica ran at its measured capacity all month: the optimistic number a single benchmark gives.
    """
    chk.positive("peak_rps", peak_rps)
    chk.non_negative("input_tokens", input_tokens)
    chk.positive("output_tokens", output_tokens)
    chk.positive("latency_s", latency_s)
    chk.positive("per_replica_output_tps", per_replica_output_tps)
    gpus_per_replica = chk.positive_int("gpus_per_replica", gpus_per_replica)
    chk.positive("usd_per_gpu_hour", usd_per_gpu_hour)
    chk.fraction("average_to_peak", average_to_peak)
    peak_in = peak_rps * input_tokens
    peak_out = peak_rps * output_tokens
    replicas = replicas_needed(peak_out, per_replica_output_tps, target_utilization, redundancy)
    base = replicas - redundancy
    gpus = replicas * gpus_per_replica
    monthly = gpus * usd_per_gpu_hour * HOURS_PER_MONTH
    avg_total_tps = (peak_in + peak_out) * average_to_peak
    monthly_tokens = avg_total_tps * SECONDS_PER_MONTH
    per_m = monthly / monthly_tokens * 1e6
    util = peak_out * average_to_peak / (replicas * per_replica_output_tps)
    busy_tokens = replicas * per_replica_output_tps * (input_tokens + output_tokens) / output_tokens * SECONDS_PER_MONTH
    return CapacityPlan(peak_in, peak_out, peak_rps * latency_s, base, replicas, gpus, monthly,
                        monthly_tokens, per_m, util, monthly / busy_tokens * 1e6)


def _replica_args(replica_usd_per_month: float, replica_tokens_per_month: float) -> None:
    chk.positive("replica_usd_per_month", replica_usd_per_month)
    chk.positive("replica_tokens_per_month", replica_tokens_per_month)


def self_host_monthly_cost(volume: float, replica_usd_per_month: float, replica_tokens_per_month: float) -> float:
    """Monthly cost of serving ``volume`` tokens a month with whole replicas, at least one.

    ``max(1, ceil(volume / tokens one replica serves a month)) x replica cost``: the first replica is
    the fixed cost floor; each further one is added when the previous ones are full.
    """
    _replica_args(replica_usd_per_month, replica_tokens_per_month)
    chk.non_negative("volume", volume)
    n = max(1, math.ceil(round(volume / replica_tokens_per_month, 9)))
    return n * replica_usd_per_month


def self_host_usd_per_million(volume: float, replica_usd_per_month: float, replica_tokens_per_month: float) -> float:
    """Self-hosted $ per million tokens at a monthly ``volume``: monthly cost / volume x 1e6."""
    chk.positive("volume", volume)
    return self_host_monthly_cost(volume, replica_usd_per_month, replica_tokens_per_month) / volume * 1e6


def first_crossover_volume(replica_usd_per_month: float, replica_tokens_per_month: float,
                           api_usd_per_million: float) -> float | None:
    """Monthly token volume above which one replica is cheaper than the API: ``R / (p / 1e6)``.

    ``None`` when that volume exceeds what one replica can serve (``R / p > C``): then a replica full to
    capacity still costs more per token than the API, and no volume makes self-hosting cheaper.
    This is :func:`macros.formulas.capacity.crossover_tokens_per_s` times the seconds in a month.
    """
    _replica_args(replica_usd_per_month, replica_tokens_per_month)
    chk.positive("api_usd_per_million", api_usd_per_million)
    v = replica_usd_per_month / (api_usd_per_million / 1e6)
    return v if v <= replica_tokens_per_month * (1 + 1e-12) else None


def cheaper_windows(replica_usd_per_month: float, replica_tokens_per_month: float, api_usd_per_million: float,
                    max_replicas: int) -> list[tuple[float, float]]:
    """Volume windows where ``n`` whole replicas beat the API, for ``n = 1 .. max_replicas``.

    With ``n`` replicas (volumes in ``((n-1)C, nC]``) the cost per token is ``nR / V``, below the API
    price ``p`` when ``V >= nR/p``: the window is ``[max(nR/p, (n-1)C), nC]``, empty for every ``n`` when
    ``R/p > C``. Just past each ``nC`` the next replica's cost arrives with little traffic, so the API
    is cheaper again until ``(n+1)R/p``.
    """
    _replica_args(replica_usd_per_month, replica_tokens_per_month)
    chk.positive("api_usd_per_million", api_usd_per_million)
    max_replicas = chk.positive_int("max_replicas", max_replicas)
    r, c, p = replica_usd_per_month, replica_tokens_per_month, api_usd_per_million / 1e6
    out = []
    for n in range(1, max_replicas + 1):
        lo = max(n * r / p, (n - 1) * c)
        if lo <= n * c:
            out.append((lo, n * c))
    return out


def lora_slot_params(model, max_lora_rank: int) -> int:
    """Adapter parameters vLLM reserves per LoRA slot in the transformer blocks' linear layers.

    vLLM (0.11, ``BaseLinearLayerWithLoRA.create_lora_weights``) gives every LoRA-capable linear layer
    ``max_loras`` slots of ``max_lora_rank x d_in`` (A) and ``d_out x max_lora_rank`` (B), whatever the
    adapters target; for a dense Llama-style model that is the PEFT count for all seven projections at
    ``max_lora_rank``. Embedding and LM-head slots are extra and not counted (a lower bound).
    """
    if model.moe is not None:
        raise ValueError(f"{model.key} is a mixture-of-experts model: its expert layers' LoRA slots are "
                         "not modelled; use a dense model")
    return lora_params(model, max_lora_rank, LORA_TARGETS)


def keep_warm_tradeoff(requests_per_hour: float, keep_warm_s: float) -> tuple[float, float]:
    """On-demand loading with an idle timeout: ``(share of requests that find the model unloaded,
    share of the time the model is resident)`` for Poisson arrivals at ``requests_per_hour``.

    A model is unloaded after ``keep_warm_s`` seconds without a request. With exponential gaps of
    mean ``1/lambda``, a request finds it unloaded when its gap exceeds ``T``: ``P = e^(-lambda T)``. Each
    gap keeps it resident for ``min(gap, T)``, whose mean is ``(1 - e^(-lambda T)) / lambda``, so the
    resident share of time is ``1 - e^(-lambda T)`` (load time itself not counted). A larger ``T``
    trades GPU-hours for fewer cold starts.
    """
    chk.non_negative("requests_per_hour", requests_per_hour)
    chk.non_negative("keep_warm_s", keep_warm_s)
    lam_t = requests_per_hour / 3600 * keep_warm_s
    cold = math.exp(-lam_t)
    return cold, 1 - cold


def cascade_cost(small_usd: float, large_usd: float, escalation_rate: float, router_usd: float = 0.0) -> float:
    """Mean cost per request of a two-model cascade: ``small + escalation_rate x large + router``.

    Every request runs on the small model first and pays for it; the escalated share also pays the large
    model. ``router_usd`` is any per-request cost of the check that decides (a scorer, a validator).
    """
    chk.non_negative("small_usd", small_usd)
    chk.non_negative("large_usd", large_usd)
    chk.fraction("escalation_rate", escalation_rate, allow_zero=True)
    chk.non_negative("router_usd", router_usd)
    return small_usd + escalation_rate * large_usd + router_usd


def cascade_quality(kept_accuracy: float, escalated_accuracy: float, escalation_rate: float) -> float:
    """Blended accuracy: ``(1 - d) x accuracy of the answers the small model keeps + d x accuracy of the
    large model on the escalated requests``, both measured on a labelled sample of the traffic."""
    chk.fraction("kept_accuracy", kept_accuracy, allow_zero=True)
    chk.fraction("escalated_accuracy", escalated_accuracy, allow_zero=True)
    chk.fraction("escalation_rate", escalation_rate, allow_zero=True)
    return (1 - escalation_rate) * kept_accuracy + escalation_rate * escalated_accuracy


def cascade_breakeven_escalation(small_usd: float, large_usd: float, router_usd: float = 0.0) -> float:
    """Escalation rate above which the cascade costs more than sending everything to the large model:
    ``small + d x large + router = large``, so ``d = 1 - (small + router) / large`` (0 if negative)."""
    chk.non_negative("small_usd", small_usd)
    chk.positive("large_usd", large_usd)
    chk.non_negative("router_usd", router_usd)
    return max(0.0, 1 - (small_usd + router_usd) / large_usd)


def weighted_tokens(input_tokens: float, output_tokens: float, input_weight: float = 1.0) -> float:
    """Tokens one request charges against a token limit: ``input_weight x input + output``.

    ``input_weight`` is the capacity cost of a prompt token relative to a generated one (1 counts plain
    tokens; a load test that finds prefill tokens cheaper justifies a smaller weight).
    """
    chk.non_negative("input_tokens", input_tokens)
    chk.non_negative("output_tokens", output_tokens)
    chk.non_negative("input_weight", input_weight)
    w = input_weight * input_tokens + output_tokens
    if w <= 0:
        raise ValueError("a request must carry at least one weighted token")
    return w
