"""Vision-language token arithmetic (macros/formulas/vision.py) against the models' documented figures."""

from __future__ import annotations

import re

import pytest

from macros.errors import MacroInputError
from macros.formulas import VisionTower, smart_resize, vision_encoder_flops, vision_tokens
from macros.render import MACROS

# Qwen2.5-VL-7B-Instruct preprocessor_config.json: min_pixels 3136, max_pixels 12845056; the model card:
# "The default range for the number of visual tokens per image in the model is 4-16384".
MIN_PX, MAX_PX = 3136, 12845056
QWEN25_VL_7B = VisionTower(depth=32, hidden_size=1280, intermediate_size=3420, patch_size=14,
                           temporal_patch_size=2, spatial_merge_size=2, out_hidden_size=3584,
                           window_size=112, full_attention_layers=4)


def _tokens(h: int, w: int, max_px: int = MAX_PX) -> int:
    rh, rw = smart_resize(h, w, 28, MIN_PX, max_px)
    assert rh % 28 == 0 and rw % 28 == 0
    return (rh // 28) * (rw // 28)


def test_qwen_token_range_from_the_model_card():
    assert _tokens(10, 10) == 4                       # the minimum: 56 x 56 pixels, 2 x 2 tokens
    assert _tokens(3584, 3584) == 16384               # 128 x 28 a side = max_pixels exactly
    for h, w in [(4032, 3024), (8000, 6000), (20000, 200), (3000, 3000)]:
        assert 4 <= _tokens(h, w) <= 16384


def test_qwen_resize_by_hand():
    # 1920 x 1080: 1080/28 = 38.57 -> 39 x 28 = 1092; 1920/28 = 68.57 -> 69 x 28 = 1932;
    # 1092 x 1932 = 2,109,744 pixels, inside [3136, 12845056]; tokens 39 x 69 = 2,691.
    assert smart_resize(1080, 1920, 28, MIN_PX, MAX_PX) == (1092, 1932)
    assert _tokens(1080, 1920) == 2691
    # the older default cap of 1,280 tokens (28*28*1280 = 1,003,520 pixels): 4032 x 3024 must shrink.
    # beta = sqrt(4032*3024 / 1003520) = 3.4857; 3024/3.4857/28 = 30.98 -> 30 x 28 = 840;
    # 4032/3.4857/28 = 41.31 -> 41 x 28 = 1148; 840 x 1148 = 964,320 <= 1,003,520.
    assert smart_resize(3024, 4032, 28, MIN_PX, 28 * 28 * 1280) == (840, 1148)
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(10, 2500, 28, MIN_PX, MAX_PX)


def test_gemma3_fixed_256_tokens():
    # Gemma 3 config.json: vision_config image_size 896, patch_size 14, mm_tokens_per_image 256;
    # the projector average-pools the 64 x 64 patch grid with a 4 x 4 kernel (64 / sqrt(256) = 4).
    assert vision_tokens(896, 896, 14, 4) == 256


def test_llama32_vision_tile_patches():
    # Llama 3.2 Vision (Mllama) vision_config: image_size 560, patch_size 14, max_num_tiles 4;
    # transformers' MllamaVisionModel: num_patches = (image_size // patch_size) ** 2 + 1 (class token).
    per_tile = vision_tokens(560, 560, 14, 1) + 1
    assert per_tile == 1601
    assert 4 * per_tile == 6404


def test_encoder_parameters_by_hand():
    # Linear parameters from config.json: patch embed 3*2*14*14*1280 = 1,505,280; per block
    # 4*1280^2 + 3*1280*3420 = 19,686,400, x 32 = 629,964,800; merger 5120^2 + 5120*3584 = 44,564,480.
    # FLOPs per patch (2 per weight) must reproduce them for a grid without attention cost.
    e = vision_encoder_flops(QWEN25_VL_7B, 2, 2)      # 4 patches, 1 token
    assert e.patches == 4 and e.tokens == 1
    assert e.patch_embed / (2 * 4) == 1_505_280
    assert e.blocks_linear / (2 * 4) == 629_964_800
    assert e.merger / 2 == 44_564_480
    # attention with 4 patches: every layer sees all 4 (window of 64 patches > 4): 4 * d * P * P * depth
    assert e.attention == 4 * 1280 * 4 * 4 * 32


def test_encoder_attention_windowed_vs_full():
    # 40 x 40 patches = 1,600: full layers 4 x 1280 x 1600^2 each, windowed 4 x 1280 x 1600 x 64 each.
    e = vision_encoder_flops(QWEN25_VL_7B, 40, 40)
    assert e.attention == 4 * 1280 * 1600 * (4 * 1600 + 28 * 64)
    with pytest.raises(ValueError, match="merge size"):
        vision_encoder_flops(QWEN25_VL_7B, 39, 40)


def test_vlm_prefill_macro():
    html = MACROS["vlm_prefill"]("qwen2.5-vl-7b", "h100-sxm", 1080, 1920)
    assert "1,920 × 1,080 → 1,932 × 1,092" in html
    assert re.search(r"tokens: 10,764 / 4 = 2,691, \+ 2 markers = 2,693", html)
    n_img, n_txt = map(lambda s: int(s.replace(",", "")),
                       re.search(r"→ ([\d,]+) concurrent requests with the image, ([\d,]+) without", html).groups())
    assert n_img < n_txt
    with pytest.raises(MacroInputError, match="unknown VLM"):
        MACROS["vlm_prefill"]("llava-1.5", "h100-sxm", 1080, 1920)
