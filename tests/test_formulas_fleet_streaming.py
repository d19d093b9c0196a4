"""Streaming leaks (macros/formulas/fleet_streaming.py, macros/render/fleet_streaming.py, Q150): Little's law
and the worked example against values computed by hand from Llama 3.1 70B's config, bad input."""

from __future__ import annotations

import pytest

from macros import formulas as F
from macros import units as U
from macros.errors import MacroInputError
from macros.render import MACROS


def test_littles_law_by_hand():
    # 2 disconnects/s held 30 s -> 60 requests; x 1e8 bytes = 6e9; at 50 ms per token, 1,200 tokens/s.
    w = F.leaked_work(2.0, 30.0, 1e8, 0.05)
    assert w.leaked_requests == pytest.approx(60.0)
    assert w.leaked_kv_bytes == pytest.approx(6e9)
    assert w.wasted_tokens_per_s == pytest.approx(1200.0)


def test_run_to_max_tokens_by_hand():
    assert F.run_to_max_tokens_s(1500, 0.04) == pytest.approx(60.0)
    assert F.run_to_max_tokens_s(0, 0.04) == 0


@pytest.mark.parametrize("call, match", [
    (lambda: F.leaked_work(-1, 1, 1, 1), "disconnect_rate_per_s"),
    (lambda: F.leaked_work(1, -1, 1, 1), "detect_s"),
    (lambda: F.leaked_work(1, 1, 0, 1), "kv_bytes_per_request"),
    (lambda: F.leaked_work(1, 1, 1, 0), "tpot_s"),
    (lambda: F.run_to_max_tokens_s(-5, 0.04), "remaining_tokens"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


# Llama 3.1 70B: 80 layers x 8 KV heads x 128 head_dim x (K and V) x 1 byte (FP8) per token.
_KV_TOKEN_FP8 = 80 * 8 * 128 * 2 * 1


def test_worked_example_against_the_config_by_hand():
    html = MACROS["leaked_kv"]("llama-3.1-70b", kv_dtype="fp8", request_rate=20, abandon_share=0.05,
                               context="4K", tpot_ms=40, remaining_tokens=1500, detect=[["fast", 0.04]])
    kv_req = _KV_TOKEN_FP8 * 4096
    assert U.fmt_bytes(kv_req) in html
    # never noticed: 1 disconnect/s x (1,500 x 40 ms = 60 s) = 60 requests
    assert U.fmt_bytes(60 * kv_req) in html
    assert U.fmt_rate(60 / 0.04) in html
    # noticed in 40 ms: 0.04 requests
    assert U.fmt_bytes(0.04 * kv_req) in html


@pytest.mark.parametrize("detect, match", [
    ([], "non-empty list"),
    ([["x"]], r"\[label, seconds >= 0\]"),
    ([["x", -1]], r"\[label, seconds >= 0\]"),
    ([[3, 1]], r"\[label, seconds >= 0\]"),
])
def test_bad_scenarios_are_rejected(detect, match):
    with pytest.raises(MacroInputError, match=match):
        MACROS["leaked_kv"]("llama-3.1-70b", request_rate=20, abandon_share=0.05, context="4K", tpot_ms=40,
                            remaining_tokens=1500, detect=detect)


def test_abandon_share_above_one_is_rejected():
    with pytest.raises(MacroInputError, match="abandon_share"):
        MACROS["leaked_kv"]("llama-3.1-70b", request_rate=20, abandon_share=1.5, context="4K", tpot_ms=40,
                            remaining_tokens=1500, detect=[["x", 1]])
