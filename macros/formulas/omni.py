"""Beyond autoregressive text (Part D, Q158): a streaming speech pipeline's first-audio latency and its first
gap, and a block-diffusion language model's tokens per forward pass against autoregressive decode.

Speech: a thinker (the LLM) streams hidden states to a talker, which emits codec frames (its own step plus a
small code predictor for the remaining codebooks of each frame); a codec decoder (code2wav, vocoder) turns a
chunk of frames into waveform. vLLM-Omni 0.30.0 runs Qwen3-Omni this way, with a first chunk of 4 frames and
then chunks of 25 (``vllm_omni/deploy/qwen3_omni_moe.yaml``).

Diffusion: a block of ``block`` masked positions is denoised in ``steps`` forward passes over the whole block,
so a forward pass commits ``block / steps`` tokens but computes ``block`` positions (Dream, LLaDA, SDAR and
DiffusionGemma style block diffusion).

Units: seconds, tokens, bytes, FLOPs. Pure functions; nothing here formats numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk

__all__ = ["frame_seconds", "FirstAudio", "first_audio", "stream_gap_s", "tokens_per_forward", "ForwardPass",
           "forward_pass"]


def frame_seconds(total_upsample: int, sample_rate: int) -> float:
    """Audio one codec frame covers: ``samples per frame / samples per second``.

    Qwen3-Omni's code2wav upsamples each frame by 8 x 5 x 4 x 3 x 2 x 2 = 1,920 samples (the defaults of
    Transformers' ``Qwen3OmniMoeCode2WavConfig``) at 24 kHz (vLLM-Omni's default output rate): 80 ms, 12.5 frames
    per second.
    """
    chk.positive_int("total_upsample", total_upsample)
    chk.positive_int("sample_rate", sample_rate)
    return total_upsample / sample_rate


@dataclass(frozen=True)
class FirstAudio:
    """Time from the request to the first playable audio of a streaming thinker-talker-codec pipeline (s)."""

    thinker_prefill_s: float     # the thinker's TTFT over the user's input (audio, text, images)
    thinker_lead_s: float        # text tokens the thinker emits before the talker has enough to start
    talker_prefill_s: float      # the talker's own prefill on the first thinker states
    first_chunk_frames_s: float  # frames of the first chunk, one talker step (+ code predictor) each
    codec_s: float               # code2wav on the first chunk
    transport_s: float           # stage hand-offs, network and the client's jitter buffer

    @property
    def total_s(self) -> float:
        return (self.thinker_prefill_s + self.thinker_lead_s + self.talker_prefill_s + self.first_chunk_frames_s
                + self.codec_s + self.transport_s)


def first_audio(thinker_prefill_s: float, lead_tokens: int, thinker_tpot_s: float, talker_prefill_s: float,
                first_chunk_frames: int, frame_step_s: float, codec_s: float, transport_s: float = 0.0) -> FirstAudio:
    """First-audio latency of a streaming pipeline, stage by stage.

    ``prefill + lead_tokens x thinker TPOT + talker prefill + first_chunk_frames x frame step + codec +
    transport``. ``frame_step_s`` is the talker's time per codec frame including the code-predictor passes for the
    other codebooks. A pipeline that waits for the whole text, or the whole codec sequence, replaces the lead
    and the first chunk by the full answer (see the worked example).
    """
    chk.non_negative_int("lead_tokens", lead_tokens)
    chk.positive_int("first_chunk_frames", first_chunk_frames)
    for name, v in (("thinker_prefill_s", thinker_prefill_s), ("thinker_tpot_s", thinker_tpot_s),
                    ("talker_prefill_s", talker_prefill_s), ("frame_step_s", frame_step_s), ("codec_s", codec_s),
                    ("transport_s", transport_s)):
        chk.non_negative(name, v)
    return FirstAudio(thinker_prefill_s, lead_tokens * thinker_tpot_s, talker_prefill_s,
                      first_chunk_frames * frame_step_s, codec_s, transport_s)


def stream_gap_s(first_chunk_frames: int, next_chunk_frames: int, frame_step_s: float, frame_s: float,
                 first_codec_s: float, next_codec_s: float) -> float:
    """Silence between the first chunk and the second, if any:
    ``max(0, next x step + next codec - (first codec + first x frame))``.

    Time runs from the first chunk's last frame: that chunk then takes its code2wav and plays for
    ``first_chunk_frames x frame_s``; the second needs ``next_chunk_frames`` more talker steps and its own code2wav.
    Transport delays both alike and cancels, and so does code2wav when the two chunks take the same time. A small
    first chunk buys first-audio latency and costs a gap unless the talker runs well ahead of real time.
    """
    chk.positive_int("first_chunk_frames", first_chunk_frames)
    chk.positive_int("next_chunk_frames", next_chunk_frames)
    chk.non_negative("frame_step_s", frame_step_s)
    chk.positive("frame_s", frame_s)
    chk.non_negative("first_codec_s", first_codec_s)
    chk.non_negative("next_codec_s", next_codec_s)
    return max(0.0, next_chunk_frames * frame_step_s + next_codec_s - first_codec_s - first_chunk_frames * frame_s)


def tokens_per_forward(block: int, steps: int) -> float:
    """Tokens a block-diffusion forward pass commits on average: ``block / steps`` (autoregressive decode: 1)."""
    chk.positive_int("block", block)
    chk.positive_int("steps", steps)
    if steps > block:
        raise ValueError(f"steps {steps} exceeds the block of {block}: each step commits at least one token")
    return block / steps


@dataclass(frozen=True)
class ForwardPass:
    """One decode forward pass for a batch: positions computed, tokens committed, roofline time (s)."""

    positions: int
    tokens: float
    read_s: float
    compute_s: float

    @property
    def time_s(self) -> float:
        return max(self.read_s, self.compute_s)

    @property
    def tokens_per_s(self) -> float:
        return self.tokens / self.time_s


def forward_pass(batch: int, positions_per_seq: int, tokens_per_seq: float, weight_bytes: float,
                 kv_bytes_per_seq: float, flops_per_position: float, hbm_bytes_per_s: float,
                 peak_flops: float) -> ForwardPass:
    """A decode forward pass over ``batch`` sequences, each computing ``positions_per_seq`` positions.

    Reads: weights once + each sequence's cached KV once. FLOPs: ``batch x positions x flops_per_position``
    (``2 x active params``; attention over the context left out). Autoregressive decode: 1 position, 1 token;
    block diffusion: ``block`` positions, ``block / steps`` tokens per pass.
    """
    chk.positive_int("batch", batch)
    chk.positive_int("positions_per_seq", positions_per_seq)
    chk.positive("tokens_per_seq", tokens_per_seq)
    if tokens_per_seq > positions_per_seq:
        raise ValueError(f"tokens_per_seq {tokens_per_seq} exceeds positions_per_seq {positions_per_seq}")
    for name, v in (("weight_bytes", weight_bytes), ("flops_per_position", flops_per_position),
                    ("hbm_bytes_per_s", hbm_bytes_per_s), ("peak_flops", peak_flops)):
        chk.positive(name, v)
    chk.non_negative("kv_bytes_per_seq", kv_bytes_per_seq)
    positions = batch * positions_per_seq
    return ForwardPass(positions, batch * tokens_per_seq, (weight_bytes + batch * kv_bytes_per_seq) / hbm_bytes_per_s,
                       positions * flops_per_position / peak_flops)
