"""Guardrails in the serving path (Q149): macros/formulas/guardrails.py against hand-computed values and the
windows NeMo Guardrails 0.24.1's RollingBuffer produces; the worked examples and the figure against them."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

from macros import formulas as F
from macros import units as U
from macros.errors import MacroInputError
from macros.render import MACROS
from tests.test_fleet_ops import _ticks
from tests.test_fleet_ops import val as _val

# Llama 3.1 8B (the Llama Guard 3 8B architecture): q, o 4096 x 4096; k, v 4096 x 1024; MLP 3 x 4096 x 14336;
# 65 RMSNorm vectors; LM head 128256 x 4096 at one sampled position; 32 layers x 32 heads x head_dim 128.
_LAYER = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336
_H100_BF16 = 989.5e12


def _llama8b_prefill_s(n: int, mfu: float = 0.5) -> float:
    matmul = 2 * (32 * _LAYER + 65 * 4096) * n + 2 * 128256 * 4096
    attention = 2 * 32 * (128 + 128) * 32 * n * (n + 1) // 2
    return (matmul + attention) / (_H100_BF16 * mfu)


def test_input_guard_serial_and_parallel_by_hand():
    assert F.serial_guard_ttft(0.141, 0.077) == pytest.approx(0.218)
    assert F.parallel_guard_ttft(0.141, 0.077) == 0.141
    assert F.parallel_guard_ttft(0.05, 0.077) == 0.077      # a guard slower than the prefill sets the pace
    with pytest.raises(ValueError, match="guard_s"):
        F.serial_guard_ttft(0.1, -1)


def test_rolling_checks_match_nemo_guardrails_rolling_buffer():
    # Windows printed by running RollingBuffer(buffer_context_size=2, buffer_chunk_size=5) from the
    # nemoguardrails 0.24.1 wheel over 12, 10 and 8 streamed tokens: (window length, new tokens sent).
    assert F.rolling_checks(12, 5, 2) == [(5, 5, 5), (8, 5, 3), (11, 5, 3), (12, 3, 1)]
    assert F.rolling_checks(10, 5, 2) == [(5, 5, 5), (8, 5, 3), (10, 4, 2)]
    # ending on a window boundary leaves the context in the buffer, which is checked once more with nothing new
    assert F.rolling_checks(8, 5, 2) == [(5, 5, 5), (8, 5, 3), (8, 2, 0)]
    # c = 0 is taken as plain chunks here; NeMo Guardrails 0.24.1 keeps buffer[-0:] (the whole buffer) instead and
    # checks the last 5 tokens at every token after the first window, which the page warns about
    assert F.rolling_checks(10, 5, 0) == [(5, 5, 5), (10, 5, 5)]
    assert F.rolling_checks(3, 5, 2) == [(3, 3, 3)]
    assert sum(new for _l, _w, new in F.rolling_checks(500, 200, 50)) == 500
    with pytest.raises(ValueError, match="smaller than chunk_tokens"):
        F.rolling_checks(10, 5, 5)


def test_chunk_release_times_by_hand():
    # TTFT 1 s, TPOT 0.1 s, windows ending at tokens 5, 8, 11, 12 -> ready at 1.4, 1.7, 2.0, 2.1 s.
    fast = F.chunk_release_times(1.0, 0.1, 12, 5, 0.05, 2)
    assert fast == pytest.approx([1.45, 1.75, 2.05, 2.15])
    # a 0.5 s check falls behind: each release waits for the previous one
    slow = F.chunk_release_times(1.0, 0.1, 12, 5, 0.5, 2)
    assert slow == pytest.approx([1.9, 2.4, 2.9, 3.4])
    assert F.guard_keeps_up(0.1, 5, 0.3, 2) and not F.guard_keeps_up(0.1, 5, 0.5, 2)
    assert F.first_chunk_holdback(0.02, 200, 0.1) == pytest.approx(199 * 0.02 + 0.1)
    assert fast[0] - 1.0 == pytest.approx(F.first_chunk_holdback(0.1, 5, 0.05))


def test_guard_tokens_and_gpu_share_by_hand():
    # windows of 5, 5, 5, 3 tokens; each check carries template 600 + prompt 2,000; plus the input check
    assert F.guard_tokens_per_request(600, 2000, 12, 5, 2) == 4 * 2600 + 18 + 2600
    assert F.guard_tokens_per_request(600, 2000, 12, 5, 2, prompt_in_output_checks=False) == 4 * 600 + 18 + 2600
    assert F.guard_tokens_per_request(600, 2000, 12, 5, 2, input_check=False) == 4 * 2600 + 18
    assert F.guard_gpu_share(20, 2600, 26000) == pytest.approx(2.0)
    with pytest.raises(ValueError, match="guard_prefill_tokens_per_s"):
        F.guard_gpu_share(20, 2600, 0)


_KW = dict(main_fmt="fp8", main_gpus=2, prompt=2000, output=500, tpot_s=0.02, template=600, context=50,
           chunks=[64, 128, 200])


def test_placement_example_uses_the_guard_prefill():
    html = MACROS["guardrail_placement"]("llama-3.1-70b", "llama-3.1-8b", "h100-sxm", **_KW)
    g_in = _llama8b_prefill_s(2600)
    assert f"input guard call = {U.fmt_seconds(g_in)} (2,600 tokens)" in html
    assert html.count("| Serial input guard + chunked output guard, k = ") == 3
    # k = 200, c = 50 over 500 tokens ends on a window boundary: the last token shown is released by the check of
    # the window ending at token 500, not by the final check of the 50 leftover context tokens, which shows nothing
    ttft = float(re.search(r"\| No guard \| ([0-9.]+) ms \|", html).group(1)) / 1000
    start = ttft + g_in
    last_window = F.chunk_release_times(start, 0.02, 500, 200, _llama8b_prefill_s(2800), 50)[-2]
    row = re.search(r"\| Serial input guard \+ chunked output guard, k = 200 \|[^\n]*\| ([^|]+) \|\n", html)
    assert row.group(1).strip() == U.fmt_seconds(last_window)
    with pytest.raises(MacroInputError, match="context"):
        MACROS["guardrail_placement"]("llama-3.1-70b", "llama-3.1-8b", "h100-sxm", **{**_KW, "chunks": [32]})
    with pytest.raises(MacroInputError, match="chunks"):
        MACROS["guardrail_placement"]("llama-3.1-70b", "llama-3.1-8b", "h100-sxm", **{**_KW, "chunks": []})


def test_gpu_share_example_by_hand():
    html = MACROS["guard_gpu_share"]("llama-3.1-8b", "h100-sxm", rate_rps=20, prompt=2000, output=500,
                                     template=600, windows=[[0, 0], [200, 50]])
    one = _llama8b_prefill_s(2600)
    assert f"| none (input guard only) | 1 + 0 | 2,600 | {U.fmt_seconds(one)} | {U.fmt_num(20 * one)} |" in html
    # 500 tokens, k = 200, c = 50: 200 new, then 150 and 150 new (windows of 200), and the stream ends on a
    # window boundary, so the 50 context tokens left in the buffer are checked once more: 4 checks
    windows = [w for _l, w, _n in F.rolling_checks(500, 200, 50)]
    assert windows == [200, 200, 200, 50]
    secs = one + sum(_llama8b_prefill_s(2600 + w) for w in windows)
    # prefix caching: the template is shared by every check of one role across requests; the input check's
    # prompt is not reusable by the output checks (the template names the role first), so the first output check
    # prefills prompt + window again and later ones only their window
    cached = _llama8b_prefill_s(2000) + _llama8b_prefill_s(2200) + 2 * _llama8b_prefill_s(200) \
        + _llama8b_prefill_s(50)
    row = (f"| k = 200, c = 50 | 1 + 4 | {2600 + 4 * 2600 + 650:,} | {U.fmt_seconds(secs)} | "
           f"{U.fmt_num(20 * secs)} | {U.fmt_num(20 * cached)} |")
    assert row in html
    assert f"| none (input guard only) | 1 + 0 | 2,600 | {U.fmt_seconds(one)} | {U.fmt_num(20 * one)} | " \
        f"{U.fmt_num(20 * _llama8b_prefill_s(2000))} |" in html
    with pytest.raises(MacroInputError, match="windows"):
        MACROS["guard_gpu_share"]("llama-3.1-8b", "h100-sxm", windows=[[50, 50]])


def test_placement_figure_plots_the_table_values_where_the_axes_say():
    html = MACROS["guardrail_placement_svg"]("llama-3.1-70b", "llama-3.1-8b", "h100-sxm", **_KW)
    table = MACROS["guardrail_placement"]("llama-3.1-70b", "llama-3.1-8b", "h100-sxm", **_KW)
    svg = ET.fromstring(re.search(r"<svg\b.*?</svg>", html, re.S).group(0))
    xt, yt = _ticks(svg)
    assert len(xt) >= 3 and len(yt) >= 3
    points = [e for e in svg.iter() if e.get("class") == "chunk"]
    assert [int(e.get("data-k")) for e in points] == [64, 128, 200]
    for el in points:
        k, s = int(el.get("data-k")), float(el.get("data-seconds"))
        # the same number in the table row for this chunk size, and at the right place on both axes
        assert f"k = {k} | {U.fmt_seconds(s)} |" in table
        assert _val(xt, float(el.get("cx"))) == pytest.approx(k, rel=0.01)
        assert _val(yt, float(el.get("cy"))) == pytest.approx(s, rel=0.01)
    flats = {e.get("data-label"): float(e.get("data-seconds")) for e in svg.iter()
             if e.get("class") == "placement" and e.get("data-seconds")}
    g_in = _llama8b_prefill_s(2600)
    assert flats["serial input guard"] - flats["no guard"] == pytest.approx(g_in)
    assert flats["parallel input guard"] == pytest.approx(max(flats["no guard"], g_in))
    assert f"| Input guard, serial | {U.fmt_seconds(flats['serial input guard'])} |" in table
    # the first chunk's hold-back is (k - 1) x TPOT + the guard's check of template + prompt + k tokens
    first = float(points[0].get("data-seconds"))
    assert first - flats["serial input guard"] == pytest.approx(63 * 0.02 + _llama8b_prefill_s(2664))
    assert svg.get("role") == "img" and svg.find("title") is not None and svg.find("desc") is not None
