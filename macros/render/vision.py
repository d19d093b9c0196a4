"""Vision-encoder tokens (formulas: :mod:`macros.formulas.vision`)."""

from __future__ import annotations

import math

from .. import formulas as F
from .blocks import GIVEN, Example, _i
from .registry import macro


@macro("block", example='vision_tokens(1080, 1920)')
def vision_tokens(height: int, width: int, patch_size: int = 14, merge: int = 2) -> str:
    """Worked example: image tokens = ceil(H/(p·m)) × ceil(W/(p·m)) (Qwen2-VL: p = 14, m = 2)."""
    h, w, p, mg = height, width, patch_size, merge
    n = F.vision_tokens(h, w, p, mg)
    cell = p * mg
    ex = Example(f"vision tokens for a {w} × {h} image")
    ex.formula("tokens = ceil(H / (patch × merge)) × ceil(W / (patch × merge))")
    ex.input("image height × width", f"{_i(h)} × {_i(w)} px", GIVEN)
    ex.input("patch size", f"{p} px", GIVEN)
    ex.input("spatial merge", f"{mg} × {mg}", GIVEN)
    ex.step(f"patch grid: {math.ceil(h / p)} × {math.ceil(w / p)} = {_i(math.ceil(h / p) * math.ceil(w / p))} patches")
    ex.step(f"merged: ceil({_i(h)}/{cell}) × ceil({_i(w)}/{cell}) = {-(-h // cell)} × {-(-w // cell)} = {_i(n)}")
    ex.result(f"{_i(n)} tokens per image")
    ex.note("Excludes vision start/end marker tokens; engines that resize images may differ by a row or column.")
    return ex.render()
