"""Issue 21: replicated tensors under TP, LM head charged only at sampled positions, all-reduce
latency in the TP decode bound, and the tensors a weight-only INT4 format leaves in 16-bit.

Each expected figure is computed here independently, tensor by tensor, from the model's config and
the layer classes of the engine (vLLM), not through the formula under test.
"""

from __future__ import annotations

import pytest

from macros.catalog import load_catalog
from macros.formulas import (allreduce_time, decode_bound, kv_bytes_per_sequence, prefill_matmul_flops,
                             tp_decode_allreduce_time, tp_shard, weight_bytes, weight_bytes_read_per_step)

CAT = load_catalog()


# --------------------------------------------------------------------------------------------------
# 1. per-rank weights under TP, as vLLM allocates them
# --------------------------------------------------------------------------------------------------

def _vllm_rank_params_gqa(m, tp: int) -> int:
    """Parameters one rank holds for a dense Llama-style model, walked the way vLLM builds it.

    QKVParallelLinear: q heads / tp per rank; KV heads / tp per rank, or one whole KV head when tp
    exceeds the KV-head count (vllm/model_executor/layers/linear.py). o_proj RowParallel, gate/up
    MergedColumnParallel, down RowParallel: all split by tp. RMSNorm weights replicated.
    VocabParallelEmbedding / ParallelLMHead split by vocabulary rows.
    """
    h, hd = m.hidden_size, m.head_dim
    q = m.num_attention_heads // tp * hd
    kv_heads = m.num_key_value_heads // tp if tp <= m.num_key_value_heads else 1
    kv = kv_heads * hd
    attn = h * (q + 2 * kv) + q * h
    mlp = 3 * h * (m.intermediate_size // tp)
    norms = 2 * h
    embed = m.vocab_size * h // tp
    head = 0 if m.tie_word_embeddings else m.vocab_size * h // tp
    return m.num_hidden_layers * (attn + mlp + norms) + h + embed + head


def _vllm_rank_params_deepseek(m, tp: int) -> int:
    """Per-rank parameters of DeepSeek-V3 in vLLM (models/deepseek_v2.py).

    Replicated: q_a_proj and kv_a_proj_with_mqa (ReplicatedLinear), q_a/kv_a layernorms, the MoE
    router gate (ReplicatedLinear), every RMSNorm. Split by tp: q_b_proj and kv_b_proj (column), o_proj
    (row), dense MLPs, and each routed and shared expert's MLP (TP inside the expert), embedding and
    lm_head.
    """
    h, a, e = m.hidden_size, m.mla, m.moe
    heads = m.num_attention_heads // tp
    attn = (h * a.q_lora_rank + a.q_lora_rank                                # q_a + norm, replicated
            + a.q_lora_rank * heads * (a.qk_nope_head_dim + a.qk_rope_head_dim)
            + h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank     # kv_a + norm, replicated
            + a.kv_lora_rank * heads * (a.qk_nope_head_dim + a.v_head_dim)
            + heads * a.v_head_dim * h)
    dense_mlp = 3 * h * (m.intermediate_size // tp)
    moe = (e.num_experts + e.num_shared_experts) * 3 * h * (e.moe_intermediate_size // tp) + h * e.num_experts
    layers = m.num_hidden_layers
    moe_layers = layers - e.first_dense_layers
    return (layers * (attn + 2 * h) + e.first_dense_layers * dense_mlp + moe_layers * moe + h
            + 2 * m.vocab_size * h // tp)


@pytest.mark.parametrize("key, tp", [("llama-3.1-70b", 8), ("llama-3.1-70b", 16), ("llama-3.1-8b", 8),
                                     ("llama-3.1-8b", 16)])
def test_tp_shard_matches_vllm_rank_allocation(key, tp):
    m, bf16 = CAT.model(key), CAT.format("bf16")
    shard = tp_shard(m, tp, bf16)
    assert shard.weights_per_gpu == pytest.approx(2 * _vllm_rank_params_gqa(m, tp), rel=1e-9)


def test_tp_shard_replication_overheads():
    # The figures: +1.96% (70B, TP16), +3.3% (8B, TP16) over an even split.
    bf16 = CAT.format("bf16")
    for key, tp, lo, hi in (("llama-3.1-70b", 16, 0.019, 0.020), ("llama-3.1-8b", 16, 0.032, 0.034)):
        m = CAT.model(key)
        s = tp_shard(m, tp, bf16)
        even = weight_bytes(m, bf16) / tp
        assert lo < s.weights_per_gpu / even - 1 < hi
        assert s.replicated_extra_bytes == pytest.approx(s.weights_per_gpu - even)


def test_tp_shard_deepseek_v3_replicates_latent_projections_and_router():
    m, fp8 = CAT.model("deepseek-v3"), CAT.format("fp8")
    shard = tp_shard(m, 8, fp8)
    # FP8: one byte per parameter, except the embedding and lm_head, which FP8 checkpoints keep in
    # BF16 (Fp8Config quantizes LinearBase and FusedMoE layers only): one more byte for their shard.
    expected = _vllm_rank_params_deepseek(m, 8) + 2 * m.vocab_size * m.hidden_size // 8
    assert shard.weights_per_gpu == pytest.approx(expected, rel=1e-9)
    assert 0.010 < shard.weights_per_gpu / (weight_bytes(m, fp8) / 8) - 1 < 0.012   # the issue's +1.07%


# --------------------------------------------------------------------------------------------------
# 2. prefill: the LM head runs only at the positions being sampled
# --------------------------------------------------------------------------------------------------

def test_prefill_lm_head_only_at_sampled_positions():
    # Llama-3.1-8B: per layer q 4096x4096, k and v 4096x1024 each, o 4096x4096, MLP 3 x 4096 x 14336;
    # 32 layers; the untied LM head 128,256 x 4,096 runs once (the last prompt position, which vLLM's
    # V1 model runner selects with logits_indices before compute_logits).
    per_layer = 4096 * 4096 * 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336
    body = 32 * per_layer + (2 * 32 + 1) * 4096        # norms are counted as parameters, as elsewhere
    head = 128_256 * 4096
    m = CAT.model("llama-3.1-8b")
    assert prefill_matmul_flops(m, 2048) == 2 * body * 2048 + 2 * head * 1
    assert prefill_matmul_flops(m, 2048, sampled_positions=2048) == 2 * (body + head) * 2048
    # Tied embeddings (Qwen2.5-0.5B): the shared table is the LM head, charged once too.
    q = CAT.model("qwen2.5-0.5b")
    q_head = 151_936 * 896
    q_all = prefill_matmul_flops(q, 2048, sampled_positions=2048)
    assert q_all - prefill_matmul_flops(q, 2048) == 2 * q_head * 2047
    with pytest.raises(ValueError):
        prefill_matmul_flops(m, 16, sampled_positions=17)


# --------------------------------------------------------------------------------------------------
# 3. decode under TP pays two all-reduces per layer
# --------------------------------------------------------------------------------------------------

def test_allreduce_time_latency_plus_bandwidth():
    # 16 KiB over 4 GPUs, 8 us per call, 450 GB/s per direction: 8e-6 + 2 x 3/4 x 16384 / 450e9
    assert allreduce_time(16384, 4, 8e-6, 450e9) == pytest.approx(8e-6 + 1.5 * 16384 / 450e9)
    assert allreduce_time(16384, 1, 8e-6, 450e9) == 0.0


def test_tp_decode_bound_includes_allreduce():
    # Llama-3.1-70B FP8 at TP4 on H100 SXM, batch 1, 8K context: 80 layers x 2 all-reduces of
    # 8,192 x 2 bytes; per call the catalog latency plus ring bytes over one direction of NVLink.
    m, g, fp8 = CAT.model("llama-3.1-70b"), CAT.gpu("h100-sxm"), CAT.format("fp8")
    lat, bw = g.allreduce_latency_s, g.interconnect_bytes_per_s_per_direction
    assert lat is not None and 1e-6 <= lat <= 50e-6
    comm = 160 * (lat + 2 * 3 / 4 * 8192 * 2 / bw)
    assert tp_decode_allreduce_time(m, 1, 2, 4, lat, bw) == pytest.approx(comm)
    assert tp_decode_allreduce_time(m, 1, 2, 1, lat, bw) == 0.0
    read = weight_bytes_read_per_step(m, fp8, 1) / 4
    kv = kv_bytes_per_sequence(m, 8192, CAT.format("fp8")) / 4
    b = decode_bound(read, kv, 1, g.memory_bandwidth_bytes_per_s, comm_time_s=comm)
    assert b.step_time_s == pytest.approx((read + kv) / g.memory_bandwidth_bytes_per_s + comm)
    assert b.comm_time_s == comm
    assert 0.08 < comm / b.step_time_s < 0.25   # "about 15% of the step" in the issue


def test_every_nvidia_interconnect_has_a_sourced_latency():
    for g in CAT.gpus.values():
        if g.vendor == "nvidia":
            assert g.allreduce_latency_s, g.key
            assert str(g.extra.get("allreduce_latency_source", "")).startswith("https://"), g.key


# --------------------------------------------------------------------------------------------------
# 5. INT4 weight-only checkpoints keep the embedding and the LM head in 16-bit
# --------------------------------------------------------------------------------------------------

def test_awq_int4_llama_70b_checkpoint_size():
    # An AWQ (GEMM, group 128, zero point) checkpoint of Llama 3.1 70B, tensor by tensor:
    # every linear layer of in x out weights stores qweight int32 (in x out/8), qzeros int32
    # (in/128 x out/8) and scales FP16 (in/128 x out): in x out x (1/2 + 1/256 + 1/64) bytes.
    # embed_tokens, lm_head and the RMSNorm weights stay FP16 (AutoAWQ quantizes nn.Linear inside
    # the decoder layers only; vLLM's AWQ config quantizes LinearBase layers only).
    h, inter, layers, vocab = 8192, 28672, 80, 128_256
    linear = layers * (h * h * 2 + 2 * h * 1024 + 3 * h * inter)
    expected = linear * (0.5 + 1 / 256 + 1 / 64) + 2 * vocab * h * 2 + (2 * layers + 1) * h * 2
    m = CAT.model("llama-3.1-70b")
    got = weight_bytes(m, CAT.format("int4-g128-zp"))
    # Norms are counted in the format's bits (a rounding-level difference, < 0.01%).
    assert got == pytest.approx(expected, rel=1e-4)
    assert 39.7e9 < got < 39.9e9
    # GPTQ (symmetric, no zero point) keeps them in 16-bit too.
    gptq = weight_bytes(m, CAT.format("int4-g128"))
    assert gptq == pytest.approx(linear * (0.5 + 1 / 64) + 2 * vocab * h * 2, rel=1e-4)
    # Formats that do quantize the embeddings (GGUF block types) are unchanged.
    q40 = CAT.format("gguf-q4_k")
    assert weight_bytes(m, q40) == pytest.approx(70_553_706_496 * 4.5 / 8)


# --------------------------------------------------------------------------------------------------
# the worked examples show the new terms
# --------------------------------------------------------------------------------------------------

def test_worked_examples_show_the_corrections():
    from macros import units as U
    from macros.render import MACROS as R

    m, g, fp8 = CAT.model("llama-3.1-70b"), CAT.gpu("h100-sxm"), CAT.format("fp8")
    out = R["decode_speed"]("llama-3.1-70b", "h100-sxm", fmt="fp8", n_gpus=4, batch=1, context="8K", kv_dtype="fp8")
    comm = tp_decode_allreduce_time(m, 1, 2, 4, g.allreduce_latency_s, g.interconnect_bytes_per_s_per_direction)
    assert "all-reduces: 80 × 2 ×" in out and U.fmt_seconds(comm) in out
    assert "all-reduce" not in R["decode_speed"]("llama-3.1-8b", "h100-sxm", n_gpus=1)
    pre = R["prefill_time"]("llama-3.1-8b", "h100-sxm", tokens=2048)
    assert f"2 × {128_256 * 4096:,} × 1 =" in pre
    tp = R["tp_shards"]("llama-3.1-70b", n_gpus=16)
    assert "one whole K/V head per GPU" in tp
    w = R["weights"]("llama-3.1-70b", fmt="int4-g128-zp")
    assert U.fmt_gb(weight_bytes(m, CAT.format("int4-g128-zp"))) in w and "embeddings (bf16)" in w
    assert fp8.embedding_bits_per_weight == 16     # FP8 checkpoints keep embedding and lm_head in BF16 too
