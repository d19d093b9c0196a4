"""The catalog loader: the real files validate; broken files fail naming file, entry key and field;
lookups list the valid keys; and the catalog's data agrees with figures derived independently."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from macros.catalog import (CATALOG_DIR, CATALOG_FILES, Catalog, CatalogError, UnknownKeyError, clear_cache,
                            load_catalog)
from macros.formulas import effective_bits_per_weight

REQUIRED_FORMATS = ["fp32", "bf16", "fp8", "int8", "int4-g128", "int4-g128-zp", "mxfp4", "nf4", "nf4-dq",
                    "gguf-q8_0", "gguf-q6_k", "gguf-q5_k", "gguf-q4_k", "gguf-q3_k", "gguf-q2_k", "gguf-q4_k_m"]


@pytest.fixture
def cat() -> Catalog:
    return load_catalog()


@pytest.fixture
def copy(tmp_path) -> Path:
    """A writable copy of the real catalog directory."""
    for name in CATALOG_FILES:
        shutil.copy(CATALOG_DIR / name, tmp_path / name)
    clear_cache()
    return tmp_path


def _edit(path: Path, fn) -> None:
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    fn(doc)
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")


# --------------------------------------------------------------------------------------------------
# the real catalog
# --------------------------------------------------------------------------------------------------

def test_real_catalog_loads_with_the_required_entries(cat):
    assert "llama-3.1-70b" in cat.models and "deepseek-v3" in cat.models
    assert "h100-sxm" in cat.gpus
    assert set(REQUIRED_FORMATS) <= set(cat.formats)
    assert cat.prices.gpu_hour and cat.prices.api


def test_load_is_cached_and_reloads_when_a_file_changes(copy):
    first = load_catalog(copy)
    assert load_catalog(copy) is first
    _edit(copy / "gpus.yaml", lambda d: d["gpus"][0].update(notes="edited"))
    second = load_catalog(copy)
    assert second is not first
    assert next(iter(second.gpus.values())).notes == "edited"


def test_exponent_without_dot_or_sign_is_read_as_a_number(copy):
    # Plain PyYAML (YAML 1.1) reads 3.35e12 as the *string* '3.35e12'; the catalog loader must not.
    text = (copy / "gpus.yaml").read_text(encoding="utf-8")
    text = text.replace("memory_bandwidth_bytes_per_s: 3.35e+12", "memory_bandwidth_bytes_per_s: 3.35e12", 1)
    assert "3.35e12" in text
    (copy / "gpus.yaml").write_text(text, encoding="utf-8")
    assert isinstance(yaml.safe_load("x: 3.35e12")["x"], str)  # the pitfall being guarded against
    assert load_catalog(copy).gpu("h100-sxm").memory_bandwidth_bytes_per_s == 3.35e12


# --------------------------------------------------------------------------------------------------
# schema errors name file, key and field
# --------------------------------------------------------------------------------------------------

def _error(copy: Path) -> str:
    with pytest.raises(CatalogError) as info:
        load_catalog(copy)
    return str(info.value)


def test_missing_field(copy):
    _edit(copy / "models.yaml", lambda d: d["models"][3].pop("num_key_value_heads"))
    msg = _error(copy)
    assert "models.yaml" in msg and "[llama-3.1-70b]" in msg and "num_key_value_heads" in msg
    assert "missing" in msg


def test_wrong_type(copy):
    _edit(copy / "gpus.yaml", lambda d: d["gpus"][1].update(memory_bytes="80GB"))
    msg = _error(copy)
    assert "gpus.yaml" in msg and "[h100-sxm]" in msg and "memory_bytes" in msg and "integer" in msg


def test_wrong_type_bool(copy):
    _edit(copy / "formats.yaml", lambda d: d["formats"][1].update(kv_cache="yes"))
    msg = _error(copy)
    assert "formats.yaml" in msg and "[bf16]" in msg and "kv_cache" in msg


def test_duplicate_entry_key(copy):
    def dup(d):
        d["formats"].append(dict(d["formats"][2]))
    _edit(copy / "formats.yaml", dup)
    msg = _error(copy)
    assert "formats.yaml" in msg and "[fp8]" in msg and "key" in msg and "duplicate" in msg


def test_duplicate_mapping_key_inside_an_entry(copy):
    # PyYAML silently keeps the last of two equal keys; the loader must refuse.
    path = copy / "gpus.yaml"
    text = path.read_text(encoding="utf-8")
    text = text.replace("    tdp_watts: 700\n", "    tdp_watts: 700\n    tdp_watts: 800\n", 1)
    path.write_text(text, encoding="utf-8")
    msg = _error(copy)
    assert "gpus.yaml" in msg and "[h100-sxm]" in msg and "duplicate" in msg and "tdp_watts" in msg


def test_nested_block_field(copy):
    _edit(copy / "models.yaml",
          lambda d: next(m for m in d["models"] if m["key"] == "deepseek-v3")["mla"].pop("kv_lora_rank"))
    msg = _error(copy)
    assert "[deepseek-v3]" in msg and "mla.kv_lora_rank" in msg


def test_unknown_field_is_a_typo(copy):
    _edit(copy / "models.yaml", lambda d: d["models"][0].update(num_kv_heads=8))
    msg = _error(copy)
    assert "[llama-2-7b]" in msg and "num_kv_heads" in msg and "unknown field" in msg


def test_negative_size(copy):
    _edit(copy / "models.yaml", lambda d: d["models"][0].update(num_hidden_layers=-32))
    msg = _error(copy)
    assert "[llama-2-7b]" in msg and "num_hidden_layers" in msg


def test_bad_cross_reference(copy):
    _edit(copy / "prices.yaml", lambda d: d["gpu_hour"][0].update(gpu="h100-sxm-typo"))
    msg = _error(copy)
    assert "prices.yaml" in msg and "[h100-sxm-cloud]" in msg and ".gpu" in msg and "h100-sxm" in msg


def test_inconsistent_architecture(copy):
    _edit(copy / "models.yaml", lambda d: d["models"][0].update(architecture="moe"))
    msg = _error(copy)
    assert "[llama-2-7b]" in msg and "moe" in msg


def test_missing_file(copy):
    (copy / "prices.yaml").unlink()
    assert "prices.yaml" in _error(copy)


# --------------------------------------------------------------------------------------------------
# lookups
# --------------------------------------------------------------------------------------------------

def test_unknown_keys_list_the_valid_ones(cat):
    with pytest.raises(UnknownKeyError) as info:
        cat.model("llama-70b")
    msg = str(info.value)
    assert msg.startswith("unknown model 'llama-70b'")
    assert "valid models:" in msg and "deepseek-v3" in msg and "llama-3.1-70b" in msg
    with pytest.raises(UnknownKeyError, match="valid GPUs: .*h100-sxm"):
        cat.gpu("h100")
    with pytest.raises(UnknownKeyError, match="valid formats: .*int4-g128"):
        cat.format("int4")
    assert isinstance(UnknownKeyError("model", "x", []), ValueError)


# --------------------------------------------------------------------------------------------------
# the data against independent derivations
# --------------------------------------------------------------------------------------------------

# Effective bits from the block structs in llama.cpp ggml/src/ggml-common.h (bytes per block x 8 /
# weights per block), hand-computed: block_q8_0 = 2 + 32 = 34 B / 32; block_q6_K = 128 + 64 + 16 + 2
# = 210 B / 256; block_q5_K = 4 + 12 + 32 + 128 = 176 B / 256; block_q4_K = 4 + 12 + 128 = 144 B / 256;
# block_q3_K = 32 + 64 + 12 + 2 = 110 B / 256; block_q2_K = 16 + 64 + 4 = 84 B / 256.
# MXFP4: OCP MX v1.0 spec, 32 E2M1 elements + one 8-bit E8M0 scale. int4-g128: one FP16 scale per 128.
# NF4: QLoRA paper (arXiv:2305.14314), FP32 absmax per 64 = 0.5 bits; with double quantization
# 8/64 + 32/(64*256) = 0.127 bits.
HAND_BITS = {
    "gguf-q8_0": 34 * 8 / 32,
    "gguf-q6_k": 210 * 8 / 256,
    "gguf-q5_k": 176 * 8 / 256,
    "gguf-q4_k": 144 * 8 / 256,
    "gguf-q3_k": 110 * 8 / 256,
    "gguf-q2_k": 84 * 8 / 256,
    "mxfp4": 4 + 8 / 32,
    "int4-g128": 4 + 16 / 128,
    "int4-g128-zp": 4 + (16 + 4) / 128,
    "nf4": 4 + 32 / 64,
    "nf4-dq": 4 + 8 / 64 + 32 / (64 * 256),
    "fp8": 8, "bf16": 16, "fp32": 32, "int8": 8,
}


@pytest.mark.parametrize("key, bits", sorted(HAND_BITS.items()))
def test_format_bits_match_the_block_structs(cat, key, bits):
    assert cat.format(key).bits_per_weight == pytest.approx(bits, abs=1e-9)


@pytest.mark.parametrize("key", [k for k in HAND_BITS if k not in ("fp8", "bf16", "fp32", "int8")])
def test_grouped_formats_are_consistent_with_their_group_and_scale(cat, key):
    # bits_per_weight = element bits + scale_bits / group_size, where element bits are the integer part
    # the struct stores per weight (8, 6, 5, 4, 3, 2; NF4/MXFP4/INT4: 4).
    f = cat.format(key)
    element = {"gguf-q8_0": 8, "gguf-q6_k": 6, "gguf-q5_k": 5, "gguf-q3_k": 3, "gguf-q2_k": 2}.get(key, 4)
    assert effective_bits_per_weight(element, f.group_size, f.scale_bits) == pytest.approx(f.bits_per_weight)


def test_kv_cache_flags(cat):
    # vLLM --kv-cache-dtype accepts auto (16-bit) and fp8; weight-only formats are not KV dtypes.
    assert cat.format("bf16").kv_cache and cat.format("fp8").kv_cache
    for key in ("int4-g128", "mxfp4", "nf4", "gguf-q4_k"):
        assert not cat.format(key).kv_cache


def test_gpu_memory_is_the_usable_total_nvidia_smi_reports(cat):
    # memory_bytes is the usable total from public nvidia-smi logs, MiB x 2**20. The A100 80GB family
    # reports 81920 MiB (= 80 GiB exactly; github.com/dexmal/dexbotic/issues/41, A800-SXM4-80GB board);
    # the H100 80GB reports 81559 MiB (github.com/wilicc/gpu-burn/issues/114), less than its 80 GiB of
    # HBM3; the B200 reports 183359 MiB (github.com/NVIDIA/TensorRT-LLM/issues/10278).
    assert cat.gpu("a100-80gb-sxm").memory_bytes == 81920 * 2**20 == 80 * 2**30
    assert cat.gpu("h100-sxm").memory_bytes == 81559 * 2**20
    assert cat.gpu("h100-sxm").memory_bytes < 80 * 2**30
    assert cat.gpu("b200").memory_bytes == 183359 * 2**20


# The totals cudaMemGetInfo reports, as public logs print them (deviceQuery in bytes, PyTorch's OOM
# message and vLLM's start-up check in GiB to two decimals). Typed from the logs, not from gpus.yaml.
CUDA_TOTALS_GIB = {
    "h100-sxm": 85045477376 / 2**30,  # github.com/thamada/nvidia-smi nvsim/H100SXMx8_deviceQuery.py
    "a100-80gb-sxm": 79.25,           # github.com/HiDream-ai/VAREdit/issues/6
    "b200": 178.35,                   # github.com/unslothai/unsloth/issues/3411
    "l4": 22.05,                      # github.com/pytorch/pytorch/issues/175666
    "l40s": 44.42,                    # github.com/stepfun-ai/Step-Video-T2V/issues/8
    "rtx-4090": 23.64,                # github.com/ali-vilab/VGen/issues/104
    "rtx-5090": 31.37,                # github.com/Wan-Video/Wan2.1/issues/465
}


@pytest.mark.parametrize("key, gib", sorted(CUDA_TOTALS_GIB.items()))
def test_gpu_cuda_total_matches_its_public_log(cat, key, gib):
    g = cat.gpu(key)
    assert g.cuda_total_bytes / 2**30 == pytest.approx(gib, abs=0.005)
    assert g.extra["cuda_total_source"].startswith("https://github.com/")
    # the driver keeps a few hundred MiB that nvidia-smi counts and CUDA does not
    assert 300 * 2**20 < g.memory_bytes - g.cuda_total_bytes < 800 * 2**20
    assert g.engine_memory_bytes == g.cuda_total_bytes


def test_every_gpu_has_a_sourced_cuda_total_or_says_it_falls_back(cat):
    fallbacks = {k for k, g in cat.gpus.items() if "cuda_total_source" not in g.extra}
    assert fallbacks == {"h100-pcie", "h200-sxm", "b300", "mi300x"}
    for k in fallbacks:
        assert cat.gpu(k).extra["cuda_total_note"].startswith("fallback:")
    assert cat.gpu("h100-pcie").cuda_total_bytes == cat.gpu("h100-sxm").cuda_total_bytes
    assert cat.gpu("h200-sxm").cuda_total_bytes == cat.gpu("h200-sxm").memory_bytes


def test_cuda_total_without_source_or_fallback_note_is_an_error(copy):
    def strip(d):
        d["gpus"][1].pop("cuda_total_source")
    _edit(copy / "gpus.yaml", strip)
    msg = _error(copy)
    assert "gpus.yaml" in msg and "[h100-sxm]" in msg and "cuda_total_source" in msg and "fallback" in msg


def test_cuda_total_above_the_nvidia_smi_total_is_an_error(copy):
    _edit(copy / "gpus.yaml", lambda d: d["gpus"][1].update(cuda_total_bytes=90 * 2**30))
    msg = _error(copy)
    assert "[h100-sxm]" in msg and "cuda_total_bytes" in msg and "exceeds memory_bytes" in msg


def test_kv_budget_uses_the_cuda_total_not_the_marketed_figure(cat):
    # vLLM 0.33.0 requests ceil(total x gpu_memory_utilization) of the mem_get_info total
    # (vllm/v1/worker/utils.py request_memory); on an H100 that is 79.20 GiB x 0.92, not the 79.65 GiB nvidia-smi shows.
    from macros.formulas import memory as M
    g = cat.gpu("h100-sxm")
    budget = M.kv_budget_bytes(g.engine_memory_bytes, 0, 0.92, 0, 0)
    assert budget == pytest.approx(85045477376 * 0.92)
    assert g.memory_bytes * 0.92 - budget == pytest.approx(453.3125 * 2**20 * 0.92)


def test_gpu_dense_flops_are_half_the_sparse_datasheet_figures(cat):
    # H100 SXM datasheet: BF16 1,979 TFLOPS and FP8 3,958 TFLOPS *with sparsity*; dense is half.
    g = cat.gpu("h100-sxm")
    assert g.bf16_dense_flops == pytest.approx(1979e12 / 2, rel=1e-3)
    assert g.fp8_dense_flops == pytest.approx(3958e12 / 2, rel=1e-3)
    # NVLink 4: 900 GB/s total bidirectional -> 450 GB/s per direction.
    assert g.interconnect_bytes_per_s_per_direction == pytest.approx(900e9 / 2)


def test_rtx_5090_is_a_32_gib_pcie_card(cat):
    # NVIDIA product page: 32 GB GDDR7 on a 512-bit bus at 28 Gbps = 512 / 8 x 28 = 1,792 GB/s;
    # the "32 GB" is 32 GiB of devices; nvidia-smi shows 32607 MiB usable (public RTX 5090 logs), and
    # that usable total is what memory_bytes records.
    g = cat.gpu("rtx-5090")
    assert g.memory_bytes == 32607 * 2**20
    assert g.memory_bytes < 32 * 2**30
    assert g.memory_bandwidth_bytes_per_s == pytest.approx(512 / 8 * 28e9)
    # PCIe Gen5 x16: 128 GB/s bidirectional -> 64 GB/s each way; no NVLink on GeForce Blackwell.
    assert g.interconnect_bytes_per_s_per_direction == pytest.approx(128e9 / 2)
    # Dense FP16-accumulate tensor rate is half the printed 838 TFLOPS (sparse); BF16 with FP32
    # accumulate is half again on GeForce parts, as on the RTX 4090.
    assert g.bf16_dense_flops == pytest.approx(838e12 / 4, rel=1e-3)
