"""FP4 on Blackwell (Q144): effective bits of block-scaled 4-bit formats, and what W4A4 vs weight-only
4-bit buys in weight memory, the decode bound and prefill time against BF16 and FP8.

Three models, all first-order:

- **Effective bits of a block-scaled format.** ``k``-bit elements in blocks of ``B`` that share one
  ``s``-bit scale, plus an optional per-tensor scale of ``t`` bits over ``N`` elements:
  ``bits = k + s / B + t / N``. NVFP4 (E2M1, ``B = 16``, E4M3 scale, one FP32 scale per tensor) gives
  4.5 bits; OCP MXFP4 (E2M1, ``B = 32``, E8M0 scale) 4.25.
- **Decode bound.** At batch 1 every step reads every weight once, so tokens per second per sequence
  is at most ``bandwidth / weight bytes`` (KV reads and kernel overheads only lower it).
- **Prefill time.** A prompt of ``T`` tokens costs about ``2 × P_matmul × T`` FLOPs, where ``P_matmul``
  are the parameters inside matrix multiplications (all but the input embedding; the LM head runs only
  at the sampled position and is left out here too). It runs at the tensor rate of the precision in
  which BOTH operands reach the tensor core: W4A4 at the FP4 rate, W8A8 at the FP8 rate, and a
  weight-only format (W4A16: the 4-bit weights are dequantised in the kernel) at the BF16 rate.
  ``time = 2 × P_matmul × T / (rate × MFU)``. Attention FLOPs are left out.

Units: bits, bytes, FLOP/s, seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk

__all__ = ["FP4_DENSE_FLOPS", "block_format_bits", "decode_bound_tokens_per_s", "prefill_seconds",
           "GemmPath", "GEMM_PATHS", "gemm_path"]

#: Dense (no 2:4 sparsity) FP4 tensor rate per GPU, FLOP/s, keyed like gpus.yaml. Not a gpus.yaml field
#: yet. B200: the HGX B200 table prints FP4 18 PFLOPS per GPU with sparsity, 9 dense, which NVIDIA's
#: NVFP4 blog (2025-06-24, figure 1) repeats as 9/18 for B200. B300: the same figure gives 13 dense /
#: 18 sparse for (HGX) B300 and 15 / 20 for GB300; the Blackwell Ultra article's "15 PetaFLOPS dense
#: NVFP4" is the GB300 figure. The HGX value is kept, to match the HGX FP8 and BF16 rates in gpus.yaml.
FP4_DENSE_FLOPS = {"b200": 9.0e15, "b300": 13.0e15}


def block_format_bits(element_bits: float, block_size: int, scale_bits: float,
                      tensor_scale_bits: float = 0.0, tensor_elements: int | None = None) -> float:
    """Effective bits per element: ``element_bits + scale_bits / block_size (+ tensor_scale_bits /
    tensor_elements)``."""
    chk.positive("element_bits", element_bits)
    block_size = chk.positive_int("block_size", block_size)
    chk.non_negative("scale_bits", scale_bits)
    chk.non_negative("tensor_scale_bits", tensor_scale_bits)
    bits = element_bits + scale_bits / block_size
    if tensor_scale_bits:
        if tensor_elements is None:
            raise ValueError("tensor_elements is required with tensor_scale_bits (the per-tensor scale is "
                             "amortised over the tensor's elements)")
        bits += tensor_scale_bits / chk.positive_int("tensor_elements", tensor_elements)
    return bits


def decode_bound_tokens_per_s(weight_bytes: float, bandwidth_bytes_per_s: float) -> float:
    """Upper bound on batch-1 decode speed: ``bandwidth / weight bytes`` tokens per second."""
    chk.positive("weight_bytes", weight_bytes)
    chk.positive("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    return bandwidth_bytes_per_s / weight_bytes


def prefill_seconds(matmul_params: float, tokens: int, rate_flops: float, mfu: float) -> float:
    """Compute-bound prefill time: ``2 × matmul_params × tokens / (rate × mfu)``."""
    chk.positive("matmul_params", matmul_params)
    tokens = chk.positive_int("tokens", tokens)
    chk.positive("rate_flops", rate_flops)
    chk.fraction("mfu", mfu)
    return 2.0 * matmul_params * tokens / (rate_flops * mfu)


@dataclass(frozen=True)
class GemmPath:
    """One way to run the linear layers: the weight format key (formats.yaml) and the tensor rate used."""

    key: str
    label: str          # e.g. "NVFP4 W4A4"
    weight_fmt: str     # formats.yaml key
    rate: str           # "bf16", "fp8" or "fp4"


GEMM_PATHS = (
    GemmPath("bf16", "BF16 (W16A16)", "bf16", "bf16"),
    GemmPath("fp8", "FP8 W8A8", "fp8", "fp8"),
    GemmPath("mxfp4-w4a16", "MXFP4 weight-only (W4A16)", "mxfp4", "bf16"),
    GemmPath("nvfp4-w4a16", "NVFP4 weight-only (W4A16, Marlin)", "nvfp4", "bf16"),
    GemmPath("nvfp4-w4a4", "NVFP4 W4A4", "nvfp4", "fp4"),
)


def gemm_path(key: str) -> GemmPath:
    for p in GEMM_PATHS:
        if p.key == key:
            return p
    raise ValueError(f"unknown GEMM path {key!r}; valid: {', '.join(p.key for p in GEMM_PATHS)}")
