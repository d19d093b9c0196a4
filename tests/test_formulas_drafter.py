"""The acceptance a drafter needs and the KV capacity it costs (macros/formulas/drafter.py), against
values worked by hand."""

from __future__ import annotations

import pytest

from macros import formulas as F
from macros.render import inputs
from macros.render.registry import REGISTRY


def test_one_draft_token_break_even_is_the_draft_cost():
    # g = 1: E = 1 + a; speed-up (1 + a) / (c + 1) = 1  =>  a = c.
    assert F.breakeven_acceptance(1, 0.1) == pytest.approx(0.1, abs=1e-8)
    # and for a 1.5x target with c = 0.1: 1 + a = 1.65  =>  a = 0.65
    assert F.breakeven_acceptance(1, 0.1, 1.0, 1.5) == pytest.approx(0.65, abs=1e-8)


def test_three_draft_tokens_by_hand():
    # g = 3, c = 0.05, v = 1: need E = 1.5 x 1.15 = 1.725; E(a) = 1 + a + a^2 + a^3.
    a = F.breakeven_acceptance(3, 0.05, 1.0, 1.5)
    assert 1 + a + a**2 + a**3 == pytest.approx(1.725, abs=1e-7)
    assert 0.44 < a < 0.45


def test_unreachable_and_free_targets():
    # g = 2, c = 0.5, v = 1: at most 3 / 2 = 1.5x, so 1.6x is out of reach.
    assert F.breakeven_acceptance(2, 0.5, 1.0, 1.6) is None
    # free draft, free verification below a step: 1x already at a = 0.
    assert F.breakeven_acceptance(2, 0.0, 0.5, 1.0) == 0.0


def test_verification_cost_raises_the_break_even():
    assert F.breakeven_acceptance(4, 0.1, 1.3) > F.breakeven_acceptance(4, 0.1, 1.0)


def test_mean_length_to_rate_inverts_e():
    # g = 1: E = 1 + a, so a mean acceptance length of 1.8 is a = 0.8.
    assert F.mean_acceptance_to_rate(1.8, 1) == pytest.approx(0.8, abs=1e-8)
    # g = 2, a = 0.5: E = 1 + 0.5 + 0.25 = 1.75.
    assert F.mean_acceptance_to_rate(1.75, 2) == pytest.approx(0.5, abs=1e-8)
    assert F.mean_acceptance_to_rate(4, 3) == 1.0
    with pytest.raises(ValueError, match="mean_acceptance_length"):
        F.mean_acceptance_to_rate(3.5, 2)


def test_kv_cost_by_hand():
    # 1,000,000 bytes of budget, 1,000 bytes per token: 1,000 tokens. A drafter of 100,000 bytes
    # with 250 bytes per token leaves 900,000 / 1,250 = 720 tokens: 28 % lost, pay back 1 / 0.72.
    c = F.drafter_kv_cost(1e6, 1000, 1e5, 250)
    assert (c.tokens_without, c.tokens_with) == (1000, 720)
    assert c.bytes_per_token_with == 1250
    assert c.fraction_lost == pytest.approx(0.28)
    assert c.payback_speedup == pytest.approx(1 / 0.72)


def test_kv_cost_rejects_a_drafter_bigger_than_the_budget():
    with pytest.raises(ValueError, match="no KV at all"):
        F.drafter_kv_cost(1e6, 1000, 1e6, 0)


def test_drafter_payback_llama_draft_model_figures():
    # Llama-3.2-1B drafting for Llama-3.1-8B: target KV 32 layers x 8 heads x 128 x 2 (K,V) x 2 bytes
    # = 131,072 bytes per token; the drafter adds 16 x 8 x 64 x 2 x 2 = 32,768 bytes (a quarter more).
    out = REGISTRY["drafter_payback"].fn("llama-3.1-8b", "h100-sxm", draft_model="llama-3.2-1b",
                                         draft_length=4, measured_acceptance=0.6)
    assert "131,072 bytes" in out and "32,768 bytes" in out
    # c = 1.23 / 8.0 = 0.154 (catalog stated parameters); break-even solves E(a, 4) = 4 x 0.15375 + 1.
    a = F.breakeven_acceptance(4, 1.23 / 8.0)
    assert f"a = {a:.3g}" in out


def test_drafter_payback_mtp_memory_excludes_and_cost_includes_the_shared_head():
    # DeepSeek-V3's MTP module: 11.5B parameters of its own (README_WEIGHTS.md), embedding and head shared,
    # each 129,280 x 7,168 = 926,679,040. Memory: 11.5e9 bytes in FP8 over 8 GPUs = 1.4375e9 B = 1.34 GiB.
    # Cost per draft pass at medium batch: (11.5e9 + 926,679,040) / 671e9 = 0.01852.
    out = REGISTRY["drafter_payback"].fn("deepseek-v3", "h200-sxm", n_gpus=8, fmt="fp8", drafter_params=11.5e9,
                                         drafter_layers=1, draft_length=1, measured_acceptance=0.85)
    assert "11.50B" in out and "926.68M" in out and "1.34 GiB" in out
    assert "= 0.0185 of a target step (medium batch" in out
    # MLA latent 61 x 576 x 2 bytes = 70,272 per token on every GPU; one more layer adds 1,152.
    assert "70,272 bytes" in out and "1,152 bytes" in out
    # g = 1, v = 1: break-even on compute is a = c.
    assert "a = 0.0185 (engine" in out
    assert "pays for itself" in out


def test_drafter_payback_mtp_at_batch_one():
    # Batch one: c = (2.4e9 - 926,679,040) / 37e9 = 0.03982. v: uniform routing over 256 experts, top 8:
    # one token reads 8, two read 256 x (1 - (248/256)^2) = 15.75. One expert is 3 x 7,168 x 2,048 =
    # 44,040,192 FP8 bytes, 58 MoE layers; every other weight is read once either way (the LM head and the
    # one embedding row in 16-bit, as the FP8 format keeps embeddings).
    b = F.param_breakdown(inputs.model("deepseek-v3"))
    per_expert = 3 * 7168 * 2048
    assert b.params_per_expert == per_expert
    rest = (b.attention + b.dense_mlp + b.shared_experts + b.router + b.norms) + 2 * b.lm_head + 2 * 7168
    v = (rest + 15.75 * per_expert * 58) / (rest + 8 * per_expert * 58)
    out = REGISTRY["drafter_payback"].fn("deepseek-v3", "h200-sxm", n_gpus=8, fmt="fp8", drafter_params=11.5e9,
                                         drafter_layers=1, draft_length=1, measured_acceptance=0.85,
                                         drafter_active_params=2.4e9)
    assert f"v = {v:.3g}" in out and "15.8 for 2" in out
    c = (2.4e9 - 129280 * 7168) / 37e9
    assert f"= {c:.3g} of a target step (batch one" in out
    # g = 1: (1 + a) / (c + v) = 1  =>  a = c + v - 1.
    assert f"a = {c + v - 1:.3g} (engine" in out
    assert "pays for its compute" in out


def test_drafter_payback_batch_one_needs_a_moe_head():
    with pytest.raises(Exception, match="drafter_active_params"):
        REGISTRY["drafter_payback"].fn("llama-3.1-8b", "h100-sxm", draft_model="llama-3.2-1b",
                                       drafter_active_params=1e9)
    with pytest.raises(Exception, match="shared"):
        REGISTRY["drafter_payback"].fn("deepseek-v3", "h200-sxm", n_gpus=8, fmt="fp8", drafter_params=11.5e9,
                                       drafter_active_params=0.5e9)


def test_engine_draft_acceptance_is_accepted_over_drafted():
    # mean length 2.8 at 3 drafts: 1.8 accepted of 3 drafted = 60 %.
    assert REGISTRY["engine_draft_acceptance"].fn(2.8, 3) == "60.0 %"
    assert REGISTRY["rate_from_mean_length"].fn(1.75, 2) == "0.500"
