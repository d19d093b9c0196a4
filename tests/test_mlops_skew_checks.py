"""Q69: each skew check passes a matching training/serving pair and catches the broken one.

Expected values are worked by hand on the fixtures (a pure-red image, an 8x8 image with a white line
every fourth column, a three-field record), never taken from the code under test.
"""

from __future__ import annotations

import pytest

from examples.mlops.skew_checks import (check_channel_order, check_chat_template, check_feature_defaults,
                                        check_resize, render_chat, resize_area, resize_bilinear,
                                        resize_nearest, stripes)

# A ChatML-style template of the kind models ship in tokenizer_config.json ...
CHATML = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
          "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
# ... and a later revision that dropped the newline after <|im_end|>: a one-character change.
CHATML_NO_NEWLINE = CHATML.replace("<|im_end|>\n", "<|im_end|>")
# A Llama-2-style template that prepends the BOS token itself.
WITH_BOS = "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
CONVERSATIONS = [[{"role": "user", "content": "Hi"}],
                 [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"}]]


def test_render_chat_matches_hand_rendering():
    assert render_chat(CHATML, CONVERSATIONS[0]) == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    assert render_chat(WITH_BOS, CONVERSATIONS[0], bos_token="<s>") == "<s>[user] Hi\n"


def test_chat_template_same_revision_passes():
    def same(c):
        return render_chat(CHATML, c)
    assert check_chat_template(same, same, CONVERSATIONS) == []


def test_chat_template_revision_change_is_caught_with_position():
    findings = check_chat_template(lambda c: render_chat(CHATML, c),
                                   lambda c: render_chat(CHATML_NO_NEWLINE, c), CONVERSATIONS)
    assert len(findings) == 2
    # "<|im_start|>user\nHi<|im_end|>" is 12 + 5 + 2 + 10 = 29 characters; the newline is the 30th.
    assert "conversation 0: first difference at character 29" in str(findings[0])


def test_chat_template_missing_generation_prompt_is_caught():
    findings = check_chat_template(lambda c: render_chat(CHATML, c),
                                   lambda c: render_chat(CHATML, c, add_generation_prompt=False), CONVERSATIONS)
    # The generation prompt starts right after the first turn's 30 characters (29 + the newline).
    assert len(findings) == 2
    assert "character 30: trained '<|im_start|>assistan' vs served ''" in str(findings[0])


def test_chat_template_double_bos_is_caught():
    # The serving code prepends BOS again to a template that already renders it.
    findings = check_chat_template(lambda c: render_chat(WITH_BOS, c, bos_token="<s>"),
                                   lambda c: "<s>" + render_chat(WITH_BOS, c, bos_token="<s>"), CONVERSATIONS[:1])
    # "<s>" is 3 characters: the strings agree on it and part ways at index 3.
    assert len(findings) == 1 and "first difference at character 3" in str(findings[0])


MEAN, STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)  # the ImageNet constants torchvision documents


def to_chw(img, order=(0, 1, 2)):
    """Scale to [0, 1], normalise per channel, transpose to planes; ``order`` picks input channels."""
    return [[[(px[src] / 255 - MEAN[dst]) / STD[dst] for px in row] for row in img]
            for dst, src in enumerate(order)]


def test_channel_order_rgb_passes():
    assert check_channel_order(to_chw) == []


def test_channel_order_bgr_swap_is_caught():
    findings = check_channel_order(lambda img: to_chw(img, order=(2, 1, 0)))
    assert len(findings) == 1
    # Plane 2 holds the red 255: (1 - 0.406) / 0.225 = 2.64; plane 0 holds 0: (0 - 0.485) / 0.229 = -2.118.
    assert "peaks in output channel 2" in str(findings[0])
    assert "2.64" in str(findings[0]) and "-2.118" in str(findings[0])


def test_channel_order_rejects_wrong_plane_count():
    with pytest.raises(ValueError, match="3 channel planes, got 1"):
        check_channel_order(lambda img: to_chw(img)[:1])


def test_resizers_on_the_stripe_fixture_by_hand():
    img = stripes(8, 4)  # white at columns 0 and 4, black elsewhere
    # area: each output pixel averages a 4x4 block holding one white column: 255 / 4 = 63.75
    assert resize_area(img, 2, 2)[0][0] == [63.75] * 3
    # bilinear: centre of output column 0 maps to source x = 1.5, between black columns 1 and 2
    assert resize_bilinear(img, 2, 2)[0][0] == [0.0] * 3
    # nearest: source column floor(0 x 4) = 0, the white line
    assert resize_nearest(img, 2, 2)[0][0] == [255, 255, 255]


def test_resize_same_method_passes():
    assert check_resize(resize_area, resize_area, stripes(), (2, 2)) == []


@pytest.mark.parametrize("served, worst", [(resize_bilinear, "63.75"), (resize_nearest, "191.25")])
def test_resize_method_change_is_caught(served, worst):
    findings = check_resize(resize_area, served, stripes(), (2, 2))
    assert len(findings) == 1 and f"max difference {worst} grey levels" in str(findings[0])


def test_smooth_fixture_hides_the_difference():
    # Why the fixture must have edges: on a flat image every interpolation agrees.
    flat = [[(128, 128, 128)] * 8 for _ in range(8)]
    assert check_resize(resize_area, resize_nearest, flat, (2, 2)) == []


def test_resize_rejects_ragged_image():
    with pytest.raises(ValueError, match="rectangular"):
        resize_area([[(0, 0, 0)], [(0, 0, 0), (1, 1, 1)]], 1, 1)


TRAIN_DEFAULTS = {"age": 35.0, "country": "unknown", "sessions_7d": 0}  # medians/sentinels from training


def train_fill(rec):
    return {**TRAIN_DEFAULTS, **rec}


def test_feature_defaults_same_fill_passes():
    rec = {"age": 52.0, "country": "DE", "sessions_7d": 3}
    assert check_feature_defaults(train_fill, train_fill, rec, list(rec)) == []


def test_feature_default_drift_is_caught():
    def serve_fill(rec):  # the online service fills numerics with 0 and strings with ""
        return {"age": 0.0, "country": "", "sessions_7d": 0, **rec}
    rec = {"age": 52.0, "country": "DE", "sessions_7d": 3}
    findings = [str(f) for f in check_feature_defaults(train_fill, serve_fill, rec, list(rec))]
    assert findings == ["feature-default: missing 'age' becomes 35.0 in training, 0.0 in serving",
                        "feature-default: missing 'country' becomes 'unknown' in training, '' in serving"]


def test_feature_defaults_unknown_feature_is_named():
    with pytest.raises(ValueError, match="feature 'income' is not in the fixture record"):
        check_feature_defaults(train_fill, train_fill, {"age": 1.0}, ["income"])
