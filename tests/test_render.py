"""Worked examples and reference tables checked by hand: figures, links, errors.

What holds for every macro (its example renders, the wrapper, GB with GiB, MACROS.md) is in
test_render_registry.py."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest

from macros.catalog import load_catalog
from macros.errors import MacroInputError
from macros.render import MACROS, catalog_href

from render_support import block_outputs

ROOT = Path(__file__).resolve().parents[1]
CAT = load_catalog()
MD_EXTENSIONS = ["attr_list", "md_in_html", "tables", "toc", "pymdownx.blocks.details", "pymdownx.superfences"]

def test_kv_cache_example_numbers_units_and_links():
    out = MACROS["kv_cache"]("llama-3.1-70b", batch=32, context=8192, kv_dtype="bf16")
    # 2 x 80 x 8 x 128 x 2 bytes x 32 x 8192 = 85,899,345,920 bytes = 85.9 GB = 80 GiB (hand arithmetic)
    assert "85,899,345,920 bytes" in out
    assert "85.9 GB (80.0 GiB)" in out
    assert "[Llama-3.1-70B](/reference/models.md#model-llama-3-1-70b)" in out
    assert "(/reference/formats.md#format-bf16)" in out
    assert re.search(r"gives 687\.2 GB \(640\.0 GiB\), 8(\.00)?× the correct figure", out)  # 64 / 8 heads


def test_llama2_naive_contrast_figures():
    # Issue figures: Llama-2-70B, 2,048 tokens x 32, FP16: naive ~171.8 GB, GQA ~21.5 GB.
    out = MACROS["kv_cache"]("llama-2-70b", batch=32, context=2048, kv_dtype="bf16")
    assert "21.5 GB (20.0 GiB)" in out and "171.8 GB (160.0 GiB)" in out


def test_inline_values():
    # 327,680 bytes = 320 KiB (required figure); DeepSeek-V3 MLA 61 x 576 x 2 = 70,272 bytes.
    assert MACROS["kv_token_bytes"]("llama-3.1-70b", "bf16") == "327,680 bytes (320 KiB)"
    assert MACROS["kv_token_bytes"]("deepseek-v3", kv_dtype="fp8") == "35,136 bytes (34.31 KiB)"
    assert MACROS["weight_gb"]("llama-3.1-70b") == "141.1 GB (131.4 GiB)"  # 70,553,706,496 x 2 bytes
    # H100 SXM: nvidia-smi total 81559 MiB (github.com/wilicc/gpu-burn/issues/114);
    # 81559 x 1,048,576 = 85,520,809,984 bytes = 85.5 GB = 79.65 GiB (hand arithmetic).
    assert MACROS["gpu_memory"]("h100-sxm") == "85.5 GB (79.6 GiB)"
    # RTX 5090: CUDA total 32,123 MiB x 1,048,576 = 33,683,406,848 bytes = 33.7 GB = 31.37 GiB
    # (PyTorch's OOM message, github.com/Wan-Video/Wan2.1/issues/465), below nvidia-smi's 32607 MiB.
    assert MACROS["gpu_cuda_memory"]("rtx-5090") == "33.7 GB (31.4 GiB)"
    assert MACROS["gpu_memory"]("rtx-5090") == "34.2 GB (31.8 GiB)"
    assert MACROS["gpu_memory_label"]("rtx-5090") == "32 GB GDDR7"
    assert MACROS["model_field"]("llama-3.1-70b", "num_key_value_heads") == "8"
    assert MACROS["model_field"]("deepseek-v3", "mla.kv_lora_rank") == "512"
    assert MACROS["valid_tp"]("qwen2.5-7b") == "1, 2, 4"
    assert MACROS["spec_tokens"](0.8, 4) == "3.36"  # (1 - 0.8^5) / 0.2 = 3.3616
    assert MACROS["format_bits"]("int4-g128") == "4.125 bits"
    assert MACROS["model_link"]("llama-3.1-70b") == "[Llama-3.1-70B](/reference/models.md#model-llama-3-1-70b)"
    assert MACROS["kv_cache_gb"]("llama-3.1-70b", batch=32, context="8K") == "85.9 GB (80.0 GiB)"


def test_catalog_href():
    assert catalog_href("model", "llama-3.1-70b") == "/reference/models.md#model-llama-3-1-70b"
    assert catalog_href("gpu", "h100-sxm") == "/reference/gpus.md#gpu-h100-sxm"
    assert catalog_href("format", "int4-g128") == "/reference/formats.md#format-int4-g128"


# --------------------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------------------

def test_unknown_model_lists_valid_models():
    with pytest.raises(MacroInputError) as info:
        MACROS["kv_cache"]("llama-70b", batch=1, context=1024)
    msg = str(info.value)
    assert "unknown model 'llama-70b'" in msg and "valid models:" in msg
    for key in CAT.models:
        assert key in msg
    assert isinstance(info.value, ValueError)


def test_unknown_gpu_and_format():
    with pytest.raises(MacroInputError, match="valid GPUs: .*h100-sxm"):
        MACROS["memory_budget"]("llama-3.1-70b", "h100")
    with pytest.raises(MacroInputError, match="valid formats: .*int4-g128"):
        MACROS["weights"]("llama-3.1-70b", fmt="int4")


def test_kv_dtype_marked_false_is_refused_with_valid_choices():
    with pytest.raises(MacroInputError) as info:
        MACROS["kv_cache"]("llama-3.1-70b", kv_dtype="int4-g128")
    msg = str(info.value)
    assert "kv_cache: false" in msg and "valid KV dtypes:" in msg and "bf16" in msg and "fp8" in msg


def test_tp_that_does_not_divide_heads():
    with pytest.raises(MacroInputError) as info:
        MACROS["memory_budget"]("qwen2.5-7b", "h100-sxm", n_gpus=8)
    msg = str(info.value)
    assert "28" in msg and "valid TP degrees" in msg and "1, 2, 4" in msg
    with pytest.raises(MacroInputError):
        MACROS["tp_shards"]("qwen2.5-7b", n_gpus=8)


@pytest.mark.parametrize("call", [
    lambda: MACROS["kv_cache"]("llama-3.1-70b", batch=-1),
    lambda: MACROS["kv_cache"]("llama-3.1-70b", context=-8192),
    lambda: MACROS["kv_cache"]("llama-3.1-70b", context="lots"),
    lambda: MACROS["memory_budget"]("llama-3.1-70b", "h100-sxm", gpu_util=1.5),
    lambda: MACROS["replicas"](-5, 100),
    lambda: MACROS["hpa"](0, 90, 75),
    lambda: MACROS["spec_decode"](acceptance_rate=1.5),
    lambda: MACROS["littles_law"](concurrency=3),
    lambda: MACROS["ep_all_to_all"]("llama-3.1-70b"),
    lambda: MACROS["prefill_time"]("llama-3.1-70b", "a100-80gb-sxm", fmt="fp8"),
    lambda: MACROS["cost_per_million"]("l40s", tokens_per_s=1000),
    lambda: MACROS["kv_transfer"]("llama-3.1-70b"),
    lambda: MACROS["model_field"]("llama-3.1-70b", "nope"),
])
def test_bad_input_raises_macro_input_error(call):
    with pytest.raises(MacroInputError):
        call()


def test_a_model_that_does_not_fit_says_so():
    # Llama-3.1-405B in BF16 (405.85e9 x 2 = 811.7 GB = 756.0 GiB) cannot fit one 80 GiB GPU.
    out = MACROS["memory_budget"]("llama-3.1-405b", "h100-sxm", fmt="bf16", n_gpus=1)
    assert "does not load: the weights need 756.0 GiB per GPU, the engine may use 72.9 GiB" in out


# --------------------------------------------------------------------------------------------------
# reference pages
# --------------------------------------------------------------------------------------------------

def _ids(md_text: str) -> set[str]:
    html = markdown.Markdown(extensions=MD_EXTENSIONS).convert(md_text)
    return set(re.findall(r'id="([^"]+)"', html))


def test_reference_pages_carry_an_anchor_for_every_entry():
    ids = _ids(MACROS["model_catalog"]())
    assert {"model-" + k.replace(".", "-") for k in CAT.models} <= ids
    assert "model-llama-3-1-70b" in ids
    ids = _ids(MACROS["gpu_catalog"]())
    assert {"gpu-" + k for k in CAT.gpus} <= ids
    ids = _ids(MACROS["format_catalog"]())
    assert {"format-" + k for k in CAT.formats} <= ids
    ids = _ids(MACROS["price_table"]())
    assert {"price-" + k for k in CAT.prices.gpu_hour} <= ids
    assert {"api-" + k.replace(".", "-") for k in CAT.prices.api} <= ids


def test_every_link_in_examples_points_at_an_existing_anchor():
    anchors = (_ids(MACROS["model_catalog"]()) | _ids(MACROS["gpu_catalog"]()) | _ids(MACROS["format_catalog"]())
               | _ids(MACROS["price_table"]()))
    checked = 0
    for name, out in block_outputs().items():
        for target in re.findall(r"\]\((/reference/[^)#]+\.md)#([^)]+)\)", out):
            assert target[1] in anchors, (name, target)
            checked += 1
    assert checked > 50


def test_model_catalog_contents():
    out = MACROS["model_catalog"]()
    # Llama-3.1-70B: computed 70,553,706,496 (hand arithmetic in test_formulas_params) vs stated 70B.
    assert "70,553,706,496" in out
    assert "327,680 bytes (320 KiB)" in out          # KV per token BF16
    assert "163,840 bytes (160 KiB)" in out          # and FP8
    assert "141.1 GB (131.4 GiB)" in out             # BF16 weights
    for kind in ("BF16", "FP8", "INT4"):
        assert kind in out


def test_what_fits_cells():
    out = MACROS["what_fits"](models=["llama-3.1-70b", "qwen2.5-7b"], gpus=["h100-sxm"])
    llama = out.split("## Qwen2.5-7B")[0]
    qwen = out.split("## Qwen2.5-7B")[1]
    # 141.1 GB of BF16 weights > 0.9 x 85.9 GB on one GPU: does not fit; on 8 GPUs it does.
    one_gpu = next(line for line in llama.splitlines() if "| 1 |" in line)
    assert one_gpu.split("|")[3].strip().startswith("✗")
    eight = next(line for line in llama.splitlines() if "| 8 |" in line)
    assert all(c.strip().startswith("✓") for c in eight.split("|")[3:6])
    # Qwen2.5-7B has 28 heads: TP 8 is invalid.
    q8 = next(line for line in qwen.splitlines() if "| 8 |" in line)
    assert "TP invalid" in q8
    assert "Assumptions" in out


def test_catalog_free_text_is_escaped():
    # The A100 note quotes the datasheet's "... 624 TFLOPS*" twice; unescaped, Markdown would italicize
    # the text between the two asterisks.
    assert "TFLOPS*" in (CAT.gpu("a100-80gb-sxm").notes or "")
    html = markdown.Markdown(extensions=MD_EXTENSIONS).convert(MACROS["gpu_catalog"]())
    assert "<em>" not in html
    assert "624 TFLOPS*" in html


def test_weights_of_a_dense_model_show_no_expert_rows():
    # Llama-3.1-70B is dense: an AWQ-style layout (INT4 body, BF16 embeddings) has no routed experts, so
    # the example must not print an "experts" input or step.
    out = MACROS["weights"]("llama-3.1-70b", "int4-g128", embed_fmt="bf16")
    assert "expert" not in out.lower()
    assert "bits per weight, embeddings (bf16)" in out
    with pytest.raises(MacroInputError, match="MoE"):
        MACROS["weights"]("llama-3.1-70b", "int4-g128", expert_fmt="mxfp4")
    # an MoE mix still lists its experts
    assert "bits per weight, experts (mxfp4)" in MACROS["weights"]("gpt-oss-120b", "bf16", expert_fmt="mxfp4")


def test_paged_tail_waste_example_by_hand():
    # Llama-3.1-8B BF16: 131,072 bytes per token (32 layers x 8 KV heads x 128 x 2 x 2).
    # 16-token blocks, 256 sequences: worst 256 x 15 x 131,072 = 503,316,480 bytes = 0.503 GB;
    # average 256 x 7.5 x 131,072 = 251,658,240 bytes = 0.252 GB.
    out = MACROS["paged_tail_waste"]("llama-3.1-8b", block_size=16, kv_dtype="bf16", sequences=256)
    assert "0.503 GB" in out and "0.252 GB" in out
    assert "15 tokens × 131,072 bytes" in out


def test_zone_replicas_example_by_hand():
    # 20,000 req/s, 400 per replica at 70%: N+1 = ceil(20000 / 280) + 1 = 72 + 1 = 73.
    # Three zones, one lost: ceil(10,000 / 280) = 36 per zone, 108 in total; 108 / 73 = 1.48.
    out = MACROS["zone_replicas"](20000, 400, zones=3, target_util=0.7)
    assert "36 replicas per zone, 108 in total" in out
    assert "against 73 for N+1" in out and "1.48×" in out
    with pytest.raises(MacroInputError, match="zones"):
        MACROS["zone_replicas"](20000, 400, zones=1)


def test_gemm_intensity_prefill_chunk_vs_decode_step_by_hand():
    # k = n = 8,192, BF16 (2 bytes each for input, weight and output), H100 SXM ridge 989.5e12 / 3.35e12.
    # Prefill chunk m = 4,096: 2 x 4096 x 8192^2 = 5.4976e11 FLOPs over
    # 2 x (4096 x 8192 x 2 + 8192^2) = 268,435,456 bytes -> exactly 2,048 FLOP/byte: compute-bound.
    out = MACROS["gemm_intensity"]("h100-sxm", m=4096, k=8192, n=8192)
    assert "268,435,456 bytes" in out and "= 2,048 FLOP/byte" in out
    assert "compute-bound: 2,048 vs a ridge of 295.4" in out
    # time = max(5.4976e11 / 989.5e12 = 555.6 us, 268,435,456 / 3.35e12 = 80.1 us)
    assert "555.6 µs" in out and "80.1 µs" in out
    # m* = 295.37 x 2 x 8192^2 / (2 x 8192^2 - 295.37 x 2 x 16384) = 318.3 -> 319
    assert "m ≈ 319 tokens" in out
    # Decode step m = 32: 32 x 8192 / (8192 + 64) = 31.75 FLOP/byte, memory-bound; the time is the bytes:
    # 2 x (2 x 32 x 8192 + 8192^2) = 135,266,304 bytes / 3.35e12 = 40.4 us.
    dec = MACROS["gemm_intensity"]("h100-sxm", m=32, k=8192, n=8192)
    assert "135,266,304 bytes" in dec and "memory-bound: 31.8 vs a ridge of 295.4" in dec
    assert "40.4 µs" in dec


def test_gemm_intensity_formats():
    # INT4-g128 weights (0.515625 bytes) with BF16 activations, m = 1, k = n = 8,192:
    # 2 x 8192^2 / (2 x 2 x 8192 + 0.515625 x 8192^2) = 134,217,728 / 34,635,776 = 3.875 FLOP/byte.
    out = MACROS["gemm_intensity"]("h100-sxm", m=1, k=8192, n=8192, fmt="int4-g128")
    assert "34,635,776 bytes" in out and "3.88 FLOP/byte" in out and "(dense BF16)" in out
    # FP8 (W8A8) on H100 uses the 1,979 TFLOPS dense FP8 peak: ridge 1979e12 / 3.35e12 = 590.7.
    fp8 = MACROS["gemm_intensity"]("h100-sxm", m=4096, k=8192, n=8192, fmt="fp8")
    assert "(dense FP8)" in fp8 and "590.7 FLOP/byte" in fp8
    with pytest.raises(MacroInputError, match="FP8"):
        MACROS["gemm_intensity"]("a100-80gb-sxm", m=4096, k=8192, n=8192, fmt="fp8")
    with pytest.raises(MacroInputError, match="fp32"):
        MACROS["gemm_intensity"]("h100-sxm", m=1, k=8192, n=8192, fmt="fp32")
    with pytest.raises(MacroInputError):
        MACROS["gemm_intensity"]("h100-sxm", m=0, k=8192, n=8192)


def test_gemm_intensity_shape_that_never_reaches_the_ridge():
    # k = n = 256 in BF16: the limit 2 x 256^2 / (2 x 512) = 128 FLOP/byte stays below H100's 295.4.
    out = MACROS["gemm_intensity"]("h100-sxm", m=65536, k=256, n=256)
    assert "no m makes this 256 × 256 shape compute-bound" in out


def test_deferred_block_renders_its_markdown_with_a_placeholder_height():
    from macros.render.blocks import deferred_block
    html = markdown.markdown(deferred_block("| a | b |\n| --- | --- |\n| 1 | 2 |", 9.6, classes="x y",
                                            attrs='data-k="v"'), extensions=MD_EXTENSIONS)
    assert re.search(r'<div class="msib-deferred x y" data-k="v" style="contain-intrinsic-size: auto 10rem">\s*<table>',
                     html), html
    assert "<td>2</td>" in html
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="height_rem"):
            deferred_block("text", bad)


def test_integer_rates_are_tops_and_ops_not_flops():
    # A100 datasheet: INT8 Tensor Core 624 TOPS dense; 624e12 / 2.039e12 B/s = 306.0 op/byte.
    ai = MACROS["arithmetic_intensity"]("a100-80gb-sxm", batch=64, fmt="int8")
    assert "| peak (dense INT8) | 624 TOPS |" in ai and "306.0 op/byte" in ai
    assert "TFLOPS" not in ai and "FLOP/byte" not in ai
    gemm = MACROS["gemm_intensity"]("a100-80gb-sxm", m=64, k=4096, n=4096, fmt="int8")
    assert "624 TOPS" in gemm and "TFLOPS" not in gemm and "FLOP/byte" not in gemm
    assert MACROS["gpu_flops"]("a100-80gb-sxm", "int8") == "624 TOPS"
    assert MACROS["ridge_point"]("a100-80gb-sxm", "int8") == "306.0 op/byte"
    # Floating-point formats keep TFLOPS and FLOP/byte (H100 dense BF16 989.5 TFLOPS / 3.35 TB/s).
    assert MACROS["gpu_flops"]("h100-sxm", "bf16") == "989.5 TFLOPS"
    assert MACROS["ridge_point"]("h100-sxm") == "295.4 FLOP/byte"
    pre = MACROS["prefill_time"]("llama-3.1-8b", "a100-80gb-sxm", tokens=4096, fmt="int8")
    assert "624 TOPS" in pre and "TFLOPS" not in pre


# ---------------------------------------------------------------------------------------------- no silent zeros

def test_max_seqs_says_the_model_does_not_load_instead_of_zero():
    # Llama-3.1-70B in BF16: 70,553,706,496 x 2 bytes = 131.4 GiB on one H100, whose CUDA total is
    # 85,045,477,376 bytes; x 0.92 (vLLM 0.33's default --gpu-memory-utilization) = 72.9 GiB.
    w, usable = 70_553_706_496 * 2 / 2**30, 85_045_477_376 * 0.92 / 2**30
    out = MACROS["max_seqs"]("llama-3.1-70b", "h100-sxm")
    assert out == f"does not load: the weights need {w:.1f} GiB per GPU, the engine may use {usable:.1f} GiB"
    assert MACROS["max_context"]("llama-3.1-70b", "h100-sxm") == out


def test_max_seqs_says_one_sequence_does_not_fit_instead_of_zero():
    # FP8 weights (1 byte per parameter, the 2,101,346,304 embedding + lm_head parameters kept at
    # 2 bytes) = 72,655,052,800 bytes = 67.7 GiB load (72.9 - 67.7 - 3 GiB of allowances = 2.2 GiB
    # of KV), but one 8K sequence holds 8,192 x 327,680 bytes = 2.5 GiB of KV.
    out = MACROS["max_seqs"]("llama-3.1-70b", "h100-sxm", fmt="fp8")
    budget = (85_045_477_376 * 0.92 - (70_553_706_496 + 2_101_346_304)) / 2**30 - 3
    assert out == (f"one sequence of 8,192 tokens does not fit: it needs 2.50 GiB of KV cache per GPU, "
                   f"the KV budget is {budget:.2f} GiB")
    assert re.fullmatch(r"[1-9][\d,]*", MACROS["max_seqs"]("llama-3.1-70b", "h100-sxm", fmt="fp8", n_gpus=2))
