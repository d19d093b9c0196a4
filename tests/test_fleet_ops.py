"""Fleet operation formulas (macros/formulas/fleet_ops.py) and their macros, against hand-computed figures
and the definitions in vLLM 0.11's benchmark (vllm/benchmarks/serve.py)."""

from __future__ import annotations

import re

import pytest

from macros import formulas as F
from macros.errors import MacroInputError
from macros.render import MACROS

# The eight requests of the Q142 worked example: (TTFT s, E2E s, output tokens).
Q142 = [[0.2, 4.2, 101], [0.3, 12.3, 301], [0.9, 4.9, 101], [0.25, 1.45, 21], [0.4, 2.4, 51],
        [0.35, 24.35, 601], [1.2, 2.2, 11], [0.15, 3.15, 51]]


def reqs(rows):
    return [F.RequestTiming(*r) for r in rows]


# --- TPOT, ITL, goodput ------------------------------------------------------------------------------

def test_tpot_excludes_the_first_token():
    # (8.4 - 0.4) / 200 = 0.04 s; the naive E2E / tokens would give 8.4 / 201 = 0.0418 s
    assert F.tpot_from_e2e(8.4, 0.4, 201) == pytest.approx(0.04)
    assert F.e2e_latency(0.4, 0.04, 201) == pytest.approx(8.4)


@pytest.mark.parametrize("args, match", [((8.4, 0.4, 1), "at least 2"), ((0.3, 0.4, 10), "shorter than ttft"),
                                         ((8.4, -1, 10), "ttft_s"), ((8.4, 0.4, 2.5), "output_tokens")])
def test_tpot_rejects_bad_input(args, match):
    with pytest.raises(ValueError, match=match):
        F.tpot_from_e2e(*args)


def test_goodput_of_the_q142_sample_by_hand():
    # TPOTs: 40, 40, 40, 60, 40, 40, 100, 60 ms. TTFT <= 0.5 s: all but #3 (0.9) and #7 (1.2) -> 6.
    # TPOT <= 50 ms: #1, #2, #3, #5, #6 -> 5. Both: #1, #2, #5, #6 -> 4.
    g = F.goodput(reqs(Q142), 30, 0.5, 0.05)
    assert (g.requests, g.ttft_ok, g.tpot_ok, g.good) == (8, 6, 5, 4)
    assert g.attainment == 0.5
    assert g.rate == pytest.approx(4 / 30) and g.throughput == pytest.approx(8 / 30)


def test_mean_tpot_and_pooled_itl_weigh_differently():
    # mean TPOT = (5 x 0.04 + 2 x 0.06 + 0.1) / 8 = 0.0525 s
    # pooled ITL = (4 + 12 + 4 + 1.2 + 2 + 24 + 1 + 3) / (100 + 300 + 100 + 20 + 50 + 600 + 10 + 50) = 51.2 / 1230
    assert F.mean_tpot(reqs(Q142)) == pytest.approx(0.0525)
    assert F.pooled_mean_itl(reqs(Q142)) == pytest.approx(51.2 / 1230)


def test_goodput_limits_are_inclusive_and_one_token_requests_have_zero_tpot():
    # vLLM 0.11: good when limit >= value; a one-token request counts with TPOT 0.
    g = F.goodput(reqs([[0.5, 0.5, 1], [0.5, 2.5, 3]]), 1, 0.5, 1.0)
    assert g.good == 2
    g = F.goodput(reqs([[0.5, 0.5, 1], [0.5, 2.5, 3]]), 1, 0.5, 0.999)
    assert (g.ttft_ok, g.tpot_ok, g.good) == (2, 1, 1)
    with pytest.raises(ValueError, match="at least one request"):
        F.goodput([], 1, 0.5, 0.05)


def test_goodput_macro_shows_the_table_the_bounds_and_both_means():
    html = MACROS["goodput_example"](Q142, duration_s=30, ttft_ms=500, tpot_ms=50)
    assert "both 4/8 (50.0%)" in html
    # Fréchet bounds from the marginals: 6 + 5 - 8 = 3 up to min(6, 5) = 5
    assert "from 3/8 (37.5%) to 5/8 (62.5%)" in html
    assert "mean TPOT = 52.5 ms; mean ITL (pooled gaps) = 41.6 ms" in html
    assert len(re.findall(r"\*\*yes\*\*", html)) == 4
    assert "the mean ITL (41.6 ms) meets the TPOT limit while the mean TPOT (52.5 ms) misses it" in html


@pytest.mark.parametrize("bad, match", [([], "non-empty"), ([[0.2, 4.2]], "item 1"),
                                        ([[0.2, 4.2, 10], [0.5, 0.4, 3]], "item 2: .*shorter")])
def test_goodput_macro_names_the_bad_request(bad, match):
    with pytest.raises(MacroInputError, match=match):
        MACROS["goodput_example"](bad, duration_s=30, ttft_ms=500, tpot_ms=50)


def test_tpot_macro():
    html = MACROS["tpot_example"](8.4, 0.4, 201)
    assert "8.00 s / 200 = 40.0 ms" in html and "25 tokens/s" in html
    with pytest.raises(MacroInputError, match="output_tokens"):
        MACROS["tpot_example"](8.4, 0.4, 1)
