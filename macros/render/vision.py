"""Vision-encoder tokens (formulas: :mod:`macros.formulas.vision`)."""

from __future__ import annotations

import math

from .. import formulas as F
from .. import units as U
from ..catalog import Gpu
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _glink, _i, _mlink, _sci
from .registry import COUNT, Arg, macro


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


# Vision towers the VLM worked examples use, each with the language model it feeds (a catalog key
# whose config fields match the VLM's text config) and its sources.
# Qwen2.5-VL-7B-Instruct: config.json vision_config (depth 32, hidden_size 1280, intermediate_size
# 3420, patch_size 14, temporal_patch_size 2, spatial_merge_size 2, out_hidden_size 3584,
# window_size 112, fullatt_block_indexes [7, 15, 23, 31]); text config = Qwen2.5-7B's (28 layers,
# hidden 3584, 28 heads, 4 KV heads, intermediate 18944, vocab 152064, untied);
# preprocessor_config.json min_pixels 3136, max_pixels 12845056.
_QWEN25_VL_CONFIG = "https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/config.json"
_QWEN25_VL_PREPROC = "https://huggingface.co/Qwen/Qwen2.5-VL-7B-Instruct/blob/main/preprocessor_config.json"
TOWERS = {
    "qwen2.5-vl-7b": ("Qwen2.5-VL-7B-Instruct", "qwen2.5-7b",
                      F.VisionTower(depth=32, hidden_size=1280, intermediate_size=3420, patch_size=14,
                                    temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=3584,
                                    window_size=112, full_attention_layers=4),
                      3136, 12845056),
}
_MARKERS = 2  # <|vision_start|> and <|vision_end|> around the image's tokens


def _tower(key: str):
    if key not in TOWERS:
        raise MacroInputError(f"unknown VLM {key!r}; valid: {', '.join(TOWERS)}")
    return TOWERS[key]


@macro("block", args={"vlm": Arg(lambda n, v: v, "VLM key", ", ".join(TOWERS)),
                      "text_tokens": COUNT, "output_tokens": COUNT, "max_pixels": COUNT},
       example='vlm_prefill("qwen2.5-vl-7b", "h100-sxm", 1080, 1920)')
def vlm_prefill(vlm: str, gpu: Gpu, height: int, width: int, text_tokens: int = 200, output_tokens: int = 300,
                max_pixels: int | None = None, mfu: float = 0.5, gpu_util: float = F.DEFAULT_GPU_UTILIZATION) -> str:
    """Worked example: one image's tokens, the encoder and LM prefill it costs, and the two capacity numbers.

    Qwen2-VL resize (`smart_resize` with the checkpoint's `min_pixels`/`max_pixels`, or `max_pixels`
    given), patch grid, tokens = patches / merge² (+ 2 markers); encoder FLOPs (patch embedding,
    blocks, windowed and full attention, merger); LM prefill FLOPs (as `prefill_time`) of text plus
    image tokens; time at `mfu` of the BF16 dense peak; KV per request at prompt + `output_tokens`
    and the concurrent requests the KV budget holds (vision weights counted); prefills per second.
    Each compared with the same request without the image.
    """
    name, lm_key, tower, min_px, max_px_default = _tower(vlm)
    m = inputs.model(lm_key)
    g = gpu
    max_px = int(max_pixels) if max_pixels is not None else max_px_default
    f = inputs.fmt("bf16")
    factor = tower.patch_size * tower.spatial_merge_size
    rh, rw = F.smart_resize(height, width, factor, min_px, max_px)
    gh, gw = rh // tower.patch_size, rw // tower.patch_size
    enc = F.vision_encoder_flops(tower, gh, gw)
    img = enc.tokens + _MARKERS
    peak, label = inputs.peak_flops(g, f)

    def lm_flops(n: int) -> float:
        return F.prefill_matmul_flops(m, n, 1) + F.prefill_attention_flops(m, n)

    with_img, text_only = text_tokens + img, text_tokens
    t_enc = F.prefill_time(enc.total, peak, mfu)
    t_img = F.prefill_time(lm_flops(with_img), peak, mfu)
    t_txt = F.prefill_time(lm_flops(text_only), peak, mfu)
    kv = F.kv_bytes_per_sequence_paged(m, with_img + output_tokens, f)
    kv_txt = F.kv_bytes_per_sequence_paged(m, text_only + output_tokens, f)
    tower_params = (enc.patch_embed / (2 * enc.patches)
                    + enc.blocks_linear / (2 * enc.patches)
                    + enc.merger / (2 * enc.tokens))
    weights = F.weight_bytes(m, f) + tower_params * 2
    budget = F.kv_budget_bytes(g.engine_memory_bytes, weights, gpu_util)
    n_img = F.max_concurrent_sequences(budget, kv)
    n_txt = F.max_concurrent_sequences(budget, kv_txt)
    ex = Example(f"one {_i(width)} × {_i(height)} image on {name}, {g.name}")
    ex.formula("resize: each side to a multiple of patch × merge, area within [min_pixels, max_pixels]")
    ex.formula("image tokens = (H′ / patch) × (W′ / patch) / merge² + 2 markers")
    ex.formula("prefill time = (encoder FLOPs + LM prefill FLOPs) / (peak × MFU)")
    ex.input("patch / merge / min_pixels / max_pixels",
             f"{tower.patch_size} / {tower.spatial_merge_size} × {tower.spatial_merge_size} / "
             f"{_i(min_px)} / {_i(max_px)}",
             f"[config.json]({_QWEN25_VL_CONFIG}), [preprocessor_config.json]({_QWEN25_VL_PREPROC})"
             + (" (max_pixels given)" if max_pixels is not None else ""))
    ex.input("vision encoder", f"{tower.depth} blocks, hidden {tower.hidden_size}, "
             f"{tower.full_attention_layers} full-attention blocks, the rest windowed",
             f"[config.json]({_QWEN25_VL_CONFIG})")
    ex.input("language model", _mlink(m), "same text config as Qwen2.5-VL-7B")
    ex.input(f"peak ({label}) / MFU", f"{inputs.fmt_peak(f, peak)} / {_bits(mfu)}", f"{_glink(g)} / assumption")
    ex.input("text tokens / output tokens", f"{_i(text_tokens)} / {_i(output_tokens)}", GIVEN)
    ex.step(f"resize: {_i(width)} × {_i(height)} → {_i(rw)} × {_i(rh)} ({_i(rw * rh)} pixels)")
    ex.step(f"patches: {gw} × {gh} = {_i(enc.patches)}; tokens: {_i(enc.patches)} / {tower.spatial_merge_size ** 2} "
            f"= {_i(enc.tokens)}, + {_MARKERS} markers = {_i(img)}")
    ex.step(f"encoder: {_sci(enc.total)} FLOPs (attention {_sci(enc.attention)}) → {U.fmt_seconds(t_enc)}")
    ex.step(f"LM prefill: {_i(with_img)} tokens, {_sci(lm_flops(with_img))} FLOPs → {U.fmt_seconds(t_img)} "
            f"(text alone: {_i(text_only)} tokens, {U.fmt_seconds(t_txt)})")
    ex.step(f"KV per request at {_i(with_img + output_tokens)} tokens: {U.fmt_gb(kv)} "
            f"(text alone: {U.fmt_gb(kv_txt)})")
    ex.step(f"KV budget {U.fmt_gb(budget)} (weights incl. vision tower {U.fmt_gb(weights)}) → "
            f"{_i(n_img)} concurrent requests with the image, {_i(n_txt)} without")
    ex.result(f"{_i(img)} tokens per image; prefill {U.fmt_seconds(t_enc + t_img)} per request "
              f"(at most {U.fmt_num(1 / (t_enc + t_img))} such prefills/s per GPU, against "
              f"{U.fmt_num(1 / t_txt)} text-only)")
    ex.note("Compute-bound estimates at the stated MFU; the encoder's windowed attention ignores edge padding. "
            "The KV budget uses the fixed activation and runtime allowances of `memory_budget`; vLLM 0.11 "
            "instead profiles the encoder and its cache on the largest image at startup, and that peak "
            "comes out of the KV pool.")
    return ex.render()
