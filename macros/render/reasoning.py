"""Reasoning-length requests: latency with hidden reasoning, peak KV, and chat against reasoning as a
table and a figure drawn from the same data (Q141; formulas: :mod:`macros.formulas.fleet_ops`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _flink, _glink, _i, _mlink, _n
from .fleet_ops import _NON_NEG, _NUMBER, _TOK, _TOK0, _ms
from .registry import macro


# --- Q141: reasoning-length requests ------------------------------------------------------------

_Q141_ARGS = {"ttft_s": _NON_NEG, "tpot_s": _NUMBER, "prompt": _TOK, "answer": _TOK, "reasoning": _TOK0,
              "chat_output": _TOK, "reasoning_output": _TOK}


def _kv_at(model: Model, kv_dtype: Format):
    return lambda tokens: F.kv_bytes_per_sequence(model, tokens, kv_dtype)


def _kinks(model: Model) -> tuple[int, ...]:
    return (model.sliding_window.size,) if model.sliding_window else ()


@macro("block", example='reasoning_request("gpt-oss-120b", prompt=2000, answer=500, reasoning="8K", '
       'ttft_s=0.5, tpot_s=0.02)', args=_Q141_ARGS)
def reasoning_request(model: Model, prompt: int, answer: int, reasoning: int, ttft_s: float, tpot_s: float,
                      kv_dtype: Format = "bf16") -> str:
    """Worked example: end-to-end latency, time to the first answer token and peak KV of one reasoning request.

    E2E = TTFT + (reasoning + answer − 1) × TPOT; with the reasoning hidden the user waits
    TTFT + reasoning × TPOT for the first visible token; peak KV = KV of prompt + reasoning + answer
    tokens (sliding-window layers capped at their window), against the same request without reasoning.
    """
    n = reasoning + answer
    e2e = F.e2e_latency(ttft_s, tpot_s, n)
    e2e0 = F.e2e_latency(ttft_s, tpot_s, answer)
    first_answer = ttft_s + reasoning * tpot_s
    peak, peak0 = F.kv_bytes_per_sequence(model, prompt + n, kv_dtype), F.kv_bytes_per_sequence(
        model, prompt + answer, kv_dtype)
    ex = Example(f"one reasoning request on {model.name}")
    ex.formula("E2E = TTFT + (reasoning + answer tokens − 1) × TPOT")
    ex.formula("first visible answer token (reasoning hidden) = TTFT + reasoning tokens × TPOT")
    ex.formula("peak KV per sequence = KV bytes of (prompt + reasoning + answer) tokens")
    ex.input("model", _mlink(model), "catalog")
    ex.input("prompt, reasoning, answer tokens", f"{_i(prompt)}, {_i(reasoning)}, {_i(answer)}", GIVEN)
    ex.input("TTFT, TPOT", f"{_ms(ttft_s)}, {_ms(tpot_s)}", "given (measured at the target load)")
    ex.input("KV cache format", _flink(kv_dtype), GIVEN)
    ex.step(f"E2E = {_ms(ttft_s)} + ({_i(n)} − 1) × {_ms(tpot_s)} = {_ms(e2e)} (without reasoning: {_ms(e2e0)})")
    ex.step(f"first answer token = {_ms(ttft_s)} + {_i(reasoning)} × {_ms(tpot_s)} = {_ms(first_answer)}")
    ex.step(f"peak KV = KV({_i(prompt + n)} tokens) = {U.fmt_bytes(peak)} (without reasoning: "
            f"KV({_i(prompt + answer)} tokens) = {U.fmt_bytes(peak0)})")
    ex.result(f"{_ms(e2e)} end to end, {_ms(first_answer)} before the answer starts, {U.fmt_bytes(peak)} of KV at "
              f"the end: {_n(peak / peak0)} × the same request without reasoning")
    if model.sliding_window:
        ex.note(f"{model.name}'s sliding-window layers keep at most {_i(model.sliding_window.size)} tokens; only "
                "the full-attention layers grow with the reasoning.")
    ex.note("TPOT is taken as constant; at a fixed batch it rises slowly as every sequence's KV grows.")
    return ex.render()


@dataclass(frozen=True)
class Regime:
    label: str
    output_tokens: int
    e2e_s: float
    peak_kv: float            # bytes at the last token
    kv_byte_seconds: float    # bytes x seconds held from the first token to the last
    cost: float               # USD per request, KV-bound share of the replica
    curve: tuple[tuple[float, float], ...]   # (seconds since arrival, KV bytes held)


@dataclass(frozen=True)
class ChatVsReasoning:
    model: Model
    gpu: Gpu
    price: float              # USD per GPU-hour
    pool: float               # KV bytes per replica (one GPU)
    prompt: int
    ttft_s: float
    tpot_s: float
    regimes: tuple[Regime, ...]


def chat_vs_reasoning_data(model: Model, gpu: Gpu, fmt: Format, expert_fmt: Format | None, kv_dtype: Format,
                           prompt: int, chat_output: int, reasoning_output: int, ttft_s: float,
                           tpot_s: float) -> ChatVsReasoning:
    """The numbers the table and the figure share: per regime, E2E, peak KV, KV byte-seconds and cost.

    One-GPU replica; KV pool by :func:`~macros.formulas.kv_budget_bytes` at the default
    `--gpu-memory-utilization`; cost = GPU price per second × KV byte-seconds / pool (memory-bound).
    """
    weights = F.weight_bytes(model, fmt, expert_fmt)
    pool = F.kv_budget_bytes(gpu.engine_memory_bytes, weights)
    if pool <= 0:
        raise MacroInputError(f"{model.name} in {fmt.key} does not fit one {gpu.name}: no KV pool is left")
    price = inputs.gpu_price_of(gpu).usd_per_hour
    kv_at, kinks = _kv_at(model, kv_dtype), _kinks(model)
    regimes = []
    for label, n in (("chat", chat_output), ("reasoning", reasoning_output)):
        e2e = F.e2e_latency(ttft_s, tpot_s, n)
        bs = F.kv_byte_seconds(kv_at, prompt, n, ttft_s, tpot_s, kinks)
        marks = sorted({prompt + 1, prompt + n, *(k for k in kinks if prompt + 1 < k < prompt + n)})
        curve = ((0.0, 0.0), (ttft_s, kv_at(prompt + 1)),
                 *((ttft_s + (t - prompt - 1) * tpot_s, kv_at(t)) for t in marks[1:]))
        regimes.append(Regime(label, n, e2e, kv_at(prompt + n), bs, price / 3600 * bs / pool, curve))
    return ChatVsReasoning(model, gpu, price, pool, prompt, ttft_s, tpot_s, tuple(regimes))


_CVR_ARGS = {**_Q141_ARGS}


@macro("block", example='chat_vs_reasoning("gpt-oss-120b", "h100-sxm", fmt="bf16", expert_fmt="mxfp4", '
       'prompt=2000, chat_output=500, reasoning_output="8K", ttft_s=0.5, tpot_s=0.02)', args=_CVR_ARGS)
def chat_vs_reasoning(model: Model, gpu: Gpu, fmt: Format = "bf16", expert_fmt: Format | None = None,
                      kv_dtype: Format = "bf16", prompt: int = 2000, chat_output: int = 500,
                      reasoning_output: int = 8192, ttft_s: float = 0.5, tpot_s: float = 0.02) -> str:
    """Worked example: chat against reasoning requests on one GPU: E2E, peak KV, KV byte-seconds, cost per request.

    Same prompt, TTFT and TPOT; only the output length differs. KV byte-seconds = KV held integrated
    from the first token to the last; when KV memory bounds concurrency, a request's cost is that share
    of the pool's byte-seconds: price per second × byte-seconds / KV pool. The figure
    `chat_vs_reasoning_svg` draws the same numbers.
    """
    d = chat_vs_reasoning_data(model, gpu, fmt, expert_fmt, kv_dtype, prompt, chat_output, reasoning_output,
                               ttft_s, tpot_s)
    ex = Example(f"chat against reasoning requests, {model.name} on one {gpu.name}")
    ex.formula("E2E = TTFT + (output tokens − 1) × TPOT")
    ex.formula("KV byte-seconds = Σ over decode steps of KV held × TPOT (exact trapezoid between window bends)")
    ex.formula("cost per request = GPU price per second × KV byte-seconds / KV pool bytes")
    ex.input("model, GPU", f"{_mlink(model)}, {_glink(gpu)}", "catalog")
    ex.input("weights", f"{_flink(fmt)}" + (f", experts {_flink(expert_fmt)}" if expert_fmt else ""), GIVEN)
    ex.input("KV pool", U.fmt_bytes(d.pool), "memory × 0.9 − weights − activations − runtime reserve")
    ex.input("GPU price", U.fmt_usd(d.price) + " per hour", "[prices](/reference/prices.md)")
    ex.input("prompt, TTFT, TPOT", f"{_i(prompt)} tokens, {_ms(ttft_s)}, {_ms(tpot_s)}", GIVEN)
    rows = ["| Request | Output tokens | E2E | Peak KV | KV GB·s | Cost per request | Cost per 1,000 requests |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in d.regimes:
        rows.append(f"| {r.label} | {_i(r.output_tokens)} | {_ms(r.e2e_s)} | {U.fmt_bytes(r.peak_kv)} | "
                    f"{_n(U.bytes_to_gb(r.kv_byte_seconds))} | {U.fmt_usd(r.cost)} | {U.fmt_usd(r.cost * 1000)} |")
    ex.table("\n".join(rows))
    chat, reas = d.regimes
    ex.result(f"the reasoning request costs {_n(reas.cost / chat.cost)} × the chat one for "
              f"{_n(reas.output_tokens / chat.output_tokens)} × the output tokens")
    ex.note("Memory-bound: the pool is full and a request pays for the KV it holds while it holds it. With full "
            "attention the byte-seconds grow with output length × average context, faster than the tokens; "
            "sliding-window layers and a KV format of fewer bytes flatten it. Prefill is left out.")
    return ex.render()


_W, _H = 560, 300
_L, _R, _T, _B = 62, 16, 14, 46
_STYLES = ('stroke-dasharray="6 4" stroke="currentColor"', 'style="stroke:var(--md-typeset-a-color)"')
_FILLS = ('fill="currentColor" opacity="0.3"', 'style="fill:var(--md-typeset-a-color)" opacity="0.15"')
_MARKS = ('fill="currentColor"', 'style="fill:var(--md-typeset-a-color)"')


def _nice_step(span: float) -> float:
    raw = span / 5
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _lin(v: float, lo: float, hi: float, p0: float, p1: float) -> float:
    return p0 + (v - lo) / (hi - lo) * (p1 - p0)


@dataclass(frozen=True)
class LinearAxes:
    """Linear x and y axes from zero, with round tick steps, on the shared figure frame."""

    x_hi: float
    xs: float
    y_hi: float
    ys: float

    def px(self, v: float) -> float:
        return _lin(v, 0, self.x_hi, _L, _W - _R)

    def py(self, v: float) -> float:
        return _lin(v, 0, self.y_hi, _H - _B, _T)

    def draw(self, x_label: str, y_label: str) -> list[str]:
        out = [f'<path fill="none" stroke="currentColor" d="M{_L},{_T}V{_H - _B}H{_W - _R}"/>']
        for i in range(int(round(self.x_hi / self.xs)) + 1):
            x = self.px(i * self.xs)
            out.append(f'<path stroke="currentColor" d="M{x:.1f},{_H - _B}v5"/><text x="{x:.1f}" '
                       f'y="{_H - _B + 17}" text-anchor="middle">{_n(i * self.xs)}</text>')
        for i in range(int(round(self.y_hi / self.ys)) + 1):
            y = self.py(i * self.ys)
            out.append(f'<path stroke="currentColor" d="M{_L - 5},{y:.1f}h5"/><text x="{_L - 8}" y="{y:.1f}" '
                       f'dy="4" text-anchor="end">{_n(i * self.ys)}</text>')
        out.append(f'<text x="{(_L + _W - _R) / 2}" y="{_H - 8}" text-anchor="middle">{x_label}</text>')
        out.append(f'<text transform="translate(14,{(_T + _H - _B) / 2}) rotate(-90)" text-anchor="middle">'
                   f'{y_label}</text>')
        return out


def svg_figure(fid: str, title: str, desc: str, body: list[str], caption: str) -> str:
    """The figure markup shared by this module's figures: accessible SVG, colours from the scheme."""
    return (f'<figure class="msib-figure"><svg viewBox="0 0 {_W} {_H}" role="img" '
            f'aria-labelledby="{fid}-t {fid}-d" font-size="12" fill="currentColor">'
            f'<title id="{fid}-t">{title}</title><desc id="{fid}-d">{desc}</desc>{"".join(body)}</svg>'
            f'<figcaption>{caption}</figcaption></figure>')


def linear_axes(x_max: float, y_max: float) -> LinearAxes:
    """Axes whose ends are the first round tick at or above ``x_max`` and ``y_max``."""
    xs, ys = _nice_step(x_max), _nice_step(y_max)
    return LinearAxes(math.ceil(x_max / xs) * xs, xs, math.ceil(y_max / ys) * ys, ys)


@macro("figure", example='chat_vs_reasoning_svg("gpt-oss-120b", "h100-sxm", fmt="bf16", expert_fmt="mxfp4", '
       'prompt=2000, chat_output=500, reasoning_output="8K", ttft_s=0.5, tpot_s=0.02)', args=_CVR_ARGS)
def chat_vs_reasoning_svg(model: Model, gpu: Gpu, fmt: Format = "bf16", expert_fmt: Format | None = None,
                          kv_dtype: Format = "bf16", prompt: int = 2000, chat_output: int = 500,
                          reasoning_output: int = 8192, ttft_s: float = 0.5, tpot_s: float = 0.02) -> str:
    """Figure: KV held by one chat and one reasoning request against time, from `chat_vs_reasoning_data`.

    Linear axes: seconds since arrival against MB of KV; each line rises to its peak KV at its E2E. The
    area under it from the first token (TTFT) on is the KV byte-seconds the table's cost is proportional
    to; the ramp before TTFT is the prefill, drawn but left out of the cost, as in `kv_byte_seconds`.
    """
    d = chat_vs_reasoning_data(model, gpu, fmt, expert_fmt, kv_dtype, prompt, chat_output, reasoning_output,
                               ttft_s, tpot_s)
    ax = linear_axes(max(r.e2e_s for r in d.regimes), max(r.peak_kv for r in d.regimes) / 1e6)
    px, py = ax.px, ax.py
    out = ax.draw("seconds since arrival", "KV cache held (MB)")
    # Fill the areas first (the byte-seconds each request pays for), the longer request underneath, then the
    # lines and an end marker; the chat label sits below its end point, the reasoning one to the left of its own.
    base = f"{px(0):.1f},{py(0):.1f}"
    for r, fill in sorted(zip(d.regimes, _FILLS), key=lambda rf: -rf[0].e2e_s):
        pts = " ".join(f"{px(t):.1f},{py(b / 1e6):.1f}" for t, b in r.curve)
        out.append(f'<polygon class="area" {fill} points="{base} {pts} {px(r.e2e_s):.1f},{py(0):.1f}"/>')
    for r, style, mark in zip(d.regimes, _STYLES, _MARKS):
        pts = " ".join(f"{px(t):.1f},{py(b / 1e6):.1f}" for t, b in r.curve)
        ex, ey = px(r.e2e_s), py(r.peak_kv / 1e6)
        longest = r.e2e_s == max(q.e2e_s for q in d.regimes)
        lx, ly, anchor = (ex - 10, ey + 4, "end") if longest else (ex + 6, ey + 18, "start")
        out.append(f'<polyline class="regime" data-label="{r.label}" data-e2e="{r.e2e_s!r}" '
                   f'data-peak="{r.peak_kv!r}" fill="none" stroke-width="2" {style} points="{pts}"/>'
                   f'<circle cx="{ex:.1f}" cy="{ey:.1f}" r="4" {mark}/>'
                   f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}">{r.label}: {U.fmt_seconds(r.e2e_s)}, '
                   f'{_n(r.peak_kv / 1e6)} MB</text>')
    fid = f"fig-cvr-{model.key.replace('.', '-')}"
    title = f"KV cache held by one chat and one reasoning request on {model.name}"
    desc = "; ".join(f"{r.label}: {_i(r.output_tokens)} output tokens, done after {U.fmt_seconds(r.e2e_s)} holding "
                     f"{U.fmt_bytes(r.peak_kv)} at the end" for r in d.regimes)
    return svg_figure(fid, title, f"{desc}. The area under each line after its first token is the KV byte-seconds "
                      "the request pays for; the ramp before it is the prefill.",
                      out, f"{title}: same prompt, TTFT and TPOT, {_i(prompt)}-token prompt. Generated from the "
                      "same formulas as the table.")
