"""Speculative decoding (Leviathan, Kalman, Matias, "Fast Inference from Transformers via Speculative
Decoding", ICML 2023, https://arxiv.org/abs/2211.17192).

A draft model proposes ``g`` tokens; the target model verifies them in one forward pass. With an
i.i.d. per-token acceptance rate ``a``, the number of tokens produced per target pass is a capped
geometric variable.
"""

from __future__ import annotations

from . import _checks as chk

__all__ = ["expected_tokens_per_step", "speculative_speedup"]


def expected_tokens_per_step(acceptance_rate: float, draft_length: int) -> float:
    """Expected tokens per target-model pass: ``E = (1 - a^(g+1)) / (1 - a)`` (paper, eq. 1).

    Between 1 (a = 0: only the target's own token) and ``g + 1`` (a = 1: every draft accepted plus the
    bonus token); the a = 1 limit is returned directly.
    """
    chk.fraction("acceptance_rate", acceptance_rate, allow_zero=True)
    g = chk.non_negative_int("draft_length", draft_length)
    a = acceptance_rate
    if a == 1:
        return float(g + 1)
    return (1 - a ** (g + 1)) / (1 - a)


def speculative_speedup(acceptance_rate: float, draft_length: int, draft_cost_ratio: float) -> float:
    """Expected wall-time speed-up over plain decoding: ``E / (g x c + 1)`` (paper, theorem 3.8).

    ``c`` is the cost of one draft forward pass relative to one target pass. Each iteration costs
    ``g`` draft passes and one target pass, i.e. ``g c + 1`` target-pass units, and yields ``E``
    tokens. Assumes verification of ``g + 1`` tokens costs the same as one decode step (true while
    decode is memory-bound). Below 1 means speculation slows decoding down.
    """
    chk.non_negative("draft_cost_ratio", draft_cost_ratio)
    g = chk.non_negative_int("draft_length", draft_length)
    return expected_tokens_per_step(acceptance_rate, g) / (g * draft_cost_ratio + 1)
