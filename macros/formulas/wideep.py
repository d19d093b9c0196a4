"""Wide expert parallelism (Part C, Q137): where the routed experts of a DeepSeek-class MoE sit when
an EP group spans many GPUs, with redundant copies; how many tokens each copy sees per step; the
dispatch and combine bytes per rank; one MoE layer's time, serial or with two overlapped micro-batches;
and the greedy replication and packing of DeepSeek's EPLB.

Units: tokens, bytes, seconds, FLOPs. Pure functions; nothing here formats numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _checks as chk

__all__ = ["ExpertLayout", "expert_layout", "tokens_per_expert", "ep_dispatch_bytes", "WideEpLayer",
           "wide_ep_layer", "eplb_replicate", "eplb_pack", "gpu_imbalance"]


def tokens_per_expert(tokens: int, top_k: int, num_experts: int) -> float:
    """Mean tokens one routed expert processes in a step of ``tokens``: ``tokens x top_k / experts``."""
    chk.non_negative_int("tokens", tokens)
    chk.positive_int("top_k", top_k)
    chk.positive_int("num_experts", num_experts)
    if top_k > num_experts:
        raise ValueError(f"top_k {top_k} exceeds num_experts {num_experts}")
    return tokens * top_k / num_experts


@dataclass(frozen=True)
class ExpertLayout:
    """Routed experts placed over an expert-parallel group, with redundant copies."""

    num_experts: int
    redundant: int
    ep: int
    slots_per_gpu: int          # expert copies each GPU holds: (experts + redundant) / EP
    tokens_per_gpu: float       # token-expert pairs a GPU processes per step, uniform routing
    tokens_per_slot: float      # per expert copy: tokens x top_k / (experts + redundant)
    hot_tokens_per_gpu: float   # the busiest GPU when one expert gets ``hot_share`` x its fair load

    @property
    def imbalance(self) -> float:
        """Busiest GPU over the mean (>= 1): what every rank waits for at the combine."""
        return self.hot_tokens_per_gpu / self.tokens_per_gpu if self.tokens_per_gpu else 1.0


def expert_layout(num_experts: int, top_k: int, ep: int, tokens: int, redundant: int = 0,
                  hot_factor: float = 1.0, hot_copies: int = 1) -> ExpertLayout:
    """Where the routed experts of one MoE layer sit and how many tokens each GPU serves per step.

    ``ep`` GPUs hold ``num_experts + redundant`` expert copies, the same number on each (DeepSeek-V3's
    prefill unit: 256 + 32 copies on 32 GPUs, 9 each). ``tokens`` is the whole EP group's step (the
    sum of every rank's batch); each brings ``top_k`` token-expert pairs, ``tokens x top_k / ep`` per
    GPU on average. ``hot_factor``: one expert receives that many times its fair share
    (``tokens x top_k / num_experts``); spread over ``hot_copies`` copies on different GPUs, the
    busiest GPU carries its mean load plus the hot expert's excess divided by the copies.
    """
    chk.positive_int("num_experts", num_experts)
    chk.positive_int("ep", ep)
    chk.non_negative_int("redundant", redundant)
    chk.positive_int("hot_copies", hot_copies)
    if hot_factor < 1 or not math.isfinite(hot_factor):
        raise ValueError(f"hot_factor is the hot expert's load over its fair share and must be >= 1, "
                         f"got {hot_factor!r}")
    slots = num_experts + redundant
    if slots % ep:
        raise ValueError(f"{num_experts} experts + {redundant} redundant = {slots} copies do not divide over EP {ep}; "
                         f"choose redundant so that the total is a multiple of {ep}")
    if hot_copies > 1 + redundant:
        raise ValueError(f"hot_copies {hot_copies} needs {hot_copies - 1} redundant copies, only {redundant} exist")
    fair = tokens_per_expert(tokens, top_k, num_experts)
    per_gpu = tokens * top_k / ep
    excess = (hot_factor - 1) * fair
    # the hot expert's extra load lands on the GPUs holding its copies, split evenly between them
    hot = per_gpu + excess / hot_copies
    return ExpertLayout(num_experts, redundant, ep, slots // ep, per_gpu, tokens * top_k / slots, hot)


def ep_dispatch_bytes(tokens: int, top_k: int, hidden_size: int, element_bytes: float, scale_group: int | None = None,
                      scale_bytes: float = 4.0) -> float:
    """Bytes one rank sends in one dispatch (or combine) of one MoE layer: one hidden vector per token and expert.

    ``tokens x top_k x (hidden x element_bytes + hidden / scale_group x scale_bytes)``: FP8 dispatch carries a
    float32 scale per ``scale_group`` channels (DeepEP: 128); a BF16 combine has none (``scale_group=None``).
    Copies bound for experts on the sender's own GPU are counted too, as DeepEP's bandwidth figures count them.
    """
    chk.non_negative_int("tokens", tokens)
    chk.positive_int("top_k", top_k)
    chk.positive_int("hidden_size", hidden_size)
    chk.positive("element_bytes", element_bytes)
    per_vector = hidden_size * element_bytes
    if scale_group is not None:
        chk.positive_int("scale_group", scale_group)
        chk.non_negative("scale_bytes", scale_bytes)
        per_vector += math.ceil(hidden_size / scale_group) * scale_bytes
    return tokens * top_k * per_vector


@dataclass(frozen=True)
class WideEpLayer:
    """One MoE layer of one step on the busiest GPU of a wide EP group (seconds)."""

    read_s: float         # the GPU's expert copies read once from HBM
    compute_s: float      # its token-expert pairs x 2 x params per expert / peak, at the busiest GPU's load
    dispatch_s: float     # dispatch bytes / link
    combine_s: float      # combine bytes / link

    @property
    def expert_s(self) -> float:
        return max(self.read_s, self.compute_s)

    @property
    def comm_s(self) -> float:
        return self.dispatch_s + self.combine_s

    @property
    def serial_s(self) -> float:
        """Dispatch, experts, combine one after another: what one micro-batch alone costs."""
        return self.expert_s + self.comm_s

    @property
    def overlapped_s(self) -> float:
        """Per micro-batch with two micro-batches interleaved, so one's communication hides behind the
        other's experts (DeepSeek's dual micro-batch overlap): the longer of the two, at best."""
        return max(self.expert_s, self.comm_s)


def wide_ep_layer(copies_per_gpu: int, bytes_per_expert: float, hot_pairs_per_gpu: float, flops_per_pair: float,
                  dispatch_bytes: float, combine_bytes: float, hbm_bytes_per_s: float, peak_flops: float,
                  link_bytes_per_s: float) -> WideEpLayer:
    """Time of one MoE layer on the busiest GPU: expert reads or compute, plus dispatch and combine over the link.

    ``hot_pairs_per_gpu`` is the busiest GPU's token-expert pairs (``ExpertLayout.hot_tokens_per_gpu``);
    ``flops_per_pair`` = 2 x parameters of one expert; ``dispatch_bytes`` / ``combine_bytes`` per rank
    (:func:`ep_dispatch_bytes`), sent over ``link_bytes_per_s`` (NVLink inside a node, the NIC across nodes;
    a measured all-to-all bandwidth is the better input).
    """
    chk.positive_int("copies_per_gpu", copies_per_gpu)
    for name, v in (("bytes_per_expert", bytes_per_expert), ("flops_per_pair", flops_per_pair),
                    ("hbm_bytes_per_s", hbm_bytes_per_s), ("peak_flops", peak_flops),
                    ("link_bytes_per_s", link_bytes_per_s)):
        chk.positive(name, v)
    chk.non_negative("hot_pairs_per_gpu", hot_pairs_per_gpu)
    chk.non_negative("dispatch_bytes", dispatch_bytes)
    chk.non_negative("combine_bytes", combine_bytes)
    return WideEpLayer(copies_per_gpu * bytes_per_expert / hbm_bytes_per_s,
                       hot_pairs_per_gpu * flops_per_pair / peak_flops,
                       dispatch_bytes / link_bytes_per_s, combine_bytes / link_bytes_per_s)


# ---------------------------------------------------------------- EPLB: replicate hot experts, pack copies to GPUs

def eplb_replicate(loads: list[float], num_copies: int) -> list[int]:
    """Copies per expert: each extra copy goes to the expert with the highest load per copy so far.

    The greedy step of DeepSeek's EPLB (``replicate_experts``): it minimises the largest per-copy load.
    Ties go to the lowest expert index, as ``torch.max`` returns the first maximum.
    """
    if not loads:
        raise ValueError("loads must list at least one expert")
    for i, x in enumerate(loads):
        chk.non_negative(f"loads[{i}]", x)
    chk.positive_int("num_copies", num_copies)
    if num_copies < len(loads):
        raise ValueError(f"num_copies {num_copies} is fewer than the {len(loads)} experts: every expert needs a copy")
    counts = [1] * len(loads)
    for _ in range(num_copies - len(loads)):
        best = max(range(len(loads)), key=lambda e: (loads[e] / counts[e], -e))
        counts[best] += 1
    return counts


def eplb_pack(loads: list[float], counts: list[int], gpus: int) -> list[float]:
    """Load per GPU after packing every copy (load / copies of its expert) onto ``gpus`` GPUs, the same number
    of copies on each: heaviest copy first, onto the least-loaded GPU that still has room (EPLB's
    ``balanced_packing``)."""
    if len(loads) != len(counts):
        raise ValueError(f"loads has {len(loads)} experts but counts has {len(counts)}")
    chk.positive_int("gpus", gpus)
    copies = sorted((loads[e] / c for e, c in enumerate(counts) for _ in range(c)), reverse=True)
    if len(copies) % gpus:
        raise ValueError(f"{len(copies)} copies do not divide over {gpus} GPUs")
    per = len(copies) // gpus
    weight, items = [0.0] * gpus, [0] * gpus
    for w in copies:
        g = min((i for i in range(gpus) if items[i] < per), key=lambda i: (weight[i], i))
        weight[g] += w
        items[g] += 1
    return weight


def gpu_imbalance(gpu_loads: list[float]) -> float:
    """Busiest GPU over the mean: the factor every rank of the layer waits for (1 = balanced)."""
    if not gpu_loads:
        raise ValueError("gpu_loads must list at least one GPU")
    mean = sum(gpu_loads) / len(gpu_loads)
    if mean <= 0:
        raise ValueError("gpu_loads must not all be zero")
    return max(gpu_loads) / mean
