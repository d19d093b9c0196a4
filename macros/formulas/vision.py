"""Vision-encoder tokens per image for ViT-style encoders.

The encoder cuts the image into ``patch x patch`` pixel patches; some models then merge each
``m x m`` group of neighbouring patches into one token for the language model (Qwen2-VL: 14-pixel
patches, 2 x 2 merge, so one token per 28 x 28 pixels; https://arxiv.org/abs/2409.12191).
"""

from __future__ import annotations

from . import _checks as chk

__all__ = ["vision_tokens"]


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
