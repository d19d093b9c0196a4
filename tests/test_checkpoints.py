"""Checkpoints as shipped (macros/catalog/checkpoints.yaml, macros/formulas/checkpoint.py): per-module
formats from the quantization_config, and the bytes vLLM allocates, against published start-up logs."""

from __future__ import annotations

import re
import shutil

import pytest
import yaml

from macros import formulas as F
from macros.catalog import CATALOG_DIR, CATALOG_FILES, CatalogError, clear_cache, load_catalog
from macros.catalog.checkpoints import FILE, load_checkpoints, shipped_checkpoint
from macros.render import MACROS

CAT = load_catalog()
GIB = 2**30


def _formats(model_key, qc):
    out = {}
    for mod, key in F.module_formats(CAT.model(model_key), qc):
        out.setdefault((mod.part, key), 0.0)
        out[(mod.part, key)] += mod.params
    return out


def test_gpt_oss_ships_mxfp4_only_in_its_routed_experts():
    ck = shipped_checkpoint("gpt-oss-120b")
    assert ck.hf_repo == "openai/gpt-oss-120b"
    groups = _formats("gpt-oss-120b", ck.quantization_config)
    assert {k for k in groups if k[1] == "mxfp4"} == {("routed_experts", "mxfp4")}
    assert {part for part, key in groups if key == "bf16"} == {"embedding", "lm_head", "attention", "router", "norms"}
    # 128 experts x 36 layers x 3 x 2880 x 2880 = 114,661,785,600 routed-expert parameters at 4.25 bits
    # (OCP MXFP4: 4 bits + one 8-bit scale per 32); the other 2,127,447,360 parameters at 2 bytes.
    experts = 128 * 36 * 3 * 2880 * 2880
    assert groups[("routed_experts", "mxfp4")] == experts
    rest = sum(v for k, v in groups.items() if k[1] == "bf16")
    wb = F.checkpoint_weight_bytes(CAT.model("gpt-oss-120b"), ck.quantization_config, CAT.format)
    assert wb.total == pytest.approx(experts * 4.25 / 8 + rest * 2)


def test_weights_sizes_the_shipped_checkpoint_by_default():
    out = MACROS["weights"]("gpt-oss-120b")
    assert "as shipped (openai/gpt-oss-120b)" in out and "MXFP4" in out
    # the same figure as the explicit BF16-with-MXFP4-experts call, not the all-MXFP4 one
    explicit = MACROS["weights"]("gpt-oss-120b", fmt="bf16", expert_fmt="mxfp4")
    result = re.search(r"\*\*Result:\*\* (.+)", out).group(1)
    assert result == re.search(r"\*\*Result:\*\* (.+)", explicit).group(1) == "65.2 GB (60.7 GiB)"
    assert "(60.7 GiB)" not in MACROS["weights"]("gpt-oss-120b", fmt="mxfp4")
    # a model without a checkpoint record: its released format throughout
    assert MACROS["weights"]("llama-3.1-70b") == MACROS["weights"]("llama-3.1-70b", fmt="bf16")


def test_llama_405b_fp8_keeps_attention_and_the_first_and_last_blocks_in_bf16():
    ck = load_checkpoints()["llama-3.1-405b-instruct-fp8"]
    assert ck.quantization_config["quant_method"] == "fbgemm_fp8"
    groups = _formats("llama-3.1-405b", ck.quantization_config)
    mlp_per_layer = 3 * 16384 * 53248  # gate, up, down of one block
    assert groups[("dense_mlp", "fp8")] == 124 * mlp_per_layer
    assert groups[("dense_mlp", "bf16")] == 2 * mlp_per_layer
    assert ("attention", "fp8") not in groups and ("lm_head", "fp8") not in groups
    wb = F.checkpoint_weight_bytes(CAT.model("llama-3.1-405b"), ck.quantization_config, CAT.format)
    uniform = F.weight_bytes(CAT.model("llama-3.1-405b"), CAT.format("fp8"))
    assert wb.total == pytest.approx(124 * mlp_per_layer + (F.param_breakdown(CAT.model("llama-3.1-405b")).total
                                                            - 124 * mlp_per_layer) * 2)
    assert 0.15 < 1 - uniform / wb.total < 0.17  # one format for every linear layer comes out ~16% low


# vllm-project/vllm#23278 (gpt-oss-120b on one H100, vLLM 0.10.1 at the time, MXFP4 experts on the Marlin
# kernel: "Your GPU does not have native support for FP4 computation ... leveraging the Marlin kernel"):
#   INFO 08-20 18:04:10 [gpu_model_runner.py:2007] Model loading took 65.9651 GiB and 12.799889 seconds
#   INFO 08-20 18:04:22 [gpu_worker.py:276] Available KV cache memory: -2.14 GiB
# https://github.com/vllm-project/vllm/issues/23278
LOGGED_LOAD_GIB_MARLIN = 65.9651


def test_marlin_padded_gpt_oss_120b_matches_the_logged_model_loading_within_3_percent():
    ck = shipped_checkpoint("gpt-oss-120b")
    m = CAT.model("gpt-oss-120b")
    loaded = F.vllm_loaded_weight_bytes(m, ck.quantization_config, CAT.format, "bf16", "marlin") / GIB
    assert loaded == pytest.approx(LOGGED_LOAD_GIB_MARLIN, rel=0.03)
    assert abs(loaded / LOGGED_LOAD_GIB_MARLIN - 1) < 0.002  # measured: -0.10%
    # the padding is what closes the gap: unpadded, the experts are 8% short of the log
    stored = F.checkpoint_weight_bytes(m, ck.quantization_config, CAT.format).total / GIB
    assert stored / LOGGED_LOAD_GIB_MARLIN - 1 < -0.07


def test_mxfp4_padding_follows_vllm_0_33_round_up_rules():
    m = CAT.model("gpt-oss-120b")
    e, layers = 128, 36
    # Marlin: hidden 2880 -> 3072 (256), intermediate 2880 -> 2944 (128); Triton: 2880 is already a
    # multiple of 64, nothing padded. Packed values 1/2 byte, scales one byte per 32, BF16 biases.
    def alloc(h, i):
        return layers * (e * 2 * i * (h // 2 + h // 32) + e * h * (i // 2 + i // 32) + e * (2 * i + h) * 2)
    assert F.vllm_mxfp4_expert_bytes(m, "marlin") == alloc(3072, 2944)
    assert F.vllm_mxfp4_expert_bytes(m, "triton") == alloc(2880, 2880)
    with pytest.raises(ValueError, match="backend 'fp4x' unknown"):
        F.vllm_mxfp4_expert_bytes(m, "fp4x")
    qc = shipped_checkpoint("gpt-oss-120b").quantization_config
    non_expert = F.checkpoint_weight_bytes(m, qc, CAT.format).non_expert
    assert MACROS["loaded_weights"]("gpt-oss-120b", mxfp4_backend="marlin") == \
        f"{(alloc(3072, 2944) + non_expert) / GIB:.2f} GiB"


def test_compressed_tensors_config_groups_and_ignore_are_honoured():
    qc = {"quant_method": "compressed-tensors",
          "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}},
          "ignore": ["lm_head", "re:.*layers\\.0\\.self_attn.*"]}
    groups = _formats("llama-3.1-8b", qc)
    attn_layer = F.param_breakdown(CAT.model("llama-3.1-8b")).attention / 32
    assert groups[("attention", "bf16")] == pytest.approx(attn_layer)
    assert groups[("attention", "fp8")] == pytest.approx(31 * attn_layer)
    assert ("lm_head", "bf16") in groups and ("lm_head", "fp8") not in groups
    int4 = {"quant_method": "compressed-tensors",
            "config_groups": {"g": {"targets": ["Linear"],
                                    "weights": {"num_bits": 4, "type": "int", "group_size": 128}}}}
    assert ("dense_mlp", "int4-g128") in _formats("llama-3.1-8b", int4)


@pytest.mark.parametrize("qc, field", [
    ({"quant_method": "exl2"}, "quantization_config.quant_method"),
    ({"quant_method": "compressed-tensors"}, "quantization_config.config_groups"),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 3, "type": "int"}}}},
     "quantization_config.config_groups.g"),
    ({"quant_method": "gptq", "bits": 3, "group_size": 128}, "quantization_config"),
])
def test_an_unreadable_quantization_config_names_the_field(qc, field):
    with pytest.raises(F.QuantConfigError, match=re.escape(field)):
        F.module_formats(CAT.model("llama-3.1-8b"), qc)


def test_a_checkpoint_naming_an_unknown_model_is_a_catalog_error(tmp_path):
    for name in (*CATALOG_FILES, FILE):
        shutil.copy(CATALOG_DIR / name, tmp_path / name)
    doc = yaml.safe_load((tmp_path / FILE).read_text(encoding="utf-8"))
    doc["checkpoints"][0]["model"] = "gpt-oss-121b"
    (tmp_path / FILE).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    clear_cache()
    with pytest.raises(CatalogError, match=r"checkpoints\.yaml: checkpoints\[gpt-oss-120b\]\.model: 'gpt-oss-121b'"):
        load_checkpoints(tmp_path)
