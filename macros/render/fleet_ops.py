"""Operating an LLM fleet: TPOT against ITL, goodput under a joint SLO, reasoning-length requests,
admission and shedding, failure domains (Q141-Q145; formulas: :mod:`macros.formulas.fleet_ops`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from ..formulas import fleet_ops as O
from . import inputs
from .blocks import GIVEN, Example, _flink, _glink, _i, _mlink, _n
from .registry import Arg, macro

_VLLM_BENCH = "vLLM 0.11 `vllm bench serve`"


def _num(name: str, v, positive: bool = True) -> float:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or (v <= 0 if positive
                                                                                           else v < 0):
        raise MacroInputError(f"{name} must be a {'positive' if positive else 'non-negative'} number, got {v!r}")
    return float(v)


_NUMBER = Arg(lambda name, v: _num(name, v), "a number", "> 0")
_NON_NEG = Arg(lambda name, v: _num(name, v, positive=False), "a number", ">= 0")


def _ms(s: float) -> str:
    return U.fmt_seconds(s)


def _frac(good: int, total: int) -> str:
    return f"{_i(good)}/{_i(total)} ({U.fmt_pct(good / total)})"


def _requests(raw) -> list[O.RequestTiming]:
    if not isinstance(raw, (list, tuple)) or not raw:
        raise MacroInputError(f"requests must be a non-empty list of [ttft_s, e2e_s, output_tokens], got {raw!r}")
    out = []
    for i, r in enumerate(raw, 1):
        if not isinstance(r, (list, tuple)) or len(r) != 3:
            raise MacroInputError(f"requests item {i} must be [ttft_s, e2e_s, output_tokens], got {r!r}")
        try:
            out.append(O.RequestTiming(*r))
        except (TypeError, ValueError) as exc:
            raise MacroInputError(f"requests item {i}: {exc}") from None
    return out


# --- Q142: SLIs ------------------------------------------------------------------------------------

@macro("block", example="tpot_example(8.4, 0.4, 201)",
       args={"e2e_s": _NUMBER, "ttft_s": _NON_NEG, "output_tokens": Arg(
           lambda name, v: O.RequestTiming(0, 0, v).output_tokens, "a whole number", ">= 2")})
def tpot_example(e2e_s: float, ttft_s: float, output_tokens: int) -> str:
    """Worked example: a request's TPOT from its end-to-end latency, TTFT and output length.

    TPOT = (E2E − TTFT) / (output tokens − 1), the first token's time being the TTFT (vLLM 0.11's
    benchmark and its `vllm:request_time_per_output_token_seconds`).
    """
    tpot = F.tpot_from_e2e(e2e_s, ttft_s, output_tokens)
    ex = Example("TPOT from end-to-end latency and TTFT")
    ex.formula("TPOT = (E2E − TTFT) / (output tokens − 1)")
    ex.input("end-to-end latency (E2E)", _ms(e2e_s), GIVEN)
    ex.input("time to first token (TTFT)", _ms(ttft_s), GIVEN)
    ex.input("output tokens", _i(output_tokens), GIVEN)
    ex.step(f"({_ms(e2e_s)} − {_ms(ttft_s)}) / ({_i(output_tokens)} − 1) = {_ms(e2e_s - ttft_s)} / "
            f"{_i(output_tokens - 1)} = {_ms(tpot)}")
    ex.result(f"TPOT = {_ms(tpot)} per token, {_n(1 / tpot)} tokens/s as the user sees it")
    ex.note("Dividing by all output tokens instead of n − 1 counts the prefill's token as a decode step; "
            "dividing the E2E by the tokens also folds the TTFT into the per-token figure.")
    return ex.render()


@macro("block", example="goodput_example([[0.2, 4.2, 101], [0.9, 4.9, 101], [0.25, 1.45, 21]], "
       "duration_s=10, ttft_ms=500, tpot_ms=50)",
       args={"duration_s": _NUMBER, "ttft_ms": _NUMBER, "tpot_ms": _NUMBER})
def goodput_example(requests, duration_s: float, ttft_ms: float, tpot_ms: float) -> str:
    """Worked example: per-request TPOT, attainment of each limit and of both, goodput, mean TPOT vs mean ITL.

    `requests` is a list of `[ttft_s, e2e_s, output_tokens]`. A request is good when TTFT ≤ the TTFT
    limit and TPOT ≤ the TPOT limit (`vllm bench serve --goodput ttft:<ms> tpot:<ms>`); goodput =
    good requests / run duration. Mean ITL pools every gap (one token per chunk), mean TPOT averages
    requests.
    """
    reqs = _requests(requests)
    ttft_lim, tpot_lim = ttft_ms / 1000, tpot_ms / 1000
    g = F.goodput(reqs, duration_s, ttft_lim, tpot_lim)
    ex = Example(f"goodput under TTFT ≤ {_ms(ttft_lim)} and TPOT ≤ {_ms(tpot_lim)}")
    ex.formula("TPOT per request = (E2E − TTFT) / (output tokens − 1)")
    ex.formula("good = TTFT ≤ limit AND TPOT ≤ limit; goodput = good requests / run duration")
    ex.formula("mean TPOT = mean over requests; mean ITL = Σ(E2E − TTFT) / Σ(output tokens − 1)")
    ex.input("requests (TTFT, E2E, output tokens)", f"{_i(len(reqs))} in the table", GIVEN)
    ex.input("run duration", _ms(duration_s), GIVEN)
    ex.input("limits", f"TTFT {_ms(ttft_lim)}, TPOT {_ms(tpot_lim)}", GIVEN)
    rows = ["| # | TTFT | E2E | Output tokens | TPOT | TTFT ok | TPOT ok | Good |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for i, r in enumerate(reqs, 1):
        tpot = F.tpot_from_e2e(r.e2e_s, r.ttft_s, r.output_tokens) if r.output_tokens > 1 else 0.0
        a, b = r.ttft_s <= ttft_lim, tpot <= tpot_lim
        rows.append(f"| {i} | {_ms(r.ttft_s)} | {_ms(r.e2e_s)} | {_i(r.output_tokens)} | {_ms(tpot)} | "
                    f"{'yes' if a else 'no'} | {'yes' if b else 'no'} | {'**yes**' if a and b else 'no'} |")
    ex.table("\n".join(rows))
    low = max(0, g.ttft_ok + g.tpot_ok - g.requests)
    ex.step(f"TTFT attainment {_frac(g.ttft_ok, g.requests)}; TPOT attainment {_frac(g.tpot_ok, g.requests)}; "
            f"both {_frac(g.good, g.requests)}")
    ex.step(f"from the two marginals alone the joint share could be anywhere from {_frac(low, g.requests)} to "
            f"{_frac(min(g.ttft_ok, g.tpot_ok), g.requests)}: it needs per-request data")
    ex.step(f"goodput = {_i(g.good)} / {_ms(duration_s)} = {_n(g.rate)} requests/s, against a throughput of "
            f"{_i(g.requests)} / {_ms(duration_s)} = {_n(g.throughput)} requests/s")
    mt, mi = F.mean_tpot(reqs), F.pooled_mean_itl(reqs)
    ex.step(f"mean TPOT = {_ms(mt)}; mean ITL (pooled gaps) = {_ms(mi)}")
    ex.result(f"{_frac(g.good, g.requests)} of requests met both limits: goodput {_n(g.rate)} requests/s; "
              f"the mean ITL ({_ms(mi)}) {'meets' if mi <= tpot_lim else 'misses'} the TPOT limit while the mean "
              f"TPOT ({_ms(mt)}) {'meets' if mt <= tpot_lim else 'misses'} it")
    ex.note("The pooled ITL weighs every gap equally, so the long requests dominate it; TPOT weighs every "
            "request equally. One-token requests count with a TPOT of zero, as in " + _VLLM_BENCH + ".")
    return ex.render()


# --- Q141: reasoning-length requests ------------------------------------------------------------

_TOK = Arg(inputs.tokens, "tokens", "integer, or a string like `\"8K\"`")
_TOK0 = Arg(lambda name, v: inputs.tokens(name, v, allow_zero=True), "tokens", "integer >= 0, or `\"8K\"`")
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
    pool = F.kv_budget_bytes(gpu.memory_bytes, weights)
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


def _nice_step(span: float) -> float:
    raw = span / 5
    mag = 10 ** math.floor(math.log10(raw))
    return next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)


def _lin(v: float, lo: float, hi: float, p0: float, p1: float) -> float:
    return p0 + (v - lo) / (hi - lo) * (p1 - p0)


@macro("figure", example='chat_vs_reasoning_svg("gpt-oss-120b", "h100-sxm", fmt="bf16", expert_fmt="mxfp4", '
       'prompt=2000, chat_output=500, reasoning_output="8K", ttft_s=0.5, tpot_s=0.02)', args=_CVR_ARGS)
def chat_vs_reasoning_svg(model: Model, gpu: Gpu, fmt: Format = "bf16", expert_fmt: Format | None = None,
                          kv_dtype: Format = "bf16", prompt: int = 2000, chat_output: int = 500,
                          reasoning_output: int = 8192, ttft_s: float = 0.5, tpot_s: float = 0.02) -> str:
    """Figure: KV held by one chat and one reasoning request against time, from `chat_vs_reasoning_data`.

    Linear axes: seconds since arrival against MB of KV; each line rises to its peak KV at its E2E, and
    the area under it is the KV byte-seconds the table's cost is proportional to.
    """
    d = chat_vs_reasoning_data(model, gpu, fmt, expert_fmt, kv_dtype, prompt, chat_output, reasoning_output,
                               ttft_s, tpot_s)
    t_max = max(r.e2e_s for r in d.regimes)
    y_max = max(r.peak_kv for r in d.regimes) / 1e6
    xs, ys = _nice_step(t_max), _nice_step(y_max)
    x_hi, y_hi = math.ceil(t_max / xs) * xs, math.ceil(y_max / ys) * ys

    def px(t: float) -> float:
        return _lin(t, 0, x_hi, _L, _W - _R)

    def py(mb: float) -> float:
        return _lin(mb, 0, y_hi, _H - _B, _T)

    out = [f'<path fill="none" stroke="currentColor" d="M{_L},{_T}V{_H - _B}H{_W - _R}"/>']
    for i in range(int(round(x_hi / xs)) + 1):
        x = px(i * xs)
        out.append(f'<path stroke="currentColor" d="M{x:.1f},{_H - _B}v5"/><text x="{x:.1f}" y="{_H - _B + 17}" '
                   f'text-anchor="middle">{_n(i * xs)}</text>')
    for i in range(int(round(y_hi / ys)) + 1):
        y = py(i * ys)
        out.append(f'<path stroke="currentColor" d="M{_L - 5},{y:.1f}h5"/><text x="{_L - 8}" y="{y:.1f}" dy="4" '
                   f'text-anchor="end">{_n(i * ys)}</text>')
    out.append(f'<text x="{(_L + _W - _R) / 2}" y="{_H - 8}" text-anchor="middle">seconds since arrival</text>')
    out.append(f'<text transform="translate(14,{(_T + _H - _B) / 2}) rotate(-90)" text-anchor="middle">'
               'KV cache held (MB)</text>')
    for r, style in zip(d.regimes, _STYLES):
        pts = " ".join(f"{px(t):.1f},{py(b / 1e6):.1f}" for t, b in r.curve)
        ex, ey = px(r.e2e_s), py(r.peak_kv / 1e6)
        out.append(f'<polyline class="regime" data-label="{r.label}" data-e2e="{r.e2e_s!r}" '
                   f'data-peak="{r.peak_kv!r}" fill="none" stroke-width="2" {style} points="{pts}"/>'
                   f'<text x="{min(ex + 6, _W - _R - 4):.1f}" y="{ey - 8:.1f}" '
                   f'text-anchor="{"start" if ex < _W / 2 else "end"}">{r.label}: {U.fmt_seconds(r.e2e_s)}, '
                   f'{_n(r.peak_kv / 1e6)} MB</text>')
    fid = f"fig-cvr-{model.key.replace('.', '-')}"
    title = f"KV cache held by one chat and one reasoning request on {model.name}"
    desc = "; ".join(f"{r.label}: {_i(r.output_tokens)} output tokens, done after {U.fmt_seconds(r.e2e_s)} holding "
                     f"{U.fmt_bytes(r.peak_kv)} at the end" for r in d.regimes)
    return (f'<figure class="msib-figure"><svg viewBox="0 0 {_W} {_H}" role="img" '
            f'aria-labelledby="{fid}-t {fid}-d" font-size="12" fill="currentColor">'
            f'<title id="{fid}-t">{title}</title><desc id="{fid}-d">{desc}. The area under each line is the KV '
            f'byte-seconds the request pays for.</desc>{"".join(out)}</svg>'
            f'<figcaption>{title}: same prompt, TTFT and TPOT, {_i(prompt)}-token prompt. Generated from the '
            'same formulas as the table.</figcaption></figure>')


# --- Q143: admission and shedding -----------------------------------------------------------------

_Q143_ARGS = {"token_budget": _TOK, "decode_seqs": Arg(lambda name, v: inputs.tokens(name, v, allow_zero=True),
                                                       "a whole number", ">= 0"),
              "mfu": _NUMBER, "mean_prompt": _TOK, "prompt": _TOK, "ttft_slo_s": _NUMBER, "overhead_s": _NON_NEG}


@macro("block", example='admission_example("llama-3.1-8b", "h100-sxm", token_budget=8192, decode_seqs=128, '
       'mfu=0.5, mean_prompt=3000, prompt=3000, ttft_slo_s=2, overhead_s=0.05, queued=[0, 10, 20, 40])',
       args=_Q143_ARGS)
def admission_example(model: Model, gpu: Gpu, fmt: Format = "bf16", token_budget: int = 8192,
                      decode_seqs: int = 128, mfu: float = 0.5, mean_prompt: int = 3000, prompt: int = 3000,
                      ttft_slo_s: float = 2.0, overhead_s: float = 0.05, queued=(0, 10, 20, 40)) -> str:
    """Worked example: predicted wait and TTFT from the prompt tokens queued ahead, and the shed threshold.

    Step time = matmul FLOPs of a full step of `token_budget` tokens / (peak × MFU); prefill rate =
    (budget − running decodes) / step time; wait = queued prompt tokens / rate; predicted TTFT =
    overhead + wait + own prompt / rate. Shed when the queue exceeds (SLO − overhead) × rate − own prompt.
    """
    peak, label = inputs.peak_flops(gpu, fmt)
    step = F.prefill_time(F.prefill_matmul_flops(model, token_budget, decode_seqs + 1), peak, mfu)
    rate = F.prefill_rate_under_budget(token_budget, decode_seqs, step)
    limit = F.shed_threshold_tokens(ttft_slo_s, prompt, rate, overhead_s)
    counts = [inputs.tokens("queued", q, allow_zero=True) for q in (queued or ())]
    if not counts:
        raise MacroInputError("queued must list at least one queue length in requests, e.g. [0, 10, 20]")
    ex = Example(f"admission on {model.name}, one {gpu.name}")
    ex.formula("step time = 2 × matmul params × step tokens / (peak × MFU)")
    ex.formula("prefill rate = (token budget − running decodes) / step time")
    ex.formula("predicted TTFT = overhead + queued prompt tokens / rate + own prompt / rate")
    ex.formula("shed threshold = (TTFT SLO − overhead) × rate − own prompt (tokens queued ahead)")
    ex.input("model, GPU", f"{_mlink(model)}, {_glink(gpu)} ({label} {U.fmt_flops(peak)})", "catalog")
    ex.input("token budget per step", _i(token_budget), "`--max-num-batched-tokens` (vLLM 0.11 default on H100)")
    ex.input("running decodes", _i(decode_seqs), GIVEN)
    ex.input("MFU", _n(mfu), "assumption")
    ex.input("mean prompt of queued requests, own prompt", f"{_i(mean_prompt)}, {_i(prompt)} tokens", GIVEN)
    ex.input("TTFT SLO, overhead", f"{_ms(ttft_slo_s)}, {_ms(overhead_s)}", GIVEN)
    ex.step(f"step time = {_ms(step)}; prefill rate = ({_i(token_budget)} − {_i(decode_seqs)}) / {_ms(step)} = "
            f"{_n(rate)} prompt tokens/s")
    ex.step(f"shed threshold = ({_ms(ttft_slo_s)} − {_ms(overhead_s)}) × {_n(rate)} − {_i(prompt)} = "
            f"{_i(limit)} tokens ≈ {_n(limit / mean_prompt)} requests of {_i(mean_prompt)} tokens")
    rows = ["| Requests queued ahead | Prompt tokens queued | Predicted wait | Predicted TTFT | Decision |",
            "| --- | --- | --- | --- | --- |"]
    for q in counts:
        tokens = q * mean_prompt
        wait = F.predicted_wait(tokens, rate)
        ttft = overhead_s + wait + prompt / rate
        rows.append(f"| {_i(q)} | {_i(tokens)} | {_ms(wait)} | {_ms(ttft)} | "
                    f"{'admit' if tokens <= limit else '**shed** (or degrade)'} |")
    ex.table("\n".join(rows))
    ex.result(f"admit while at most {_i(limit)} prompt tokens wait ahead; beyond that the request misses "
              f"{_ms(ttft_slo_s)} even if served")
    ex.note("Attention FLOPs and the decodes' KV reads are left out of the step time, so measure it; the "
            "estimate assumes first-come first-served and no arrivals of higher priority.")
    return ex.render()
