"""Decode step overheads against the bandwidth bound: kernel-launch time with and without CUDA graphs,
the throughput-versus-batch roofline a benchmark curve is read against, and one expert-parallel MoE layer
set by its busiest rank, the KV hand-off between prefill and decode pools, and the speculative speed-up
when verification costs more than a decode step (MoE).

Units: seconds, bytes, FLOPs, bytes/s, FLOP/s. These are models with stated assumptions, not
measurements: the launch cost per kernel and the bandwidth a kernel reaches are inputs the reader
measures (Nsight Systems shows both), and the results say how large each term can be.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk
from .speed import roofline_time

__all__ = ["LaunchOverhead", "launch_overhead", "kernels_per_step", "decode_roofline_point", "RooflinePoint",
           "EpLayerStep", "ep_layer_step", "PdCoupling", "pd_coupling", "speedup_with_verify_cost"]


def kernels_per_step(layers: int, kernels_per_layer: int, extra_kernels: int = 0) -> int:
    """Kernels one decode step launches: ``layers x kernels_per_layer + extra_kernels``.

    ``extra_kernels`` covers the work outside the layer stack (embedding lookup, final norm, LM head,
    sampling). The per-layer count depends on the engine's fusion: count it from a profile.
    """
    chk.positive_int("layers", layers)
    chk.positive_int("kernels_per_layer", kernels_per_layer)
    chk.non_negative_int("extra_kernels", extra_kernels)
    return layers * kernels_per_layer + extra_kernels


@dataclass(frozen=True)
class LaunchOverhead:
    gpu_time_s: float      # time the step's kernels run on the GPU
    host_time_s: float     # kernels x launch cost: CPU time to issue the step eagerly
    graph_launch_s: float  # CPU time to launch one captured graph
    eager_best_s: float    # max(gpu, host): launches fully overlapped with execution
    eager_worst_s: float   # gpu + host: no overlap at all
    graph_s: float         # gpu + one graph launch

    @property
    def launch_bound(self) -> bool:
        """True when issuing the kernels takes longer than running them: the GPU waits for the CPU."""
        return self.host_time_s > self.gpu_time_s

    @property
    def saved_best(self) -> float:
        """Share of the eager step a graph removes when launches overlap execution (can be 0)."""
        return max(0.0, (self.eager_best_s - self.graph_s) / self.eager_best_s)

    @property
    def saved_worst(self) -> float:
        """Share of the eager step a graph removes when launches do not overlap execution."""
        return max(0.0, (self.eager_worst_s - self.graph_s) / self.eager_worst_s)


def launch_overhead(gpu_time_s: float, kernels: int, launch_s: float, graph_launch_s: float = 0.0) -> LaunchOverhead:
    """Eager versus graph step time for a step of ``kernels`` kernels whose GPU time is ``gpu_time_s``.

    Eagerly, the CPU issues one kernel every ``launch_s`` seconds (framework dispatch plus the driver
    call) while the GPU runs the queue asynchronously, so the step takes at least
    ``max(gpu, kernels x launch_s)`` (perfect overlap) and at most ``gpu + kernels x launch_s``
    (none). A captured graph issues the whole step with one launch: ``gpu + graph_launch_s``.
    Graphs do not make kernels faster, so ``gpu_time_s`` is the same in both modes.
    """
    chk.positive("gpu_time_s", gpu_time_s)
    chk.positive_int("kernels", kernels)
    chk.non_negative("launch_s", launch_s)
    chk.non_negative("graph_launch_s", graph_launch_s)
    host = kernels * launch_s
    return LaunchOverhead(gpu_time_s, host, graph_launch_s, max(gpu_time_s, host), gpu_time_s + host,
                          gpu_time_s + graph_launch_s)


@dataclass(frozen=True)
class RooflinePoint:
    batch: int
    memory_s: float      # bytes read / bandwidth
    compute_s: float     # FLOPs / peak
    step_s: float        # max of the two
    tokens_per_s: float  # batch / step: aggregate decode throughput at this concurrency

    @property
    def compute_bound(self) -> bool:
        return self.compute_s > self.memory_s


def decode_roofline_point(batch: int, bytes_per_step: float, flops_per_token: float, bandwidth_bytes_per_s: float,
                          peak_flops: float) -> RooflinePoint:
    """Roofline of one decode step of ``batch`` sequences: ``step = max(bytes / bandwidth, FLOPs / peak)``.

    ``bytes_per_step`` is what the step reads (weights touched plus every sequence's KV);
    ``flops_per_token`` is ``2 x active parameters`` (plus attention if the caller adds it), so the
    step does ``batch x flops_per_token`` FLOPs. Aggregate throughput is ``batch / step``: it grows
    almost linearly while the weight read dominates, bends as KV reads grow with the batch, and
    flattens at ``peak / flops_per_token`` once the step is compute-bound.
    """
    chk.positive_int("batch", batch)
    chk.positive("bytes_per_step", bytes_per_step)
    chk.positive("flops_per_token", flops_per_token)
    chk.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    chk.positive("peak_flops", peak_flops)
    flops = batch * flops_per_token
    step = roofline_time(flops, bytes_per_step, peak_flops, bandwidth_bytes_per_s)
    return RooflinePoint(batch, bytes_per_step / bandwidth_bytes_per_s, flops / peak_flops, step, batch / step)


@dataclass(frozen=True)
class EpLayerStep:
    """One MoE layer of one step under expert parallelism, per rank (seconds and bytes)."""

    expert_bytes_per_rank: float  # routed-expert weights one rank reads (uniform routing)
    read_s: float                 # expert_bytes_per_rank / HBM bandwidth
    compute_s: float              # expert FLOPs of the average rank / peak
    a2a_bytes_per_rank: float     # dispatch + combine bytes the average rank sends across the link
    a2a_s: float                  # a2a_bytes_per_rank / link bandwidth + 2 x per-call latency
    imbalance: float              # max / mean tokens per rank (1 = perfectly balanced)

    @property
    def expert_s_hot(self) -> float:
        """Expert time of the busiest rank: its reads, or its compute scaled by the imbalance."""
        return max(self.read_s, self.imbalance * self.compute_s)

    @property
    def a2a_s_hot(self) -> float:
        """All-to-all time of the busiest rank, which receives ``imbalance`` times the mean traffic."""
        return self.imbalance * self.a2a_s

    @property
    def layer_s(self) -> float:
        """The layer takes as long as its busiest rank: expert work plus its all-to-all, not overlapped."""
        return self.expert_s_hot + self.a2a_s_hot

    @property
    def comm_share(self) -> float:
        return self.a2a_s_hot / self.layer_s


def ep_layer_step(tokens: int, ep: int, experts_touched: float, bytes_per_expert: float, flops_per_token: float,
                  a2a_bytes_total: float, hbm_bytes_per_s: float, peak_flops: float, link_bytes_per_s: float,
                  call_latency_s: float = 0.0, imbalance: float = 1.0) -> EpLayerStep:
    """Time of one expert-parallel MoE layer, set by its busiest rank.

    Uniform routing spreads ``experts_touched`` experts and ``tokens`` tokens evenly over ``ep`` ranks:
    each reads ``experts_touched / ep x bytes_per_expert`` and computes ``tokens x flops_per_token / ep``
    (``flops_per_token`` = top-k x 2 x params per expert). ``a2a_bytes_total`` is the dispatch + combine
    volume of the layer (:func:`macros.formulas.parallel.ep_all_to_all_bytes`); ``(ep - 1) / ep`` of it
    crosses the link, shared by the ranks. ``imbalance`` = max / mean tokens per rank (vLLM's EPLB logs
    its inverse as ``balancedness``): the busiest rank computes and receives that many times the mean,
    and every rank waits for it at the combine. Its reads do not grow, since at decode batch sizes a
    rank's experts are read once per step whatever number of tokens they serve.
    """
    chk.non_negative_int("tokens", tokens)
    chk.positive_int("ep", ep)
    chk.non_negative("experts_touched", experts_touched)
    chk.positive("bytes_per_expert", bytes_per_expert)
    chk.positive("flops_per_token", flops_per_token)
    chk.non_negative("a2a_bytes_total", a2a_bytes_total)
    chk.positive("hbm_bytes_per_s", hbm_bytes_per_s)
    chk.positive("peak_flops", peak_flops)
    chk.positive("link_bytes_per_s", link_bytes_per_s)
    chk.non_negative("call_latency_s", call_latency_s)
    if imbalance < 1:
        raise ValueError(f"imbalance is max / mean tokens per rank and cannot be below 1, got {imbalance!r}")
    read = experts_touched / ep * bytes_per_expert
    compute = tokens * flops_per_token / ep
    remote = a2a_bytes_total * (ep - 1) / ep / ep
    a2a = (remote / link_bytes_per_s + 2 * call_latency_s) if ep > 1 else 0.0
    return EpLayerStep(read, read / hbm_bytes_per_s, compute / peak_flops, remote, a2a, imbalance)


@dataclass(frozen=True)
class PdCoupling:
    """The KV hand-off between a prefill pool and a decode pool, for one prompt."""

    kv_bytes: float        # the prompt's KV cache
    prefill_s: float       # time the prefill instance spends on the prompt
    transfer_s: float      # kv_bytes / link bandwidth
    link_bytes_per_s: float

    @property
    def transfer_to_prefill(self) -> float:
        """Transfer time as a share of the prefill time: the TTFT it adds if nothing overlaps."""
        return self.transfer_s / self.prefill_s

    @property
    def sustained_bytes_per_s(self) -> float:
        """Bandwidth a prefill instance emits when it prefills such prompts back to back."""
        return self.kv_bytes / self.prefill_s

    @property
    def link_share(self) -> float:
        """Share of the link that sustained rate occupies (above 1: the link, not the GPU, limits prefill)."""
        return self.sustained_bytes_per_s / self.link_bytes_per_s


def pd_coupling(kv_bytes: float, prefill_s: float, link_bytes_per_s: float) -> PdCoupling:
    """Whether a link can carry the KV a prefill instance produces.

    Per prompt, the decode side cannot start before the KV has arrived: ``kv_bytes / link`` seconds,
    added to TTFT unless the connector streams it while the prefill runs. Sustained, an instance that
    prefills such prompts back to back emits ``kv_bytes / prefill_s`` bytes per second; the ratio of
    the two times equals the share of the link that rate needs, so one number answers both questions.
    """
    chk.positive("kv_bytes", kv_bytes)
    chk.positive("prefill_s", prefill_s)
    chk.positive("link_bytes_per_s", link_bytes_per_s)
    return PdCoupling(kv_bytes, prefill_s, kv_bytes / link_bytes_per_s, link_bytes_per_s)


def speedup_with_verify_cost(expected_tokens: float, draft_length: int, draft_cost: float,
                             verify_cost: float) -> float:
    """Speculative speed-up when verifying costs more than a plain decode step.

    ``E / (g x c + v)``: ``E`` tokens per round (:func:`macros.formulas.specdec.expected_tokens_per_step`),
    ``g`` draft passes at ``c`` each, and one verification pass at ``v``, all relative to one plain decode
    step of the target. Leviathan et al. take ``v = 1`` (verifying ``g + 1`` tokens costs one
    bandwidth-bound step). That holds for a dense model; an MoE model's verification reads the experts
    that all ``g + 1`` tokens route to, so ``v`` grows with ``g``.
    """
    chk.positive("expected_tokens", expected_tokens)
    chk.non_negative_int("draft_length", draft_length)
    chk.non_negative("draft_cost", draft_cost)
    chk.positive("verify_cost", verify_cost)
    return expected_tokens / (draft_length * draft_cost + verify_cost)
