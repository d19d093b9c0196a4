"""Q134: examples/operations/port_check.py on config.json fixtures shaped like real checkpoints' (ModelOpt
FP8 and NVFP4, AutoAWQ, compressed-tensors, a multimodal text_config). The expected verdicts are read off
vLLM 0.11.0's platform lists and quantization overrides by hand, and the blocker text is vLLM's own error
message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examples.operations.port_check import declared_quantization, effective_quantization, port_findings

MODELOPT_FP8 = {"architectures": ["LlamaForCausalLM"],
                "quantization_config": {"producer": {"name": "modelopt", "version": "0.29.0"},
                                        "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}}
MODELOPT_NVFP4 = {"architectures": ["LlamaForCausalLM"],
                  "quantization_config": {"producer": {"name": "modelopt"}, "quantization": {"quant_algo": "NVFP4"}}}
AWQ = {"architectures": ["LlamaForCausalLM"],
       "quantization_config": {"quant_method": "AWQ", "bits": 4, "group_size": 128, "version": "gemm"}}
CT = {"architectures": ["Qwen2ForCausalLM"], "quantization_config": {"quant_method": "compressed_tensors"}}
FP8 = {"architectures": ["LlamaForCausalLM"], "quantization_config": {"quant_method": "fp8"}}
VLM = {"architectures": ["LlavaForConditionalGeneration"],
       "text_config": {"quantization_config": {"quant_method": "gptq", "bits": 4}}}
PLAIN = {"architectures": ["LlamaForCausalLM"]}


def write(tmp_path: Path, cfg: dict) -> Path:
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    return tmp_path


@pytest.mark.parametrize("cfg, method", [(MODELOPT_FP8, "modelopt"), (MODELOPT_NVFP4, "modelopt_fp4"),
                                         (AWQ, "awq"), (CT, "compressed-tensors"), (FP8, "fp8"), (VLM, "gptq"),
                                         (PLAIN, None)])
def test_declared_quantization_as_vllm_parses_it(cfg, method):
    assert declared_quantization(cfg) == method


@pytest.mark.parametrize("cfg, platform, blocked", [
    (MODELOPT_FP8, "rocm", "modelopt"), (MODELOPT_FP8, "tpu", "modelopt"), (MODELOPT_FP8, "cuda", None),
    (MODELOPT_NVFP4, "tpu", "modelopt_fp4"), (MODELOPT_NVFP4, "rocm", None), (AWQ, "tpu", "awq"),
    (AWQ, "rocm", None), (VLM, "tpu", "gptq"),
    (VLM, "rocm", None), (CT, "tpu", None), (FP8, "tpu", None), (PLAIN, "tpu", None),
])
def test_platform_lists(tmp_path, cfg, platform, blocked):
    found = [f for f in port_findings(write(tmp_path, cfg), platform) if f.severity == "blocker"]
    if blocked is None:
        assert found == []
    else:
        assert [f.detail for f in found] == [f"{blocked} quantization is currently not supported in {platform}."]


# The same NVFP4 scheme without ModelOpt's producer block: ModelOpt's own override (quant_method "modelopt")
# claims it before Petit does, so ROCm refuses it.
MODELOPT_NVFP4_BARE = {"quantization_config": {"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4"}}}


@pytest.mark.parametrize("cfg, platform, method", [
    (MODELOPT_NVFP4, "rocm", "petit_nvfp4"), (MODELOPT_NVFP4, "cuda", "modelopt_fp4"),
    (MODELOPT_NVFP4, "tpu", "modelopt_fp4"), (MODELOPT_FP8, "rocm", "modelopt"),
    (MODELOPT_NVFP4_BARE, "rocm", "modelopt_fp4"), (AWQ, "rocm", "awq"), (PLAIN, "rocm", None),
])
def test_overrides_in_vllm_order(cfg, platform, method):
    assert effective_quantization(cfg, platform) == method


def test_modelopt_nvfp4_on_rocm_goes_to_petit(tmp_path):
    found = port_findings(write(tmp_path, MODELOPT_NVFP4), "rocm")
    assert [(f.severity, f.check) for f in found] == [("review", "nvfp4")]
    assert "petit-kernel" in found[0].detail
    found = port_findings(write(tmp_path, MODELOPT_NVFP4_BARE), "rocm")
    assert [f.detail for f in found] == ["modelopt_fp4 quantization is currently not supported in rocm."]


def test_rocm_warnings_for_fp8_on_mi300_and_sliding_window_models(tmp_path):
    found = port_findings(write(tmp_path, FP8), "rocm", gcn_arch="gfx942:sramecc+:xnack-")
    assert [(f.severity, f.check) for f in found] == [("review", "fp8-format")]
    assert "E4M3FNUZ" in found[0].detail
    assert port_findings(tmp_path, "rocm", gcn_arch="gfx950") == []   # MI355-class: OCP E4M3FN, no conversion
    found = port_findings(write(tmp_path, CT), "rocm")
    assert [(f.severity, f.check) for f in found] == [("review", "architecture")]
    assert found[0].detail.startswith("vLLM logs Qwen2ForCausalLM as partially supported")
    assert "VLLM_USE_TRITON_FLASH_ATTN=0" in found[0].detail


def test_bad_input(tmp_path):
    with pytest.raises(ValueError, match="Gaudi and Neuron run through plugins"):
        port_findings(write(tmp_path, PLAIN), "hpu")
    with pytest.raises(ValueError, match=r"config\.json: file not found"):
        port_findings(tmp_path / "nowhere", "rocm")
    (tmp_path / "config.json").write_text("{")
    with pytest.raises(ValueError, match=r"config\.json: not valid JSON"):
        port_findings(tmp_path, "rocm")
    with pytest.raises(ValueError, match="unknown ModelOpt quant_algo 'INT4_AWQ'"):
        declared_quantization({"quantization_config": {"producer": {"name": "modelopt"},
                                                       "quantization": {"quant_algo": "INT4_AWQ"}}})
