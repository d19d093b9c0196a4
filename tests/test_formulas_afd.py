"""Attention-FFN disaggregation (macros/formulas/afd.py, macros/render/afd.py, Q157): each formula against
arithmetic done by hand from DeepSeek-V3's config.json and the H200's datasheet figures, the worked examples'
figures, and bad input named."""

from __future__ import annotations

import pytest

from macros.errors import MacroInputError
from macros.formulas import afd as AFD
from macros.render import MACROS

# DeepSeek-V3 config.json: hidden 7168, 128 heads, q_lora 1536, kv_lora 512, rope 64, nope 128, v 128,
# 256 routed experts (moe_intermediate 2048), top-8. H200: 4.8 TB/s, 1,979 TFLOPS FP8 and 989.5 BF16 dense.
_ATTN_PARAMS = (7168 * 1536 + 1536 + 1536 * 128 * (128 + 64) + 7168 * (512 + 64) + 512
                + 512 * 128 * (128 + 128) + 128 * 128 * 7168)
_EXPERT_PARAMS = 3 * 7168 * 2048
_HBM, _FP8, _BF16 = 4.8e12, 1979e12, 989.5e12


def test_attention_params_by_hand():
    assert _ATTN_PARAMS == 187_107_328


def test_pair_flops_mla_and_gqa():
    # MLA absorbed: scores over 512 + 64 latent+rope dims, values over the 512 latent: 2 x 128 x 1088
    assert AFD.decode_attention_pair_flops(128, 576, 512) == 278_528
    # GQA: the KV head count does not enter; 64 query heads of 128: 2 x 64 x 256
    assert AFD.decode_attention_pair_flops(64, 128, 128) == 32_768


def test_attention_layer_by_hand():
    a = AFD.attention_layer(64, 4096, _ATTN_PARAMS, 1152, _ATTN_PARAMS, 278_528, _HBM, _FP8, _BF16)
    assert a.weight_read_s == pytest.approx(187_107_328 / 4.8e12)
    assert a.kv_read_s == pytest.approx(64 * 4096 * 1152 / 4.8e12)          # 62.9 us
    assert a.compute_s == pytest.approx(64 * 2 * 187_107_328 / 1979e12 + 64 * 4096 * 278_528 / 989.5e12)
    assert a.time_s == pytest.approx(a.read_s) and not a.compute_bound     # 101.9 us of reads > 85.9 us
    # at 16K the context terms dominate: 278,528 FLOPs per 1,152 bytes (242 per byte) is above the BF16
    # ridge (989.5 / 4.8 = 206), so the layer turns compute-bound even over a BF16 cache
    long = AFD.attention_layer(64, 16384, _ATTN_PARAMS, 1152, _ATTN_PARAMS, 278_528, _HBM, _FP8, _BF16)
    assert long.kv_read_s == pytest.approx(4 * a.kv_read_s)
    assert long.compute_bound
    # an FP8 cache halves the reads but not the score FLOPs: compute-bound
    fp8 = AFD.attention_layer(64, 4096, _ATTN_PARAMS, 576, _ATTN_PARAMS, 278_528, _HBM, _FP8, _BF16)
    assert fp8.compute_bound and fp8.time_s == pytest.approx(fp8.compute_s)


def test_expert_work_by_hand():
    w = AFD.expert_work(512, 8, 256, _EXPERT_PARAMS, _EXPERT_PARAMS, _HBM, _FP8)
    assert w.read_gpu_s == pytest.approx(256 * 44_040_192 / 4.8e12)        # 2.35 ms
    assert w.compute_gpu_s == pytest.approx(512 * 8 * 2 * 44_040_192 / 1979e12)  # 182 us
    assert not w.compute_bound and w.gpu_s == w.read_gpu_s
    # FLOPs pass the reads at tokens = 256 x 1979 / (4.8 x 16) ~ 6,597
    assert not AFD.expert_work(6590, 8, 256, _EXPERT_PARAMS, _EXPERT_PARAMS, _HBM, _FP8).compute_bound
    assert AFD.expert_work(6600, 8, 256, _EXPERT_PARAMS, _EXPERT_PARAMS, _HBM, _FP8).compute_bound


def test_balanced_ffn_gpus():
    assert AFD.balanced_ffn_gpus(2.4e-3, 1.0e-4) == pytest.approx(24.0)


def test_distinct_ffn_gpus_by_hand():
    # a GPU with 16 of 256 experts is missed when all 8 picks fall in the other 240
    miss = 1.0
    for i in range(8):
        miss *= (240 - i) / (256 - i)
    assert AFD.distinct_ffn_gpus(256, 8, 16) == pytest.approx(16 * (1 - miss))
    assert AFD.distinct_ffn_gpus(256, 8, 1) == pytest.approx(1.0)          # one GPU holds everything
    assert AFD.distinct_ffn_gpus(256, 8, 256) == pytest.approx(8.0)        # one expert per GPU: k GPUs
    assert 6.4 < AFD.distinct_ffn_gpus(256, 8, 16) < 6.6


def test_split_bytes_per_token():
    assert AFD.split_bytes_per_token(7168, 1, 1, 128) == 7168 + 56 * 4     # FP8 + 56 float32 scales
    assert AFD.split_bytes_per_token(7168, 2) == 14_336                    # BF16 back
    assert AFD.split_bytes_per_token(7168, 2, 3.5) == pytest.approx(3.5 * 14_336)


def test_ping_pong_micro_batches():
    # round = attention + experts + out + back; the slowest stage takes one micro-batch per its own time
    assert AFD.ping_pong_micro_batches(1.0, 1.0, 0.0, 0.0) == 2            # 2 / 1: the two halves alternate
    assert AFD.ping_pong_micro_batches(1.0, 1.0, 0.5, 0.5) == 3            # 3 / 1 = MegaScale's 2 x (1 + 0.5)
    assert AFD.ping_pong_micro_batches(1.0, 1.0, 1.0, 1.0) == 4            # 4 / 1
    # unbalanced: only the slower side can be kept busy; 3 / 2 = 1.5, so the floor of 2 holds
    assert AFD.ping_pong_micro_batches(1.0, 2.0, 0.0, 0.0) == 2
    # 200 + 100 + 40 + 40 = 380 over the slowest 200: 1.9 -> 2 (a faster-side bound would ask for 4)
    assert AFD.ping_pong_micro_batches(200.0, 100.0, 40.0, 40.0) == 2
    # out and back counted apart: 1 + 1 + 0.2 + 0.6 = 2.8 -> 3 (twice the longer direction would give 3.2 -> 4)
    assert AFD.ping_pong_micro_batches(1.0, 1.0, 0.2, 0.6) == 3
    # link-bound: 1 + 1 + 1.5 + 3 = 6.5 over the 3 of the return: 2.17 -> 3
    assert AFD.ping_pong_micro_batches(1.0, 1.0, 1.5, 3.0) == 3


def test_attention_busy_share():
    # 200 / 100 / 40 / 40: one micro-batch keeps attention busy 200 of the 380 round; two fill it
    assert AFD.attention_busy_share(200.0, 100.0, 40.0, 40.0, 1) == pytest.approx(200 / 380)
    assert AFD.attention_busy_share(200.0, 100.0, 40.0, 40.0, 2) == pytest.approx(1.0)
    # the return link (3) is the slowest stage: attention computes 1 in every 3 however many micro-batches
    assert AFD.attention_busy_share(1.0, 1.0, 1.5, 3.0, 2) == pytest.approx(2 / 6.5)
    assert AFD.attention_busy_share(1.0, 1.0, 1.5, 3.0, 3) == pytest.approx(1 / 3)
    assert AFD.attention_busy_share(1.0, 1.0, 1.5, 3.0, 10) == pytest.approx(1 / 3)
    # experts slower than attention: attention busy 1 / 2 at best
    assert AFD.attention_busy_share(1.0, 2.0, 0.0, 0.0, 5) == pytest.approx(0.5)


@pytest.mark.parametrize("call, match", [
    (lambda: AFD.decode_attention_pair_flops(0, 1, 1), "num_heads"),
    (lambda: AFD.attention_layer(0, 1, 1, 1, 1, 1, 1, 1, 1), "batch"),
    (lambda: AFD.expert_work(1, 9, 8, 1, 1, 1, 1), "top_k 9 exceeds"),
    (lambda: AFD.distinct_ffn_gpus(256, 8, 3), "do not divide"),
    (lambda: AFD.split_bytes_per_token(7168, 0), "element_bytes"),
    (lambda: AFD.ping_pong_micro_batches(1, 1, -1, 0), "out_s"),
    (lambda: AFD.ping_pong_micro_batches(1, 1, 0, -1), "back_s"),
    (lambda: AFD.attention_busy_share(1, 1, 0, 0, 0), "micro_batches"),
    (lambda: AFD.balanced_ffn_gpus(1, 0), "attention_s"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_ratio_example_figures():
    html = MACROS["afd_ratio"](model="deepseek-v3", attn_gpu="h200-sxm", ffn_gpu="h200-sxm", batch=64,
                               context=4096, attn_gpus=[8, 128])
    assert "187.11M / 128" in html and "278,528" in html
    assert "101.9 µs" in html and "memory-bound" in html                  # 39.0 + 62.9 us of reads
    assert "| 8 | 512 | 2.35 ms | 182.3 µs | 2.35 ms (reads) | 23.1 |" in html
    assert "| 128 | 8,192 |" in html and "(FLOPs)" in html


def test_traffic_example_figures():
    html = MACROS["afd_traffic"](model="deepseek-v3", attn_gpu="h200-sxm", ffn_gpu="h200-sxm", batch=128,
                                 context=4096, attn_gpus=16, ffn_gpus=16, links_gb_per_s=[40, 100])
    assert "7,392 bytes" in html and "14,336 bytes" in html
    assert "6.52 of 16" in html
    # out 48,220 B and back 93,518 B per token, x 128 tokens: at 40 GB/s 154.3 us out and 299.3 us back, above
    # attention (171.8 us) and experts (146.8 us). m >= (171.8 + 146.8 + 154.3 + 299.3) / 299.3 = 2.58 -> 3;
    # attention busy 171.8 / 299.3 = 57.4% whatever m. At 100 GB/s: 61.7 / 119.7 us; 500.0 / 171.8 = 2.91 -> 3.
    # Memory at m = 3: KV 61 layers x 1,152 B x 4,096 = 287.8 MB per sequence x 384 = 110.5 GB, plus attention
    # weights 187,107,328 x 61 layers x 1 byte = 11.4 GB: 121.9 GB of 150.8 GB
    assert "| 40 GB/s (given) | 154.3 µs / 299.3 µs | link back | 3 | 57.4% | 121.9 GB" in html
    assert "| 100 GB/s (given) | 61.7 µs / 119.7 µs | attention | 3 | 100.0% | 121.9 GB" in html
    assert "(fits)" in html and "does not fit" not in html
    assert "59,136 bytes" in html                                          # per-expert dispatch: 8 x 7,392
    # at 16K context a sequence holds 4 x 287.8 MB = 1.15 GB: 128 of them (147.4 GB) per micro-batch, and m >= 2
    long = MACROS["afd_traffic"](model="deepseek-v3", attn_gpu="h200-sxm", ffn_gpu="h200-sxm", batch=128,
                                 context=16384, attn_gpus=16, ffn_gpus=16, links_gb_per_s=[40])
    assert "does not fit" in long and "(fits)" not in long
    assert "NVLink, one node" in html                                      # the catalog's H200 NVLink row


def test_attention_intensity_macro():
    # 278,528 FLOPs over 1,152 bytes (BF16 latent + rope) and over 576 bytes (FP8)
    assert MACROS["afd_attention_intensity"](model="deepseek-v3", kv_dtype="bf16") == "241.8 FLOP/byte"
    assert MACROS["afd_attention_intensity"](model="deepseek-v3", kv_dtype="fp8") == "483.6 FLOP/byte"
    # Llama 3.1 70B: 2 x 64 x 256 FLOPs over 8 x 128 x 2 x 2 bytes = 32,768 / 4,096 = 8
    assert MACROS["afd_attention_intensity"](model="llama-3.1-70b", kv_dtype="bf16") == "8 FLOP/byte"


def test_macros_reject_a_dense_model_and_uneven_experts():
    with pytest.raises(MacroInputError, match="dense model"):
        MACROS["afd_ratio"](model="llama-3.1-70b", attn_gpu="h200-sxm", ffn_gpu="h200-sxm", batch=8, context=1024,
                            attn_gpus=[8])
    with pytest.raises((MacroInputError, ValueError), match="divide"):
        MACROS["afd_traffic"](model="deepseek-v3", attn_gpu="h200-sxm", ffn_gpu="h200-sxm", batch=64, context=4096,
                              attn_gpus=32, ffn_gpus=24, links_gb_per_s=[40])
