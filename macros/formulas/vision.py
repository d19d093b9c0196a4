"""Vision-encoder tokens per image for ViT-style encoders.

The encoder cuts the image into ``patch x patch`` pixel patches; some models then merge each
``m x m`` group of neighbouring patches into one token for the language model (Qwen2-VL: 14-pixel
patches, 2 x 2 merge, so one token per 28 x 28 pixels; https://arxiv.org/abs/2409.12191).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _checks as chk

__all__ = ["vision_tokens", "smart_resize", "VisionTower", "EncoderFlops", "vision_encoder_flops"]


def vision_tokens(height: int, width: int, patch_size: int, merge: int = 1) -> int:
    """Tokens for an ``height x width`` image: ``ceil(H/(p m)) x ceil(W/(p m))``.

    With sides that are multiples of ``p x m`` this is exactly ``(H/p) x (W/p) / m^2``. Other sides are
    rounded up to whole merged patches (padding); engines that resize instead (Qwen2-VL rounds each
    side to the nearest multiple of 28 and clamps the pixel count) can differ by one row or column.
    Excludes special tokens such as vision start/end markers.
    """
    h = chk.positive_int("height", height)
    w = chk.positive_int("width", width)
    p = chk.positive_int("patch_size", patch_size)
    m = chk.positive_int("merge", merge)
    cell = p * m
    return (-(-h // cell)) * (-(-w // cell))


# --- Qwen2-VL / Qwen2.5-VL resizing and the vision encoder's own compute ---------------------------

def smart_resize(height: int, width: int, factor: int = 28, min_pixels: int = 56 * 56,
                 max_pixels: int = 28 * 28 * 1280) -> tuple[int, int]:
    """The resized ``(height, width)`` a Qwen2-VL-family image processor feeds the encoder.

    The algorithm of ``smart_resize`` in transformers 4.57.1
    (``models/qwen2_vl/image_processing_qwen2_vl.py``), which vLLM 0.11 imports to count image
    tokens: each side rounded to the nearest multiple of ``factor`` (patch × merge = 28); if the area
    then exceeds ``max_pixels``, both sides shrink by ``sqrt(H·W / max_pixels)`` and are floored to
    multiples of ``factor``; if it falls below ``min_pixels`` they grow and are ceiled. Aspect ratios
    above 200 are rejected. The checkpoint's ``preprocessor_config.json`` sets ``min_pixels`` and
    ``max_pixels`` (Qwen2.5-VL-7B-Instruct: 3,136 and 12,845,056, i.e. 4 to 16,384 tokens).
    """
    h = chk.positive_int("height", height)
    w = chk.positive_int("width", width)
    f = chk.positive_int("factor", factor)
    lo = chk.positive_int("min_pixels", min_pixels)
    hi = chk.positive_int("max_pixels", max_pixels)
    if lo > hi:
        raise ValueError(f"min_pixels ({lo}) exceeds max_pixels ({hi})")
    if max(h, w) / min(h, w) > 200:
        raise ValueError(f"aspect ratio {max(h, w) / min(h, w):.1f} exceeds 200, which the processor rejects")
    h_bar = round(h / f) * f
    w_bar = round(w / f) * f
    if h_bar * w_bar > hi:
        beta = math.sqrt(h * w / hi)
        h_bar = max(f, math.floor(h / beta / f) * f)
        w_bar = max(f, math.floor(w / beta / f) * f)
    elif h_bar * w_bar < lo:
        beta = math.sqrt(lo / (h * w))
        h_bar = math.ceil(h * beta / f) * f
        w_bar = math.ceil(w * beta / f) * f
    return h_bar, w_bar


@dataclass(frozen=True)
class VisionTower:
    """The ``vision_config`` fields of a Qwen2.5-VL-style encoder (windowed ViT + 2 × 2 patch merger)."""
    depth: int
    hidden_size: int
    intermediate_size: int     # SwiGLU MLP: gate, up and down projections
    patch_size: int
    temporal_patch_size: int   # a still image is repeated to fill the temporal patch
    spatial_merge_size: int
    out_hidden_size: int       # the language model's hidden size
    window_size: int           # pixels; windowed layers attend within (window / patch)^2 patches
    full_attention_layers: int
    in_channels: int = 3


@dataclass(frozen=True)
class EncoderFlops:
    patches: int
    tokens: int
    patch_embed: float
    blocks_linear: float
    attention: float
    merger: float

    @property
    def total(self) -> float:
        return self.patch_embed + self.blocks_linear + self.attention + self.merger


def vision_encoder_flops(tower: VisionTower, grid_h: int, grid_w: int) -> EncoderFlops:
    """FLOPs to encode one image of ``grid_h × grid_w`` patches (multiply-add = 2 FLOPs).

    - patch embedding: ``2 × (channels × temporal_patch × patch²) × hidden`` per patch;
    - per block, linear layers: ``2 × (4 hidden² + 3 hidden × intermediate)`` per patch (qkv, proj, MLP);
    - attention (scores and weighted sum, non-causal): ``4 × hidden × P × P`` in each full layer and
      ``4 × hidden × P × window_patches`` in each windowed layer (windows padded at the edges are
      ignored);
    - merger: ``2 × (d² + d × out)`` per merged token, ``d = hidden × merge²``.
    """
    t = tower
    gh = chk.positive_int("grid_h", grid_h)
    gw = chk.positive_int("grid_w", grid_w)
    m = t.spatial_merge_size
    if gh % m or gw % m:
        raise ValueError(f"patch grid {gh} x {gw} is not a multiple of the merge size {m}")
    if t.full_attention_layers > t.depth:
        raise ValueError(f"full_attention_layers ({t.full_attention_layers}) exceeds depth ({t.depth})")
    p = gh * gw
    d = t.hidden_size
    embed = 2 * t.in_channels * t.temporal_patch_size * t.patch_size**2 * d * p
    linear = 2 * (4 * d * d + 3 * d * t.intermediate_size) * p * t.depth
    window = min(p, (t.window_size // t.patch_size) ** 2)
    attn = 4 * d * p * (t.full_attention_layers * p + (t.depth - t.full_attention_layers) * window)
    dm = d * m * m
    tokens = p // (m * m)
    merger = 2 * (dm * dm + dm * t.out_hidden_size) * tokens
    return EncoderFlops(p, tokens, float(embed), float(linear), float(attn), float(merger))
