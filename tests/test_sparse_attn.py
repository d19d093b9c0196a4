"""DSA sparse attention (macros/formulas/sparse_attn.py, macros/render/sparse_attn.py): the cache row layouts,
one decode step's reads and FLOPs, and reload traffic, against hand arithmetic from the engines' layouts."""

from __future__ import annotations

import pytest

from macros.errors import MacroInputError
from macros.formulas import sparse_attn as S
from macros.render import MACROS
from macros.render.inputs import cat


def test_row_layouts_by_hand():
    # DeepSeek-V3.2 in vLLM 0.33.0's flashmla_sparse.py comment: 512 FP8 bytes + 4 FP32 scales + 64 BF16 = 656.
    assert S.mla_row_bytes(512, 64, "fp8_ds_mla") == 512 + 16 + 128 == 656
    # nvfp4_ds_mla: 256 bytes of packed E2M1 + 64 FP8 RoPE bytes + 32 E4M3 scales = 352.
    assert S.mla_row_bytes(512, 64, "nvfp4_ds_mla") == 256 + 64 + 32 == 352
    assert S.mla_row_bytes(512, 64, "bf16") == 1152
    assert S.mla_row_bytes(512, 64, "fp8_raw") == 576
    # The indexer key: 128 FP8 bytes + one FP32 scale (vLLM's head_dim + head_dim // 128 * 4).
    assert S.indexer_row_bytes(128) == 132
    assert S.indexer_row_bytes(128, "bf16") == 256


@pytest.mark.parametrize("call", [
    lambda: S.mla_row_bytes(500, 64, "fp8_ds_mla"), lambda: S.mla_row_bytes(520, 64, "nvfp4_ds_mla"),
    lambda: S.mla_row_bytes(512, 64, "int4"), lambda: S.mla_row_bytes(0, 64, "bf16"),
    lambda: S.indexer_row_bytes(100), lambda: S.indexer_row_bytes(128, "mxfp4"),
    lambda: S.reload_bytes_per_step(2048, 656, 61, 1.5), lambda: S.reload_bytes_per_step(2048, 656, 61, -0.1),
    lambda: S.dsa_step(0, 2048, 61, 656, 132, 128, 512, 64, 64, 128),
])
def test_bad_inputs_raise(call):
    with pytest.raises(ValueError):
        call()


def test_decode_step_by_hand():
    # 131,072 tokens, one layer: full reads 131,072 x 656; DSA reads 131,072 x 132 + 2,048 x 656.
    s = S.dsa_step(131072, 2048, 1, 656, 132, 128, 512, 64, 64, 128)
    assert s.attended == 2048
    assert s.full_read == 85_983_232
    assert s.dsa_read == 17_301_504 + 1_343_488
    # FLOPs per attended token: 2 x 128 heads x (576 + 512) = 278,528; per scored token 2 x 64 x 128 = 16,384.
    assert s.full_flops == 131072 * 278_528
    assert s.dsa_flops == 131072 * 16_384 + 2048 * 278_528
    # Below top-k every token is attended and the indexer only adds work.
    short = S.dsa_step(1000, 2048, 61, 656, 132, 128, 512, 64, 64, 128)
    assert short.attended == 1000 and short.dsa_read > short.full_read and short.dsa_flops > short.full_flops


def test_reload_by_hand():
    # 61 layers x 2,048 rows x 656 bytes = 81,952,768 bytes per sequence with nothing reused.
    assert S.reload_bytes_per_step(2048, 656, 61, 1) == 81_952_768
    assert S.reload_bytes_per_step(2048, 656, 61, 0.25) == pytest.approx(20_488_192)
    assert S.reload_bytes_per_step(2048, 656, 61, 0) == 0


def test_indexer_entry_matches_its_base_model():
    d = S.DSA_INDEXERS["deepseek-v3.2"]
    m = cat().model(d.base_model)
    shape = (m.num_hidden_layers, m.mla.kv_lora_rank, m.mla.qk_rope_head_dim, m.num_attention_heads)
    assert shape == (61, 512, 64, 128)
    assert d.source.startswith("https://huggingface.co/deepseek-ai/")


def test_macros_render_the_hand_figures():
    assert MACROS["dsa_row_bytes"]("fp8_ds_mla") == "656 bytes"
    assert MACROS["dsa_index_row_bytes"]() == "132 bytes"
    assert MACROS["dsa_field"]("index_topk") == "2,048"
    out = MACROS["dsa_cache_bytes"](context="128K")
    # (656 + 132) x 61 = 48,068 bytes per token; 10^9 / 48,068 = 20,804 tokens per GB; without the indexer
    # 10^9 / (656 x 61) = 24,990.
    assert "48,068 bytes" in out and "| 20,804 |" in out and "24,990 tokens per GB" in out
    assert "16.8%" in out   # 132 / 788
    step = MACROS["dsa_decode_step"](contexts=["2K", "128K"])
    assert "| 2K |" in step and "| 128K |" in step
    off = MACROS["dsa_offload"](context="128K", batch=16, host_gb_per_s=50, miss_fractions=[1, 0.25])
    # 16 x 81,952,768 = 1.311 GB per step; at 50 GB/s: 26.2 ms.
    assert "1.31 GB" in off and "26.2 ms" in off


@pytest.mark.parametrize("call", [
    lambda: MACROS["dsa_cache_bytes"](context="128K", dsa="deepseek-v9"),
    lambda: MACROS["dsa_row_bytes"]("fp2"),
    lambda: MACROS["dsa_field"]("index_foo"),
    lambda: MACROS["dsa_offload"](context="8K", batch=1, host_gb_per_s=50, miss_fractions=[2]),
])
def test_macro_errors_name_the_input(call):
    with pytest.raises(MacroInputError):
        call()
