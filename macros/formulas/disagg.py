"""Fleet-scale sizing: the prefill and decode pools of a disaggregated deployment (Part C, Q138).

Prefill pool: each prefill instance is a single-server queue with a deterministic service time
(DistServe models a prefill instance as M/D/1), so the mean time to first token is the prefill time
plus the Pollaczek-Khinchine waiting time. Decode pool: by Little's law the sequences in decode are
``arrival rate x output tokens x TPOT``; instances = that concurrency over the batch one instance
holds at the TPOT target; or, from measured per-node throughput, demand over capacity per phase.

Units: requests/s, seconds, tokens, bytes. Pure functions; nothing here formats numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _checks as chk

__all__ = ["md1_wait", "md1_ttft", "prefill_instances", "decode_concurrency", "decode_instances",
           "PdPools", "pd_pools", "pools_from_throughput", "sequences_in_decode"]


def md1_wait(arrival_rate: float, service_s: float) -> float:
    """Mean waiting time in queue of an M/D/1 queue: ``rho x D / (2 (1 - rho))`` with ``rho = lambda x D``.

    The Pollaczek-Khinchine formula with a deterministic service time ``D`` (variance 0). Raises when
    ``rho >= 1``: the queue then grows without bound and no mean exists.
    """
    chk.non_negative("arrival_rate", arrival_rate)
    chk.positive("service_s", service_s)
    rho = arrival_rate * service_s
    if rho >= 1:
        raise ValueError(f"utilization lambda x D = {rho:.3g} must be below 1 (arrival_rate {arrival_rate!r}/s, "
                         f"service {service_s!r} s): the queue grows without bound")
    return rho * service_s / (2 * (1 - rho))


def md1_ttft(arrival_rate: float, service_s: float) -> float:
    """Mean time to first token of one prefill instance modelled as M/D/1: ``D + md1_wait``."""
    return service_s + md1_wait(arrival_rate, service_s)


def prefill_instances(arrival_rate: float, prefill_s: float, ttft_target_s: float) -> int:
    """Fewest prefill instances whose mean TTFT meets ``ttft_target_s`` with traffic split evenly.

    Each of ``n`` instances gets ``arrival_rate / n`` requests per second; the smallest ``n`` with
    ``md1_ttft(arrival_rate / n, prefill_s) <= ttft_target_s``. A target at or below the prefill time
    itself cannot be met by adding instances (only a faster instance helps): ValueError.
    """
    chk.positive("arrival_rate", arrival_rate)
    chk.positive("prefill_s", prefill_s)
    chk.positive("ttft_target_s", ttft_target_s)
    if ttft_target_s <= prefill_s:
        raise ValueError(f"TTFT target {ttft_target_s!r} s is not above the prefill time {prefill_s:.4g} s "
                         "of one prompt: more instances cannot meet it; use a faster (larger) prefill instance")
    n = max(1, math.floor(arrival_rate * prefill_s) + 1)  # the first n with rho < 1
    while md1_ttft(arrival_rate / n, prefill_s) > ttft_target_s * (1 + 1e-12):  # a target met exactly counts
        n += 1
    return n


def decode_concurrency(arrival_rate: float, output_tokens: float, tpot_s: float) -> float:
    """Sequences in decode at once, by Little's law: ``lambda x output tokens x TPOT``.

    A request stays in the decode pool for ``output_tokens x TPOT`` seconds (its first token comes
    from the prefill instance; counting it here is the conservative side).
    """
    chk.non_negative("arrival_rate", arrival_rate)
    chk.positive("output_tokens", output_tokens)
    chk.positive("tpot_s", tpot_s)
    return arrival_rate * output_tokens * tpot_s


def decode_instances(concurrency: float, batch_per_instance: int) -> int:
    """Decode instances that hold ``concurrency`` sequences at ``batch_per_instance`` each: the ceiling."""
    chk.non_negative("concurrency", concurrency)
    chk.positive_int("batch_per_instance", batch_per_instance)
    return max(1, math.ceil(round(concurrency / batch_per_instance, 9)))


@dataclass(frozen=True)
class PdPools:
    """Both pools for one traffic mix."""

    prefill_instances: int
    prefill_gpus: int
    ttft_s: float             # mean TTFT at that instance count (M/D/1)
    decode_concurrency: float
    decode_instances: int
    decode_gpus: int

    @property
    def total_gpus(self) -> int:
        return self.prefill_gpus + self.decode_gpus

    @property
    def decode_to_prefill(self) -> float:
        """Decode GPUs per prefill GPU."""
        return self.decode_gpus / self.prefill_gpus


def pd_pools(arrival_rate: float, prefill_s: float, ttft_target_s: float, output_tokens: float, tpot_s: float,
             batch_per_instance: int, gpus_per_prefill: int = 1, gpus_per_decode: int = 1) -> PdPools:
    """Size the prefill pool from its M/D/1 TTFT and the decode pool from Little's law.

    ``prefill_s``: one prompt's prefill time on one prefill instance; ``tpot_s`` and
    ``batch_per_instance``: the decode step time at that batch, which must meet the TPOT target.
    """
    chk.positive_int("gpus_per_prefill", gpus_per_prefill)
    chk.positive_int("gpus_per_decode", gpus_per_decode)
    n_p = prefill_instances(arrival_rate, prefill_s, ttft_target_s)
    conc = decode_concurrency(arrival_rate, output_tokens, tpot_s)
    n_d = decode_instances(conc, batch_per_instance)
    return PdPools(n_p, n_p * gpus_per_prefill, md1_ttft(arrival_rate / n_p, prefill_s), conc, n_d,
                   n_d * gpus_per_decode)


def pools_from_throughput(input_tokens_per_s: float, output_tokens_per_s: float, prefill_tokens_per_s_per_unit: float,
                          decode_tokens_per_s_per_unit: float) -> tuple[float, float]:
    """Prefill and decode units (nodes, instances) from measured per-unit throughput: demand / capacity each.

    ``prefill = input tokens/s / prefill tokens/s per unit``; ``decode = output tokens/s / decode tokens/s
    per unit``. Fractional: round up, and add headroom, when turning them into a deployment.
    """
    chk.non_negative("input_tokens_per_s", input_tokens_per_s)
    chk.non_negative("output_tokens_per_s", output_tokens_per_s)
    chk.positive("prefill_tokens_per_s_per_unit", prefill_tokens_per_s_per_unit)
    chk.positive("decode_tokens_per_s_per_unit", decode_tokens_per_s_per_unit)
    return (input_tokens_per_s / prefill_tokens_per_s_per_unit, output_tokens_per_s / decode_tokens_per_s_per_unit)


def sequences_in_decode(output_tokens_per_s: float, tokens_per_s_per_sequence: float) -> float:
    """Little's law on output tokens: sequences decoding at once = output tokens/s / tokens/s per sequence.

    Each sequence emits one token every ``1 / speed`` seconds, so the tokens the fleet emits per second
    are the sequences in flight times the per-sequence speed.
    """
    chk.non_negative("output_tokens_per_s", output_tokens_per_s)
    chk.positive("tokens_per_s_per_sequence", tokens_per_s_per_sequence)
    return output_tokens_per_s / tokens_per_s_per_sequence
