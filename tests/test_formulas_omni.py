"""Speech pipelines and diffusion decode (macros/formulas/omni.py, macros/render/omni.py, Q158): first-audio
latency, the gap after a small first chunk and tokens per forward pass against hand arithmetic; the worked
examples' figures; bad input named."""

from __future__ import annotations

import pytest

from macros.formulas import omni as OM
from macros.render import MACROS


def test_frame_seconds_qwen3_omni():
    # upsample (8, 5, 4, 3) x (2, 2) = 1,920 samples per frame at 24 kHz: 80 ms, 12.5 frames per second
    assert OM.frame_seconds(8 * 5 * 4 * 3 * 2 * 2, 24_000) == pytest.approx(0.080)


def test_first_audio_by_hand():
    fa = OM.first_audio(0.120, 8, 0.015, 0.020, 4, 0.012, 0.010, 0.030)
    assert fa.thinker_lead_s == pytest.approx(0.120)         # 8 x 15 ms
    assert fa.first_chunk_frames_s == pytest.approx(0.048)   # 4 x 12 ms
    assert fa.total_s == pytest.approx(0.120 + 0.120 + 0.020 + 0.048 + 0.010 + 0.030)


def test_stream_gap_by_hand():
    # from the first chunk's last frame: it plays after its 10 ms codec for 4 x 80 = 320 ms, so until 330 ms;
    # chunk 2 is ready after 25 x 12 = 300 ms of talker steps + its 10 ms codec = 310 ms: no gap
    assert OM.stream_gap_s(4, 25, 0.012, 0.080, 0.010, 0.010) == 0.0
    # at 30 ms per frame chunk 2 is ready at 750 + 10 = 760 ms, playback ran out at 330 ms: 430 ms of silence
    assert OM.stream_gap_s(4, 25, 0.030, 0.080, 0.010, 0.010) == pytest.approx(0.430)
    # a longer second decode (25 frames plus left context against 4) adds its difference: 750 + 40 - 330 = 460 ms
    assert OM.stream_gap_s(4, 25, 0.030, 0.080, 0.010, 0.040) == pytest.approx(0.460)


def test_tokens_per_forward():
    assert OM.tokens_per_forward(32, 8) == 4
    assert OM.tokens_per_forward(4, 4) == 1                  # one token per step: no gain over AR
    with pytest.raises(ValueError, match="exceeds the block"):
        OM.tokens_per_forward(4, 5)


def test_forward_pass_by_hand():
    # 1 sequence: 16e9 bytes of weights + 1e9 of KV over 3.35e12 B/s; 32 positions x 1.6e10 FLOPs over 989.5e12
    p = OM.forward_pass(1, 32, 4, 16e9, 1e9, 1.6e10, 3.35e12, 989.5e12)
    assert p.read_s == pytest.approx(17e9 / 3.35e12)
    assert p.compute_s == pytest.approx(32 * 1.6e10 / 989.5e12)
    assert p.tokens_per_s == pytest.approx(4 / (17e9 / 3.35e12))
    big = OM.forward_pass(64, 32, 4, 16e9, 1e9, 1.6e10, 3.35e12, 989.5e12)
    assert big.time_s == big.compute_s and big.tokens == 256


@pytest.mark.parametrize("call, match", [
    (lambda: OM.frame_seconds(0, 24_000), "total_upsample"),
    (lambda: OM.first_audio(-1, 0, 0, 0, 1, 0, 0), "thinker_prefill_s"),
    (lambda: OM.stream_gap_s(4, 25, 0.01, 0, 0, 0), "frame_s"),
    (lambda: OM.stream_gap_s(4, 25, 0.01, 0.08, 0, -1), "next_codec_s"),
    (lambda: OM.forward_pass(1, 1, 2, 1, 0, 1, 1, 1), "exceeds positions_per_seq"),
])
def test_bad_input_is_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_first_audio_example_figures():
    html = MACROS["omni_first_audio"](prefill_ms=120, lead_tokens=8, thinker_tpot_ms=15, talker_prefill_ms=20,
                                      frame_step_ms=12, codec_ms=10, transport_ms=30, reply_tokens=150,
                                      reply_audio_s=12)
    assert "80.0 ms" in html and "150 frames" in html       # 12 s / 80 ms
    assert "| **first audio** | 348.0 ms | 600.0 ms | 4.29 s |" in html
    # serial: 120 + 150 x 15 + 20 + 150 x 12 + 7 chunks x 10 + 30 ms = 4,290 ms (chunks: 4, then 6 of 25 = 154)
    assert "gap 0 s" in html
    slow = MACROS["omni_first_audio"](prefill_ms=120, lead_tokens=8, thinker_tpot_ms=15, talker_prefill_ms=20,
                                      frame_step_ms=30, codec_ms=10, transport_ms=30, reply_tokens=150,
                                      reply_audio_s=12)
    assert "then a 430.0 ms gap" in slow                  # 25 x 30 - 4 x 80 ms


def test_dllm_example_figures():
    html = MACROS["dllm_vs_ar"](model="llama-3.1-8b", gpu="h100-sxm", block=32, steps=8, batches=[1, 64],
                                context=2048)
    assert "32 / 8 = 4" in html
    # batch 1 is read-bound on both sides: the same pass time, four tokens instead of one
    assert "| 1 | 4.87 ms (reads) | 205 | 4.87 ms (reads) | 821 | 4 |" in html
    assert "| 64 | 9.92 ms (reads) | 6,450 | 31.1 ms (FLOPs) | 8,240 | 1.28 |" in html
