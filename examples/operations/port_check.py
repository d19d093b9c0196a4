"""Q134: before a port, will vLLM 0.11.0 accept this checkpoint on the target platform at all?

``declared_quantization`` reads the quantization method a model directory's ``config.json`` declares, the
way vLLM 0.11.0 parses it (``ModelConfig._parse_quant_hf_config`` and ``_verify_quantization`` in
``vllm/config/model.py``: ``quantization_config`` or ``compression_config``, the text config of a
multimodal model, ModelOpt's producer block, lower case, ``compressed_tensors`` spelled with a hyphen).
``port_findings`` checks it against the platform's ``supported_quantization`` list and the ROCm
architecture notes, copied from ``vllm/platforms/rocm.py`` and ``tpu.py`` at v0.11.0. CUDA has no
platform list (each method checks its own kernel requirements). Intel Gaudi and AWS Neuron are not in
vLLM 0.11.0's tree: they run through plugins whose quantization is configured outside ``--quantization``,
so this check refuses them rather than guess.

The verdict is about the declared method; on CUDA, vLLM may then switch GPTQ and AWQ checkpoints to its
Marlin kernels, which does not change whether the platform accepts the checkpoint.
"""

from __future__ import annotations

from pathlib import Path

from examples.operations.intake import Finding
from examples.operations.plumbing import _read_json

# --8<-- [start:tables]
# vLLM v0.11.0 vllm/platforms/{rocm,tpu}.py: Platform.supported_quantization (None: no platform list).
SUPPORTED_QUANTIZATION: dict[str, tuple[str, ...] | None] = {
    "cuda": None,
    "rocm": ("awq", "gptq", "fp8", "compressed-tensors", "fbgemm_fp8", "gguf", "quark", "ptpc_fp8", "mxfp4",
             "petit_nvfp4", "torchao"),
    "tpu": ("fp8", "tpu_int8", "compressed-tensors"),
}
# vllm/platforms/rocm.py: _ROCM_PARTIALLY_SUPPORTED_MODELS (logged as a warning, not refused).
_SWA = "sliding-window attention not in Triton flash attention; use CK (VLLM_USE_TRITON_FLASH_ATTN=0)"
ROCM_PARTIAL = {
    "Qwen2ForCausalLM": _SWA,
    "MistralForCausalLM": _SWA,
    "MixtralForCausalLM": _SWA,
    "PaliGemmaForConditionalGeneration": "flash attention does not fully support 32-bit precision",
    "Phi3VForCausalLM": "Triton flash attention may fail to compile (shared memory); VLLM_USE_TRITON_FLASH_ATTN=0",
}
# --8<-- [end:tables]


def _quant_block(cfg: dict) -> dict | None:
    block = cfg.get("quantization_config")
    if block is None:
        return cfg.get("compression_config")
    producer = (block.get("producer") or {}).get("name")
    if producer == "modelopt":   # ModelOpt names the algorithm, not the method
        algo = (block.get("quantization") or {}).get("quant_algo")
        if algo == "FP8":
            block = {**block, "quant_method": "modelopt"}
        elif algo == "NVFP4":
            block = {**block, "quant_method": "modelopt_fp4"}
        elif algo is not None:
            raise ValueError(f"unknown ModelOpt quant_algo {algo!r}")
    return block


def declared_quantization(config: dict) -> str | None:
    """The quantization method a ``config.json`` declares, normalised as vLLM 0.11.0 does (None: unquantized)."""
    block = _quant_block(config)
    if block is None and isinstance(config.get("text_config"), dict):
        block = _quant_block(config["text_config"])
    if block is None:
        return None
    method = str(block.get("quant_method", "")).lower().replace("compressed_tensors", "compressed-tensors")
    return method or None


# --8<-- [start:check]
def port_findings(model_dir: Path, platform: str, gcn_arch: str | None = None) -> list[Finding]:
    """What vLLM 0.11.0 will refuse or warn about for ``model_dir`` on ``platform`` ("cuda", "rocm", "tpu")."""
    if platform not in SUPPORTED_QUANTIZATION:
        raise ValueError(f"platform must be one of {', '.join(SUPPORTED_QUANTIZATION)} (vLLM 0.11.0 in-tree), "
                         f"got {platform!r}; Gaudi and Neuron run through plugins with their own quantization")
    config = _read_json(Path(model_dir) / "config.json")
    out = []
    quant = declared_quantization(config)
    allowed = SUPPORTED_QUANTIZATION[platform]
    if quant is not None and allowed is not None and quant not in allowed:
        out.append(Finding("blocker", "quantization",
                           f"{quant} quantization is currently not supported in {platform}."))
    if platform == "rocm":
        for arch in config.get("architectures") or []:
            if arch in ROCM_PARTIAL:
                out.append(Finding("review", "architecture", f"{arch} is partially supported: {ROCM_PARTIAL[arch]}"))
        if quant == "fp8" and gcn_arch and gcn_arch.startswith("gfx94"):
            out.append(Finding("review", "fp8-format", f"{gcn_arch} computes in FP8 E4M3FNUZ: the checkpoint's "
                               "E4M3FN weights are reinterpreted at load with doubled scales; compare with BF16"))
    return out
# --8<-- [end:check]
