"""Q134: before a port, will vLLM 0.11.0 accept this checkpoint on the target platform at all?

``declared_quantization`` reads the quantization method a model directory's ``config.json`` declares, the
way vLLM 0.11.0 parses it (``ModelConfig._parse_quant_hf_config`` and ``_verify_quantization`` in
``vllm/config/model.py``: ``quantization_config`` or ``compression_config``, the text config of a
multimodal model, ModelOpt's producer block, lower case, ``compressed_tensors`` spelled with a hyphen).
``effective_quantization`` then applies, in vLLM's order, the overrides that change a verdict on a
platform of this check: ModelOpt's own (``quantization/modelopt.py``), then, on ROCm only,
``PetitNvFp4Config.override_quantization_method`` (``quantization/petit.py``), which takes a ModelOpt NVFP4
checkpoint as ``petit_nvfp4``. ``port_findings`` checks the result against the platform's
``supported_quantization`` list and the ROCm architecture notes, copied from ``vllm/platforms/rocm.py``
and ``tpu.py`` at v0.11.0. "tpu" means vLLM's own ``TpuPlatform``: with the ``tpu_commons`` backend
installed (since renamed tpu-inference), its platform replaces that class and brings its own list
(tpu-inference v0.11.1's adds ``awq``).
CUDA has no platform list (each method checks its own kernel requirements). Intel Gaudi and AWS Neuron are
not in vLLM 0.11.0's tree: they run through plugins whose quantization is configured outside
``--quantization``, so this check refuses them rather than guess.

Not modelled: overrides that do not change a verdict here (on CUDA, vLLM 0.11.0 switches GPTQ and AWQ
checkpoints to its Marlin kernels) and those chosen by a checkpoint format or a ``--quantization`` value
(``bitblas``, ``gptq_marlin_24``, ``moe_wna16``).
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
# vllm/platforms/rocm.py: _ROCM_PARTIALLY_SUPPORTED_MODELS (logged as a warning, not refused). The
# sliding-window note names the V0 Triton flash-attention path; in 0.11.0 the V1 engine's default ROCm
# backend (v1/attention/backends/triton_attn.py) takes a sliding window, and VLLM_USE_TRITON_FLASH_ATTN is
# read only by the Triton MLA backend.
_SWA = "sliding-window attention not in Triton flash attention; use CK (VLLM_USE_TRITON_FLASH_ATTN=0)"
# quantization/petit.py: on ROCm, these quant_algo values (upper case) become petit_nvfp4.
PETIT_ALGOS = ("NVFP4", "MODELOPT_FP4", "MODELOPT")
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


def _declared_block(config: dict) -> dict | None:
    block = _quant_block(config)
    if block is None and isinstance(config.get("text_config"), dict):
        block = _quant_block(config["text_config"])
    return block


def declared_quantization(config: dict) -> str | None:
    """The quantization method a ``config.json`` declares, normalised as vLLM 0.11.0 does (None: unquantized)."""
    block = _declared_block(config)
    if block is None:
        return None
    method = str(block.get("quant_method", "")).lower().replace("compressed_tensors", "compressed-tensors")
    return method or None


def _modelopt_override(block: dict) -> str | None:
    """ModelOptFp8Config / ModelOptNvFp4Config.override_quantization_method (quantization/modelopt.py),
    checked in that order: only a block whose quant_method is literally "modelopt"."""
    if str(block.get("quant_method", "")).lower() != "modelopt":
        return None
    nested = "quantization" in block
    inner = block["quantization"] if nested else block
    algo = inner.get("quant_algo", "") if isinstance(inner, dict) else None
    if not isinstance(algo, str):
        return None
    if "FP8" in algo:
        return "modelopt"
    if ("NVFP4" in algo) if nested else ("FP4" in algo.upper()):
        return "modelopt_fp4"
    return None


def effective_quantization(config: dict, platform: str) -> str | None:
    """The method vLLM 0.11.0 ends up verifying on ``platform``: the declared one after the ModelOpt
    overrides, then, on ROCm only, the Petit override, which takes ModelOpt NVFP4 as ``petit_nvfp4``."""
    method = declared_quantization(config)
    if method is None:
        return None
    block = {**_declared_block(config), "quant_method": method}
    override = _modelopt_override(block)
    if override is not None:
        return override
    if platform == "rocm":
        qc = block.get("quantization", block)
        algo = str(qc.get("quant_algo") or qc.get("quant_method") or "").upper()
        if algo in PETIT_ALGOS:
            return "petit_nvfp4"
    return method


# --8<-- [start:check]
def port_findings(model_dir: Path, platform: str, gcn_arch: str | None = None) -> list[Finding]:
    """What vLLM 0.11.0 will refuse or warn about for ``model_dir`` on ``platform`` ("cuda", "rocm", "tpu")."""
    if platform not in SUPPORTED_QUANTIZATION:
        raise ValueError(f"platform must be one of {', '.join(SUPPORTED_QUANTIZATION)} (vLLM 0.11.0 in-tree), "
                         f"got {platform!r}; Gaudi and Neuron run through plugins with their own quantization")
    config = _read_json(Path(model_dir) / "config.json")
    out = []
    quant = effective_quantization(config, platform)
    allowed = SUPPORTED_QUANTIZATION[platform]
    if quant is not None and allowed is not None and quant not in allowed:
        out.append(Finding("blocker", "quantization",
                           f"{quant} quantization is currently not supported in {platform}."))
    if platform == "rocm":
        if quant == "petit_nvfp4":
            out.append(Finding("review", "nvfp4", "ModelOpt NVFP4 runs through Petit kernels on ROCm: the "
                               "petit-kernel package must be installed; evaluate it against BF16"))
        for arch in config.get("architectures") or []:
            if arch in ROCM_PARTIAL:
                out.append(Finding("review", "architecture", f"vLLM logs {arch} as partially supported: "
                                   f"{ROCM_PARTIAL[arch]}"))
        if quant == "fp8" and gcn_arch and gcn_arch.startswith("gfx94"):
            out.append(Finding("review", "fp8-format", f"{gcn_arch} computes in FP8 E4M3FNUZ: the checkpoint's "
                               "E4M3FN weights are reinterpreted at load with doubled scales; compare with BF16"))
    return out
# --8<-- [end:check]
