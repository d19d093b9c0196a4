"""Guardrails in the serving path (Q149; formulas: :mod:`macros.formulas.guardrails`): the time to the first
visible token under each guard placement, its figure against the output guard's chunk size, and the GPU share
of the guard model."""

from __future__ import annotations

from dataclasses import dataclass

from .. import formulas as F
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _flink, _glink, _i, _mlink, _n
from .fleet_ops import _NUMBER, _TOK, _TOK0, _ms
from .reasoning import _MARKS, _STYLES, linear_axes, svg_figure
from .registry import ARGS, Arg, macro

_NEMO = "NeMo Guardrails 0.24.1"
_ARGS = {"main": ARGS["model"], "guard": ARGS["model"], "main_fmt": ARGS["fmt"], "guard_fmt": ARGS["fmt"],
         "prompt": _TOK, "output": _TOK, "tpot_s": _NUMBER, "template": _TOK0, "mfu": _NUMBER,
         "context": _TOK0, "main_gpus": Arg(inputs.count, "GPUs", "integer >= 1"),
         "verdict_tokens": Arg(inputs.count, "tokens", "integer >= 1"), "rate_rps": _NUMBER}


@dataclass(frozen=True)
class Guarded:
    """The latencies of one request under each placement, all from the same inputs."""
    main_ttft: float
    guard_in: float
    e2e: float
    guard_full: float
    chunks: tuple[int, ...]
    first_serial: float
    first_parallel: float
    first_chunked: tuple[float, ...]      # serial input guard + chunked output guard, per chunk size
    last_chunked: tuple[float, ...]
    keeps_up: tuple[bool, ...]


def guard_latency(guard: Model, gpu: Gpu, fmt: Format, tokens: int, mfu: float, verdict_tokens: int) -> float:
    """Guard call: prefill of `tokens` on one GPU plus (verdict_tokens - 1) bandwidth-bound decode steps."""
    peak, _ = inputs.peak_flops(gpu, fmt)
    pre = F.prefill_time(F.prefill_matmul_flops(guard, tokens, 1) + F.prefill_attention_flops(guard, tokens),
                         peak, mfu)
    step = F.weight_bytes(guard, fmt) / gpu.memory_bandwidth_bytes_per_s
    return pre + (verdict_tokens - 1) * step


def _chunks(chunks) -> tuple[int, ...]:
    if not isinstance(chunks, (list, tuple)) or not chunks:
        raise MacroInputError(f"chunks must be a non-empty list of output-guard chunk sizes in tokens, got {chunks!r}")
    return tuple(inputs.tokens("chunks", k) for k in chunks)


def guarded_data(main: Model, guard: Model, gpu: Gpu, main_fmt: Format, guard_fmt: Format, main_gpus: int,
                 prompt: int, output: int, tpot_s: float, template: int, context: int, chunks, mfu: float,
                 verdict_tokens: int) -> Guarded:
    """Table and figure data: main TTFT from its prefill; the guard's call from its own prefill."""
    ks = _chunks(chunks)
    for k in ks:
        if context >= k:
            raise MacroInputError(f"context ({context}) must be smaller than every chunk size, got chunk {k}")
    peak, _ = inputs.peak_flops(gpu, main_fmt)
    ttft = F.prefill_time(F.prefill_matmul_flops(main, prompt, 1) + F.prefill_attention_flops(main, prompt),
                          peak * main_gpus, mfu)
    g_in = guard_latency(guard, gpu, guard_fmt, template + prompt, mfu, verdict_tokens)
    e2e = F.e2e_latency(ttft, tpot_s, output)
    g_full = guard_latency(guard, gpu, guard_fmt, template + prompt + output, mfu, verdict_tokens)
    start = F.serial_guard_ttft(ttft, g_in)
    firsts, lasts, ok = [], [], []
    for k in ks:
        g_k = guard_latency(guard, gpu, guard_fmt, template + prompt + k, mfu, verdict_tokens)
        rel = F.chunk_release_times(start, tpot_s, output, k, g_k, context)
        firsts.append(rel[0])
        # the last token shown is released by the last check that carries new tokens: when the stream ends on
        # a window boundary, the final check of the leftover context releases nothing
        shown = [r for r, (_last, _w, new) in zip(rel, F.rolling_checks(output, k, context), strict=True) if new]
        lasts.append(shown[-1])
        ok.append(F.guard_keeps_up(tpot_s, k, g_k, context))
    return Guarded(ttft, g_in, e2e, g_full, ks, start, F.parallel_guard_ttft(ttft, g_in), tuple(firsts),
                   tuple(lasts), tuple(ok))


_EX = ('guardrail_placement("llama-3.1-70b", "llama-3.1-8b", "h100-sxm", main_fmt="fp8", main_gpus=2, '
       'prompt=2000, output=500, tpot_s=0.02, template=600, context=50, chunks=[64, 128, 200])')


@macro("block", example=_EX, args=_ARGS)
def guardrail_placement(main: Model, guard: Model, gpu: Gpu, main_fmt: Format = "fp8", guard_fmt: Format = "bf16",
                        main_gpus: int = 2, prompt: int = 2000, output: int = 500, tpot_s: float = 0.02,
                        template: int = 600, context: int = 50, chunks=(64, 128, 200), mfu: float = 0.5,
                        verdict_tokens: int = 1) -> str:
    """Worked example: the first and last visible token under each guard placement.

    Main TTFT = its prefill on `main_gpus`; guard call = prefill of (template + prompt [+ window]) on one GPU
    plus (verdict_tokens − 1) decode steps. Serial: TTFT + guard; parallel (first token held): max; chunked
    output guard ({_NEMO} rolling buffer, `stream_first: False`): windows released one after another.
    """
    d = guarded_data(main, guard, gpu, main_fmt, guard_fmt, main_gpus, prompt, output, tpot_s, template, context,
                     chunks, mfu, verdict_tokens)
    ex = Example(f"guarding {main.name} with a {guard.name}-sized classifier on {gpu.name}")
    ex.formula("guard call = prefill(template + text checked) / (peak × MFU) + (verdict tokens − 1) × decode step")
    ex.formula("serial input guard: first token = guard + TTFT; parallel, first token held: max(guard, TTFT)")
    ex.formula("chunked output guard: window i released at max(ready_i, release_(i−1)) + guard; "
               "first window ready at token k, later ones every k − c new tokens")
    ex.input("main model, GPUs", f"{_mlink(main)}, {_flink(main_fmt)}, {main_gpus} × {_glink(gpu)}", "catalog")
    ex.input("guard model", f"{_mlink(guard)} architecture, {_flink(guard_fmt)}, one {_glink(gpu)}",
             "Llama Guard 3 8B is a fine-tune of Llama 3.1 8B (model card)")
    ex.input("prompt, output, guard template", f"{_i(prompt)}, {_i(output)}, {_i(template)} tokens",
             "given; template = the guard's instructions and category list (assumption)")
    ex.input("TPOT, MFU, verdict tokens", f"{_ms(tpot_s)}, {_n(mfu)}, {_i(verdict_tokens)}", "assumptions")
    ex.input("context carried between windows c", f"{_i(context)} tokens", f"`context_size` ({_NEMO} default)")
    ex.step(f"main TTFT = {_ms(d.main_ttft)}; input guard call = {_ms(d.guard_in)} "
            f"({_i(template + prompt)} tokens)")
    ex.step(f"serial: {_ms(d.guard_in)} + {_ms(d.main_ttft)} = {_ms(d.first_serial)}; parallel: "
            f"max = {_ms(d.first_parallel)}")
    rows = ["| Placement | First visible token | Added to it | Last visible token |", "| --- | --- | --- | --- |",
            f"| No guard | {_ms(d.main_ttft)} | none | {_ms(d.e2e)} |",
            f"| Input guard, serial | {_ms(d.first_serial)} | {_ms(d.first_serial - d.main_ttft)} | "
            f"{_ms(d.e2e + d.guard_in)} |",
            f"| Input guard, parallel, first token held | {_ms(d.first_parallel)} | "
            f"{_ms(d.first_parallel - d.main_ttft)} | {_ms(d.e2e)} |",
            f"| Output guard on the whole response (no streaming) | {_ms(d.e2e + d.guard_full)} | "
            f"{_ms(d.e2e + d.guard_full - d.main_ttft)} | {_ms(d.e2e + d.guard_full)} |"]
    for k, first, last, ok in zip(d.chunks, d.first_chunked, d.last_chunked, d.keeps_up, strict=True):
        rows.append(f"| Serial input guard + chunked output guard, k = {_i(k)} | {_ms(first)} | "
                    f"{_ms(first - d.main_ttft)} | {_ms(last)}{'' if ok else ' (guard falls behind)'} |")
    ex.table("\n".join(rows))
    ex.result(f"a serial input guard adds {_ms(d.guard_in)} to the first token; holding output for the guard "
              f"adds about (k − 1) × TPOT + the check to it, {_ms(d.first_chunked[0] - d.first_serial)} at "
              f"k = {_i(d.chunks[0])} and {_ms(d.first_chunked[-1] - d.first_serial)} at k = {_i(d.chunks[-1])}")
    ex.note("With `stream_first: True` (the default in " + _NEMO + ") the user sees each window before its "
            "check and no delay is added, but a blocked window has already been shown. Queueing at the guard "
            "and network hops are left out; both add to every serial placement.")
    return ex.render()


@macro("figure", example=_EX.replace("guardrail_placement(", "guardrail_placement_svg("), args=_ARGS)
def guardrail_placement_svg(main: Model, guard: Model, gpu: Gpu, main_fmt: Format = "fp8",
                            guard_fmt: Format = "bf16", main_gpus: int = 2, prompt: int = 2000, output: int = 500,
                            tpot_s: float = 0.02, template: int = 600, context: int = 50, chunks=(64, 128, 200),
                            mfu: float = 0.5, verdict_tokens: int = 1) -> str:
    """Figure: time to the first visible token against the output guard's chunk size, from `guarded_data`.

    Flat lines for no guard, a parallel and a serial input guard; a rising line (one point per chunk size
    in the table) for a serial input guard plus a chunked output guard.
    """
    d = guarded_data(main, guard, gpu, main_fmt, guard_fmt, main_gpus, prompt, output, tpot_s, template, context,
                     chunks, mfu, verdict_tokens)
    ks = d.chunks
    ax = linear_axes(max(ks), max(d.first_chunked + (d.first_serial,)))
    px, py = ax.px, ax.py
    out = ax.draw("output guard chunk size k (tokens)", "first visible token (s)")
    x0, x1 = px(0), px(ax.x_hi)
    flats = (("no guard", d.main_ttft, 'stroke="currentColor" stroke-dasharray="2 3"'),
             ("parallel input guard", d.first_parallel, _STYLES[0]),
             ("serial input guard", d.first_serial, 'stroke="currentColor"'))
    # The flat lines lie close together near the axis, so they are named in a legend at the top left.
    lx, ly = px(0) + 12, py(ax.y_hi) + 10
    for i, (label, v, style) in enumerate(flats):
        y = py(v)
        out.append(f'<path class="placement" data-label="{label}" data-seconds="{v!r}" fill="none" '
                   f'stroke-width="2" {style} d="M{x0:.1f},{y:.1f}H{x1:.1f}"/>'
                   f'<path fill="none" stroke-width="2" {style} d="M{lx:.1f},{ly + 16 * i:.1f}h24"/>'
                   f'<text x="{lx + 30:.1f}" y="{ly + 16 * i + 4:.1f}">{label}: {_ms(v)}</text>')
    out.append(f'<path fill="none" stroke-width="2" {_STYLES[1]} d="M{lx:.1f},{ly + 48:.1f}h24"/>'
               f'<text x="{lx + 30:.1f}" y="{ly + 52:.1f}">serial input guard + output guard holding k tokens</text>')
    pts = [(px(k), py(s)) for k, s in zip(ks, d.first_chunked, strict=True)]
    out.append(f'<polyline class="placement" data-label="chunked output guard" fill="none" stroke-width="2" '
               f'{_STYLES[1]} points="{" ".join(f"{x:.1f},{y:.1f}" for x, y in pts)}"/>')
    for k, s, (x, y) in zip(ks, d.first_chunked, pts, strict=True):
        out.append(f'<circle class="chunk" data-k="{k}" data-seconds="{s!r}" cx="{x:.1f}" cy="{y:.1f}" r="4" '
                   f'{_MARKS[1]}/><text x="{x - 6:.1f}" y="{y - 8:.1f}" text-anchor="end">k = {_i(k)}: '
                   f'{_ms(s)}</text>')
    fid = f"fig-guard-{main.key.replace('.', '-')}"
    title = f"First visible token of {main.name} under each guard placement"
    desc = (f"No guard {_ms(d.main_ttft)}; parallel input guard {_ms(d.first_parallel)}; serial input guard "
            f"{_ms(d.first_serial)}; serial input guard plus chunked output guard: "
            + ", ".join(f"k = {_i(k)}: {_ms(s)}" for k, s in zip(ks, d.first_chunked, strict=True)))
    return svg_figure(fid, title, desc + ".", out, f"{title}: {_i(prompt)}-token prompt, TPOT {_ms(tpot_s)}. "
                      "Generated from the same formulas as the table.")


_SHARE_EX = ('guard_gpu_share("llama-3.1-8b", "h100-sxm", rate_rps=20, prompt=2000, output=500, template=600, '
             'windows=[[0, 0], [200, 50], [64, 16]])')


@macro("block", example=_SHARE_EX, args=_ARGS)
def guard_gpu_share(guard: Model, gpu: Gpu, guard_fmt: Format = "bf16", rate_rps: float = 20,
                    prompt: int = 2000, output: int = 500, template: int = 600, mfu: float = 0.5,
                    windows=((0, 0), (200, 50), (64, 16)), prompt_in_output_checks: bool = True) -> str:
    """Worked example: guard GPUs = request rate × guard GPU-seconds per request.

    Per request the guard prefills the input check (template + prompt) and, per output window, template +
    prompt (if the guard's output prompt carries the user turn) + window. `windows` lists (k, c) pairs;
    k = 0 means no output guard.
    """
    if not isinstance(windows, (list, tuple)) or not windows:
        raise MacroInputError(f"windows must be a non-empty list of [chunk, context] pairs, got {windows!r}")
    peak, label = inputs.peak_flops(gpu, guard_fmt)
    ex = Example(f"GPU share of a {guard.name}-sized guard at {_n(rate_rps)} requests/s")
    ex.formula("guard tokens per request = (template + prompt) + Σ over output windows (template + prompt + window)")
    ex.formula("guard GPUs = requests/s × Σ prefill time of each check on one GPU")
    rate = inputs.fmt_peak(guard_fmt, peak)
    ex.input("guard", f"{_mlink(guard)}, {_flink(guard_fmt)}, one {_glink(gpu)} ({label} {rate})", "catalog")
    ex.input("requests/s, prompt, output, template", f"{_n(rate_rps)}, {_i(prompt)}, {_i(output)}, "
             f"{_i(template)} tokens", GIVEN)
    ex.input("MFU", _n(mfu), "assumption")

    def t(tokens: int) -> float:
        return F.prefill_time(F.prefill_matmul_flops(guard, tokens, 1) + F.prefill_attention_flops(guard, tokens),
                              peak, mfu)

    rows = ["| Output guard | Checks | Guard tokens per request | Guard GPU-seconds per request | Guard GPUs | "
            "Guard GPUs, with prefix caching |", "| --- | --- | --- | --- | --- | --- |"]
    per_check = template + (prompt if prompt_in_output_checks else 0)
    for pair in windows:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise MacroInputError(f"windows: each entry must be [chunk, context], got {pair!r}")
        k, c = (inputs.tokens("windows", v, allow_zero=True) for v in pair)
        secs, cached = t(template + prompt), t(prompt)
        if k == 0:
            toks, n_checks, name = template + prompt, 0, "none (input guard only)"
        else:
            if c >= k:
                raise MacroInputError(f"windows: context {c} must be smaller than chunk {k}")
            checks = F.rolling_checks(output, k, c)
            toks = F.guard_tokens_per_request(template, prompt, output, k, c,
                                              prompt_in_output_checks=prompt_in_output_checks)
            secs += sum(t(per_check + w) for _last, w, _new in checks)
            # the first output check reuses only the template head shared by every output check; its prompt differs
            # from the input check's from the first line on (Llama Guard's template names the role it checks)
            cached += t(per_check - template + checks[0][1]) + sum(t(w) for _last, w, _new in checks[1:])
            n_checks, name = len(checks), f"k = {_i(k)}, c = {_i(c)}"
        share = F.guard_gpu_share(rate_rps, toks, toks / secs)
        rows.append(f"| {name} | 1 + {_i(n_checks)} | {_i(toks)} | {_ms(secs)} | {_n(share)} | "
                    f"{_n(rate_rps * cached)} |")
    ex.table("\n".join(rows))
    ex.result("each output check re-reads the template and the prompt, so small windows multiply the guard's "
              "prefill; the window itself is the small part")
    ex.step("prefix-caching column (the guard's engine reuses the KV of a repeated prompt head, as vLLM's "
            "automatic prefix caching does): the template is cached across requests, since every input check, and "
            "every output check, starts with the same text; the input check prefills the prompt; the first output "
            "check prefills prompt and window again, because its prompt differs from the input check's from the "
            "first line on (Llama Guard's template names the role it checks); each later output check prefills "
            "only its window. The attention of new tokens to cached ones, and template text after the window, are "
            "left out")
    ex.note("Prefill only (verdict of one token, as when the first token's probability is used as the score); "
            "the guard's own KV and batching are left out, and a guard GPU is rarely kept full, so provision "
            "above this share.")
    return ex.render()
