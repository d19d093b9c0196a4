"""Operating an LLM fleet: latency indicators, goodput, reasoning-length requests, admission and
load shedding, and failure domains of multi-node instances.

Units: seconds, tokens, bytes, probabilities as fractions. Definitions follow vLLM 0.11's benchmark
(``vllm/benchmarks/serve.py``): a request's TPOT is ``(E2E - TTFT) / (output tokens - 1)``, the ITL
list is every gap between streamed chunks, pooled over all requests, and goodput counts a request only
when every limit given holds (``limit >= value``). Nothing here formats numbers or imports MkDocs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from . import _checks as chk

__all__ = [
    "RequestTiming",
    "tpot_from_e2e",
    "e2e_latency",
    "mean_tpot",
    "pooled_mean_itl",
    "Goodput",
    "goodput",
    "kv_byte_seconds",
    "cost_per_request",
    "prefill_rate_under_budget",
    "predicted_wait",
    "shed_threshold_tokens",
    "instance_availability",
    "expected_serving_instances",
    "instance_failure_rate",
    "recovery_time",
    "kv_hold_cost",
    "break_even_hold_seconds",
    "session_prefill_tokens",
]


# --- latency indicators (Q142, Q141) -------------------------------------------------------------

@dataclass(frozen=True)
class RequestTiming:
    """One finished request as a client sees it: TTFT and end-to-end latency (s), output tokens."""

    ttft_s: float
    e2e_s: float
    output_tokens: int

    def __post_init__(self) -> None:
        chk.non_negative("ttft_s", self.ttft_s)
        chk.non_negative("e2e_s", self.e2e_s)
        chk.positive_int("output_tokens", self.output_tokens)
        if self.e2e_s < self.ttft_s:
            raise ValueError(f"e2e_s ({self.e2e_s:g}) is shorter than ttft_s ({self.ttft_s:g}): the end-to-end "
                             "time includes the time to the first token")


def tpot_from_e2e(e2e_s: float, ttft_s: float, output_tokens: int) -> float:
    """Time per output token of one request: ``(E2E - TTFT) / (output_tokens - 1)`` seconds.

    The first token is excluded: its time is the TTFT. vLLM 0.11's benchmark and its engine metric
    ``vllm:request_time_per_output_token_seconds`` both divide by ``n - 1``. Needs at least two tokens.
    """
    r = RequestTiming(ttft_s, e2e_s, output_tokens)
    if r.output_tokens < 2:
        raise ValueError(f"output_tokens must be at least 2 for a TPOT, got {output_tokens!r}: with one token "
                         "there is no gap after the first")
    return (r.e2e_s - r.ttft_s) / (r.output_tokens - 1)


def e2e_latency(ttft_s: float, tpot_s: float, output_tokens: int) -> float:
    """End-to-end latency of a streamed request: ``TTFT + (output_tokens - 1) x TPOT`` seconds."""
    chk.non_negative("ttft_s", ttft_s)
    chk.non_negative("tpot_s", tpot_s)
    n = chk.positive_int("output_tokens", output_tokens)
    return ttft_s + (n - 1) * tpot_s


def mean_tpot(requests: Sequence[RequestTiming]) -> float:
    """Mean of the per-request TPOTs (requests with one output token left out, as vLLM 0.11 does)."""
    vals = [tpot_from_e2e(r.e2e_s, r.ttft_s, r.output_tokens) for r in requests if r.output_tokens > 1]
    if not vals:
        raise ValueError("mean_tpot needs at least one request with two or more output tokens")
    return sum(vals) / len(vals)


def pooled_mean_itl(requests: Sequence[RequestTiming]) -> float:
    """Mean inter-token latency with every gap pooled: ``sum(E2E - TTFT) / sum(output_tokens - 1)``.

    Assumes one token per streamed chunk. Each gap weighs the same, so requests with long outputs
    dominate; the mean TPOT weighs each request the same instead.
    """
    gaps = sum(r.output_tokens - 1 for r in requests)
    if gaps == 0:
        raise ValueError("pooled_mean_itl needs at least one request with two or more output tokens")
    return sum(r.e2e_s - r.ttft_s for r in requests) / gaps


@dataclass(frozen=True)
class Goodput:
    requests: int
    ttft_ok: int          # requests within the TTFT limit
    tpot_ok: int          # requests within the TPOT limit
    good: int             # requests within both
    duration_s: float

    @property
    def attainment(self) -> float:
        """Share of requests that met every limit."""
        return self.good / self.requests

    @property
    def rate(self) -> float:
        """Request goodput: good requests per second of the run."""
        return self.good / self.duration_s

    @property
    def throughput(self) -> float:
        """All completed requests per second, good or not."""
        return self.requests / self.duration_s


def goodput(requests: Sequence[RequestTiming], duration_s: float, ttft_limit_s: float,
            tpot_limit_s: float) -> Goodput:
    """Good requests under a joint TTFT and TPOT limit, as ``vllm bench serve --goodput`` counts them.

    A request is good when ``TTFT <= ttft_limit`` and ``TPOT <= tpot_limit``; a one-token request has a
    TPOT of zero (vLLM 0.11). Goodput = good requests / run duration.
    """
    if not requests:
        raise ValueError("goodput needs at least one request")
    chk.positive("duration_s", duration_s)
    chk.positive("ttft_limit_s", ttft_limit_s)
    chk.positive("tpot_limit_s", tpot_limit_s)
    ttft_ok = tpot_ok = good = 0
    for r in requests:
        tpot = tpot_from_e2e(r.e2e_s, r.ttft_s, r.output_tokens) if r.output_tokens > 1 else 0.0
        a, b = r.ttft_s <= ttft_limit_s, tpot <= tpot_limit_s
        ttft_ok += a
        tpot_ok += b
        good += a and b
    return Goodput(len(requests), ttft_ok, tpot_ok, good, duration_s)


# --- reasoning-length requests (Q141) ------------------------------------------------------------

def kv_byte_seconds(kv_bytes_at, prompt_tokens: int, output_tokens: int, ttft_s: float, tpot_s: float,
                    kinks: Sequence[int] = ()) -> float:
    """KV memory held over a request's life, in byte-seconds.

    ``kv_bytes_at(tokens)`` gives the KV bytes of a sequence of that length (piecewise linear: a
    sliding window bends it at ``kinks``). The prompt's KV is counted from the first token on (the
    prefill's own ramp is left out); during decode the sequence grows by one token per TPOT from
    ``prompt + 1`` to ``prompt + output`` tokens, so the integral is exact by the trapezoid rule
    between the kinks. Time held: ``(output - 1) x TPOT`` after the first token.
    """
    p = chk.positive_int("prompt_tokens", prompt_tokens)
    n = chk.positive_int("output_tokens", output_tokens)
    chk.non_negative("ttft_s", ttft_s)
    chk.positive("tpot_s", tpot_s)
    start, end = p + 1, p + n
    pts = sorted({start, end, *(k for k in kinks if start < k < end)})
    total = 0.0
    for a, b in zip(pts, pts[1:]):
        total += (kv_bytes_at(a) + kv_bytes_at(b)) / 2 * (b - a) * tpot_s
    return total


def cost_per_request(price_per_replica_hour: float, e2e_s: float, concurrent: int) -> float:
    """Cost of one request when it holds one of ``concurrent`` decode slots for its whole life.

    ``price per replica-hour / 3,600 x E2E / concurrent``: the replica's cost per second, shared by the
    sequences running at once, times how long this one runs. Assumes the replica stays full.
    """
    chk.positive("price_per_replica_hour", price_per_replica_hour)
    chk.positive("e2e_s", e2e_s)
    c = chk.positive_int("concurrent", concurrent)
    return price_per_replica_hour / 3600 * e2e_s / c


# --- admission and shedding (Q143) ---------------------------------------------------------------

def prefill_rate_under_budget(token_budget: int, decode_seqs: int, step_s: float) -> float:
    """Prompt tokens per second a chunked-prefill engine can give to waiting requests.

    Each step carries at most ``token_budget`` tokens (vLLM: ``--max-num-batched-tokens``); running
    decodes take one token each first, the rest goes to prefill: ``(budget - decodes) / step time``.
    """
    b = chk.positive_int("token_budget", token_budget)
    d = chk.non_negative_int("decode_seqs", decode_seqs)
    chk.positive("step_s", step_s)
    if d >= b:
        raise ValueError(f"decode_seqs ({d}) fills the token budget ({b}): no tokens are left for prefill, "
                         "so every waiting request waits for a decode to finish")
    return (b - d) / step_s


def predicted_wait(queued_tokens: int, prefill_tokens_per_s: float) -> float:
    """Seconds until a new request's prefill starts: prompt tokens queued ahead / prefill rate."""
    q = chk.non_negative_int("queued_tokens", queued_tokens)
    chk.positive("prefill_tokens_per_s", prefill_tokens_per_s)
    return q / prefill_tokens_per_s


def shed_threshold_tokens(ttft_slo_s: float, prompt_tokens: int, prefill_tokens_per_s: float,
                          overhead_s: float = 0.0) -> int:
    """Largest queue (prompt tokens ahead) at which a new request still meets its TTFT target.

    ``TTFT ~ overhead + (queued + own prompt) / rate <= SLO`` gives
    ``queued <= (SLO - overhead) x rate - own prompt``, rounded down; below zero nothing is admitted.
    """
    chk.positive("ttft_slo_s", ttft_slo_s)
    p = chk.positive_int("prompt_tokens", prompt_tokens)
    chk.positive("prefill_tokens_per_s", prefill_tokens_per_s)
    chk.non_negative("overhead_s", overhead_s)
    return max(0, math.floor((ttft_slo_s - overhead_s) * prefill_tokens_per_s - p + 1e-9))


# --- failure domains (Q145) ----------------------------------------------------------------------

def instance_availability(gpu_availability: float, gpus: int) -> float:
    """Share of time an instance that needs all ``gpus`` GPUs is up: ``p ** N`` (independent failures)."""
    chk.fraction("gpu_availability", gpu_availability)
    n = chk.positive_int("gpus", gpus)
    return gpu_availability ** n


def expected_serving_instances(gpu_availability: float, gpus_per_instance: int, instances: int) -> float:
    """Instances expected up at a random moment: ``instances x p ** gpus_per_instance``."""
    k = chk.positive_int("instances", instances)
    return k * instance_availability(gpu_availability, gpus_per_instance)


def instance_failure_rate(gpu_failures_per_year: float, gpus: int) -> float:
    """Failures per year of an instance that any one of its ``gpus`` GPUs takes down: ``N x lambda``."""
    chk.positive("gpu_failures_per_year", gpu_failures_per_year)
    return chk.positive_int("gpus", gpus) * gpu_failures_per_year


def recovery_time(detect_s: float, reschedule_s: float, weight_bytes_per_gpu: float,
                  load_bytes_per_s: float, warmup_s: float) -> float:
    """Seconds from a GPU fault to the instance serving again, restarted in place or elsewhere.

    ``detect + reschedule + weights per GPU / per-GPU load bandwidth + warm-up``: every rank loads its
    shard in parallel, so the per-GPU shard and per-GPU bandwidth set the load term.
    """
    chk.non_negative("detect_s", detect_s)
    chk.non_negative("reschedule_s", reschedule_s)
    chk.non_negative("weight_bytes_per_gpu", weight_bytes_per_gpu)
    chk.positive("load_bytes_per_s", load_bytes_per_s)
    chk.non_negative("warmup_s", warmup_s)
    return detect_s + reschedule_s + weight_bytes_per_gpu / load_bytes_per_s + warmup_s


# --- keeping KV across a tool call (Q140) ----------------------------------------------------------

def kv_hold_cost(kv_bytes: float, seconds: float, pool_bytes: float, price_per_s: float) -> float:
    """Cost of keeping ``kv_bytes`` resident for ``seconds`` when the KV pool is the binding resource.

    ``price per second x kv_bytes / pool_bytes x seconds``: the share of the replica the idle KV
    occupies, for as long as it occupies it.
    """
    chk.non_negative("kv_bytes", kv_bytes)
    chk.non_negative("seconds", seconds)
    chk.positive("pool_bytes", pool_bytes)
    chk.non_negative("price_per_s", price_per_s)
    if kv_bytes > pool_bytes:
        raise ValueError(f"kv_bytes ({kv_bytes:g}) exceeds the KV pool ({pool_bytes:g}): it cannot be held at all")
    return price_per_s * kv_bytes / pool_bytes * seconds


def break_even_hold_seconds(prefill_s: float, kv_bytes: float, pool_bytes: float) -> float:
    """Idle time after which holding the KV costs more than recomputing it: ``prefill x pool / kv_bytes``.

    Holding costs ``price x kv/pool x t``; recomputing costs ``price x prefill`` (the replica busy for the
    prefill); they are equal at ``t = prefill x pool / kv``. The price cancels.
    """
    chk.non_negative("prefill_s", prefill_s)
    chk.positive("kv_bytes", kv_bytes)
    chk.positive("pool_bytes", pool_bytes)
    return prefill_s * pool_bytes / kv_bytes


def session_prefill_tokens(system: int, new_per_turn: int, output_per_turn: int, turns: int,
                           cached: bool) -> list[int]:
    """Prompt tokens each turn of an agent session must prefill, with and without the previous turns' KV.

    Turn k (from 1) sends the system prompt, every earlier turn's new input and output, and its own new
    input (user message or tool result). Without a cache all of it is prefilled:
    ``system + (k - 1) x (new + output) + new``. With the KV kept, only the new input is (the first turn
    pays the system prompt too). Partial-block effects are ignored.
    """
    s = chk.non_negative_int("system", system)
    n = chk.positive_int("new_per_turn", new_per_turn)
    o = chk.non_negative_int("output_per_turn", output_per_turn)
    t = chk.positive_int("turns", turns)
    if cached:
        return [s + n] + [n] * (t - 1)
    return [s + (k - 1) * (n + o) + n for k in range(1, t + 1)]
