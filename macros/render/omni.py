"""Beyond autoregressive text (Part D, Q158): first-audio latency of a streaming thinker-talker-codec pipeline
from its stage latencies, and a block-diffusion model's tokens per forward pass against autoregressive decode
(formulas: :mod:`macros.formulas.omni`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from ..formulas import omni as OM
from . import inputs
from .blocks import GIVEN, Example, _glink, _i, _mlink, _n
from .registry import ARGS, Arg, macro

# Qwen3-Omni code2wav: upsample_rates (8, 5, 4, 3) x upsampling_ratios (2, 2) (Transformers 5.23.0,
# Qwen3OmniMoeCode2WavConfig defaults), 24 kHz output (vLLM-Omni 0.30.0, DEFAULT_AUDIO_SAMPLE_RATE).
QWEN3_OMNI_UPSAMPLE = 8 * 5 * 4 * 3 * 2 * 2
QWEN3_OMNI_SAMPLE_RATE = 24_000
# vLLM-Omni 0.30.0, deploy/qwen3_omni_moe.yaml: initial_codec_chunk_frames 4, codec_chunk_frames 25
FIRST_CHUNK_FRAMES, NEXT_CHUNK_FRAMES = 4, 25
_MS = Arg(lambda name, v: inputs.number(name, v, positive=False), "milliseconds", ">= 0")
_OMNI_ARGS = {"prefill_ms": _MS, "thinker_tpot_ms": _MS, "talker_prefill_ms": _MS, "frame_step_ms": _MS,
              "codec_ms": _MS, "transport_ms": _MS, "lead_tokens": Arg(
                  lambda name, v: int(inputs.number(name, v, positive=False)), "tokens", "whole number >= 0"),
              "reply_tokens": ARGS["sequences"], "reply_audio_s": Arg(inputs.number, "seconds", "> 0"),
              "first_chunk_frames": ARGS["sequences"], "next_chunk_frames": ARGS["sequences"]}


@macro("block", example='omni_first_audio(prefill_ms=120, lead_tokens=8, thinker_tpot_ms=15, talker_prefill_ms=20, '
       'frame_step_ms=12, codec_ms=10, transport_ms=30, reply_tokens=150, reply_audio_s=12)', args=_OMNI_ARGS)
def omni_first_audio(prefill_ms: float, lead_tokens: int, thinker_tpot_ms: float, talker_prefill_ms: float,
                     frame_step_ms: float, codec_ms: float, transport_ms: float, reply_tokens: int,
                     reply_audio_s: float, first_chunk_frames: int = FIRST_CHUNK_FRAMES,
                     next_chunk_frames: int = NEXT_CHUNK_FRAMES) -> str:
    """Worked example: first-audio latency of a Qwen3-Omni-style pipeline from stage latencies (given, in ms).

    Streaming: `prefill + lead tokens × thinker TPOT + talker prefill + first chunk × frame step + codec +
    transport`; the gap before the second chunk `max(0, next chunk × frame step + its code2wav − first chunk's
    code2wav − first chunk × frame)` (one code2wav time per chunk given, so the two cancel); frames of 1,920
    samples at 24 kHz (library defaults for Qwen3-Omni's code2wav). Against a pipeline that finishes each stage
    before the next: `prefill + reply tokens × TPOT + talker prefill + all frames × frame step + codec (× chunks)
    + transport`.
    """
    ms = 1e-3
    frame = OM.frame_seconds(QWEN3_OMNI_UPSAMPLE, QWEN3_OMNI_SAMPLE_RATE)
    fa = OM.first_audio(prefill_ms * ms, lead_tokens, thinker_tpot_ms * ms, talker_prefill_ms * ms,
                        first_chunk_frames, frame_step_ms * ms, codec_ms * ms, transport_ms * ms)
    gap = OM.stream_gap_s(first_chunk_frames, next_chunk_frames, frame_step_ms * ms, frame, codec_ms * ms,
                          codec_ms * ms)
    big = OM.first_audio(prefill_ms * ms, lead_tokens, thinker_tpot_ms * ms, talker_prefill_ms * ms,
                         next_chunk_frames, frame_step_ms * ms, codec_ms * ms, transport_ms * ms)
    frames_total = int(-(-reply_audio_s // frame))  # whole frames that cover the reply
    chunks = 1 + max(0, -(-(frames_total - first_chunk_frames) // next_chunk_frames))
    serial = OM.first_audio(prefill_ms * ms, reply_tokens, thinker_tpot_ms * ms, talker_prefill_ms * ms,
                            frames_total, frame_step_ms * ms, codec_ms * ms * chunks, transport_ms * ms)
    rtf = frame_step_ms * ms / frame
    ex = Example("First audio of a thinker → talker → code2wav pipeline, streamed and not")
    ex.formula("first audio = prefill + lead × thinker TPOT + talker prefill + first chunk × frame step + codec "
               "+ transport")
    ex.formula("gap before chunk 2 = max(0, next chunk × frame step + its code2wav − first chunk's code2wav − first "
               "chunk × frame length)")
    ex.input("frame length", f"{_i(QWEN3_OMNI_UPSAMPLE)} samples ÷ {_i(QWEN3_OMNI_SAMPLE_RATE)} per second = "
             f"{U.fmt_seconds(frame)}", "defaults of Transformers' Qwen3OmniMoeCode2WavConfig and vLLM-Omni 0.30.0")
    ex.input("first chunk / later chunks", f"{first_chunk_frames} / {next_chunk_frames} frames",
             "vLLM-Omni 0.30.0 deploy/qwen3_omni_moe.yaml")
    ex.input("thinker prefill / TPOT / lead tokens", f"{_n(prefill_ms)} ms / {_n(thinker_tpot_ms)} ms / "
             f"{_i(lead_tokens)}", GIVEN)
    ex.input("talker prefill / step per frame (with code predictor)",
             f"{_n(talker_prefill_ms)} ms / {_n(frame_step_ms)} ms", GIVEN)
    ex.input("code2wav per chunk / transport and buffering", f"{_n(codec_ms)} ms / {_n(transport_ms)} ms", GIVEN)
    ex.input("reply", f"{_i(reply_tokens)} text tokens, {_n(reply_audio_s)} s of speech ({frames_total} frames)",
             GIVEN)
    rows = ["| Stage | Streamed, first chunk of "
            f"{first_chunk_frames} | Streamed, first chunk of {next_chunk_frames} | Each stage waits for the last |",
            "| --- | ---: | ---: | ---: |"]
    for label, a, b, c in (
            ("thinker prefill", fa.thinker_prefill_s, big.thinker_prefill_s, serial.thinker_prefill_s),
            ("thinker text before the talker starts", fa.thinker_lead_s, big.thinker_lead_s, serial.thinker_lead_s),
            ("talker prefill", fa.talker_prefill_s, big.talker_prefill_s, serial.talker_prefill_s),
            ("codec frames before the first decode", fa.first_chunk_frames_s, big.first_chunk_frames_s,
             serial.first_chunk_frames_s),
            ("code2wav", fa.codec_s, big.codec_s, serial.codec_s),
            ("transport", fa.transport_s, big.transport_s, serial.transport_s),
            ("**first audio**", fa.total_s, big.total_s, serial.total_s)):
        rows.append(f"| {label} | {U.fmt_seconds(a)} | {U.fmt_seconds(b)} | {U.fmt_seconds(c)} |")
    ex.table("\n".join(rows))
    ex.step(f"real-time factor of the talker: {_n(frame_step_ms)} ms per {U.fmt_seconds(frame)} frame = {_n(rtf)}"
            + (" (keeps up)" if rtf < 1 else " (falls behind: audio stalls whatever the chunking)"))
    ex.step(f"with a first chunk of {first_chunk_frames}: it plays {U.fmt_seconds(first_chunk_frames * frame)} while "
            f"the next {next_chunk_frames} frames take {U.fmt_seconds(next_chunk_frames * frame_step_ms * ms)}; each "
            f"chunk pays one code2wav and one transport, which cancel: gap {U.fmt_seconds(gap)}")
    ex.result(f"first audio {U.fmt_seconds(fa.total_s)} streamed with a {first_chunk_frames}-frame first chunk"
              + (f" (then a {U.fmt_seconds(gap)} gap)" if gap > 0 else " (no gap after it)")
              + f", {U.fmt_seconds(big.total_s)} with a {next_chunk_frames}-frame first chunk, "
              f"{U.fmt_seconds(serial.total_s)} if every stage waits for the one before")
    ex.note("Stage times are given, not measured here: the thinker's figures come from its own TTFT and TPOT at "
            "the load in question, the talker's per-frame step includes the code predictor's passes for the "
            "other codebooks of the frame. Batching across users lengthens every per-step figure.")
    return ex.render()


_DLLM_ARGS = {"block": ARGS["sequences"], "steps": ARGS["sequences"],
              "batches": Arg(lambda name, vs: [inputs.count(name, v) for v in vs], "list of batch sizes",
                             "e.g. `[1, 16, 256]`")}


@macro("block", example='dllm_vs_ar("llama-3.1-8b", "h100-sxm", block=32, steps=8, batches=[1, 16, 64], '
       'context=2048)', args=_DLLM_ARGS)
def dllm_vs_ar(model: Model, gpu: Gpu, block: int, steps: int, batches: list[int], context: int,
               fmt: Format = "bf16", kv_dtype: Format = "bf16") -> str:
    """Worked example: tokens per forward pass and tokens per second, block diffusion against autoregressive.

    Per forward pass of `batch` sequences: reads `weights + batch × KV(context)`, FLOPs `batch × positions × 2 ×
    active params` (positions 1 autoregressive, `block` for diffusion), time = the longer; tokens committed
    `batch` autoregressive, `batch × block / steps` diffusion. The model's own weights stand in for a diffusion
    model of the same shape.
    """
    m = model
    if not batches:
        raise MacroInputError("batches must list at least one batch size")
    tpf = OM.tokens_per_forward(block, steps)
    wbytes = F.weight_bytes(m, fmt)
    kvseq = F.kv_bytes_per_sequence(m, context, kv_dtype)
    per_pos = 2 * F.param_breakdown(m).compute_active
    peak, peak_label = inputs.peak_flops(gpu, fmt)
    hbm = gpu.memory_bandwidth_bytes_per_s
    ex = Example(f"{m.name}'s shape on {gpu.name}: block diffusion ({block} positions, {steps} steps) against "
                 "autoregressive decode")
    ex.formula("tokens per forward pass = block / steps (autoregressive: 1)")
    ex.formula("pass time = max(weights + batch × KV, batch × positions × 2 × active params / peak)")
    ex.input("weights / KV per sequence at the context", f"{U.fmt_gb(wbytes)} ({fmt.name}) / {U.fmt_bytes(kvseq)} "
             f"({_i(context)} tokens)", _mlink(m))
    ex.input(f"HBM / {peak_label}", f"{U.fmt_bandwidth(hbm)} / {U.fmt_flops(peak)}", _glink(gpu))
    ex.input("block / denoising steps per block", f"{block} / {steps}", GIVEN)
    ex.step(f"tokens per forward pass: {block} / {steps} = {_n(tpf)}; positions computed per committed token: "
            f"{_n(block / tpf)} (autoregressive: 1)")
    rows = ["| Batch | Autoregressive pass | Tokens/s | Diffusion pass | Tokens/s | Diffusion ÷ autoregressive |",
            "| ---: | ---: | ---: | ---: | ---: | ---: |"]
    ratios = []
    for b in batches:
        ar = OM.forward_pass(b, 1, 1, wbytes, kvseq, per_pos, hbm, peak)
        dl = OM.forward_pass(b, block, tpf, wbytes, kvseq, per_pos, hbm, peak)
        ratios.append(dl.tokens_per_s / ar.tokens_per_s)
        rows.append(f"| {_i(b)} | {U.fmt_seconds(ar.time_s)} ({'FLOPs' if ar.compute_s > ar.read_s else 'reads'}) | "
                    f"{_i(round(ar.tokens_per_s))} | {U.fmt_seconds(dl.time_s)} "
                    f"({'FLOPs' if dl.compute_s > dl.read_s else 'reads'}) | {_i(round(dl.tokens_per_s))} | "
                    f"{_n(ratios[-1])} |")
    ex.table("\n".join(rows))
    ex.result(f"at batch {batches[0]} diffusion commits {_n(ratios[0])} times the tokens per second; at batch "
              f"{batches[-1]} {_n(ratios[-1])} times")
    ceiling_dllm, ceiling_ar = round(peak / (per_pos * block / tpf)), round(peak / per_pos)
    ex.note(f"Diffusion's ceiling is the FLOPs of {_n(block / tpf)} positions per committed token, at most "
            f"{_i(ceiling_dllm)} tokens per second here whatever the batch; autoregressive decode's is "
            f"{_i(ceiling_ar)} if memory allowed the batch. Peak rates, no kernel or sampling "
            "overheads; attention FLOPs over the context and the block's bidirectional attention left out; steps per "
            "block fixed, where confidence-threshold samplers vary them per block (fewer steps, more tokens per "
            "pass, at some cost in quality).")
    return ex.render()
