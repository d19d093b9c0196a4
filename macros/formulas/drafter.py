"""Living with a drafter: the acceptance rate a speculative drafter needs, and the KV capacity it costs.

Tokens per verification round and the speed-up follow Leviathan, Kalman and Matias, "Fast Inference
from Transformers via Speculative Decoding", ICML 2023 (https://arxiv.org/abs/2211.17192):
``E(a, g) = (1 - a^(g+1)) / (1 - a)`` and ``speed-up = E / (g c + v)``
(:mod:`macros.formulas.specdec`, :func:`macros.formulas.overhead.speedup_with_verify_cost`). Here the
question is turned around: which acceptance rate ``a`` makes the speed-up reach a target, and which
target a drafter must reach to pay back the KV cache its weights and its own attention layers take.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk
from .specdec import expected_tokens_per_step

__all__ = ["DrafterKvCost", "drafter_kv_cost", "breakeven_acceptance", "mean_acceptance_to_rate"]


def _rate_for_tokens(tokens: float, g: int, tol: float) -> float:
    """Bisection: the smallest ``a`` in [0, 1] with ``E(a, g) >= tokens`` (``E`` rises monotonically in ``a``)."""
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if expected_tokens_per_step(mid, g) >= tokens:
            hi = mid
        else:
            lo = mid
    return hi


@dataclass(frozen=True)
class DrafterKvCost:
    tokens_without: int        # KV tokens the budget holds with no drafter
    tokens_with: int           # KV tokens left once the drafter's weights and KV layers are in
    bytes_per_token_with: float  # KV bytes per token including the drafter's own attention layers
    fraction_lost: float       # 1 - tokens_with / tokens_without
    payback_speedup: float     # 1 / (1 - fraction_lost): the speed-up that recovers the lost capacity


def drafter_kv_cost(kv_budget_bytes: float, kv_bytes_per_token: float, drafter_weight_bytes: float,
                    drafter_kv_bytes_per_token: float) -> DrafterKvCost:
    """KV capacity one GPU gives up to host a drafter.

    The drafter's resident weights come out of the KV budget, and its own attention layers keep KV for
    every token of every running sequence, so each token costs ``kv_bytes_per_token +
    drafter_kv_bytes_per_token`` (an MTP module or an EAGLE head with one layer of the target's KV
    shape adds ``1 / L`` of the target's per-token KV; a separate draft model adds its own KV per
    token). All bytes are per GPU. ``payback_speedup`` is what the drafter must deliver when throughput
    is capped by how many tokens fit: with a fraction ``f`` of the capacity gone, the same work needs
    ``1 / (1 - f)`` times the speed per sequence.
    """
    chk.positive("kv_budget_bytes", kv_budget_bytes)
    chk.positive("kv_bytes_per_token", kv_bytes_per_token)
    chk.non_negative("drafter_weight_bytes", drafter_weight_bytes)
    chk.non_negative("drafter_kv_bytes_per_token", drafter_kv_bytes_per_token)
    if drafter_weight_bytes >= kv_budget_bytes:
        raise ValueError(f"drafter_weight_bytes ({drafter_weight_bytes:.4g}) is not below the KV budget "
                         f"({kv_budget_bytes:.4g}): the drafter leaves no KV at all")
    without = int(kv_budget_bytes // kv_bytes_per_token)
    per_token_with = kv_bytes_per_token + drafter_kv_bytes_per_token
    with_ = int((kv_budget_bytes - drafter_weight_bytes) // per_token_with)
    lost = 1 - with_ / without
    return DrafterKvCost(without, with_, per_token_with, lost, 1 / (1 - lost))


def breakeven_acceptance(draft_length: int, draft_cost: float, verify_cost: float = 1.0,
                         target_speedup: float = 1.0, tol: float = 1e-9) -> float | None:
    """Smallest per-token acceptance rate ``a`` with ``E(a, g) / (g c + v) >= target_speedup``.

    ``E`` rises monotonically in ``a`` from 1 to ``g + 1``, so the root is found by bisection. Returns
    ``0.0`` when even ``a = 0`` reaches the target (verification is free and the draft costs nothing),
    and ``None`` when no acceptance rate can: ``(g + 1) / (g c + v) < target_speedup``.
    """
    g = chk.positive_int("draft_length", draft_length)
    chk.non_negative("draft_cost", draft_cost)
    chk.positive("verify_cost", verify_cost)
    chk.positive("target_speedup", target_speedup)
    cost = g * draft_cost + verify_cost
    need = target_speedup * cost            # tokens per round the target needs
    if need > g + 1:
        return None
    if need <= 1:
        return 0.0
    return _rate_for_tokens(need, g, tol)


def mean_acceptance_to_rate(mean_acceptance_length: float, draft_length: int, tol: float = 1e-9) -> float:
    """The i.i.d. per-token acceptance rate ``a`` whose ``E(a, g)`` equals a measured mean acceptance length.

    vLLM logs the mean acceptance length as ``1 + accepted / drafts`` (bonus token included), which is
    ``E`` of the paper; inverting it gives the per-token rate the formulas take. The engine's own
    "draft acceptance rate" (accepted / drafted tokens) is a different number: ``(E - 1) / g``.
    """
    g = chk.positive_int("draft_length", draft_length)
    e = chk.positive("mean_acceptance_length", mean_acceptance_length)
    if not 1 <= e <= g + 1:
        raise ValueError(f"mean_acceptance_length must lie in [1, draft_length + 1] = [1, {g + 1}], got {e}")
    if e == g + 1:
        return 1.0
    return _rate_for_tokens(e, g, tol)
