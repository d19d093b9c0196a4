"""Operating an LLM fleet: TPOT against ITL, goodput under a joint SLO, admission and shedding, failure
domains (Q142, Q143, Q145; formulas: :mod:`macros.formulas.fleet_ops`). Reasoning requests (Q141) are in
:mod:`.reasoning`."""

from __future__ import annotations

import math

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
_TOK = Arg(inputs.tokens, "tokens", "integer, or a string like `\"8K\"`")
_TOK0 = Arg(lambda name, v: inputs.tokens(name, v, allow_zero=True), "tokens", "integer >= 0, or `\"8K\"`")


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
    ex.input("model, GPU", f"{_mlink(model)}, {_glink(gpu)} ({label} {inputs.fmt_peak(fmt, peak)})", "catalog")
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


# --- Q145: failure domains ------------------------------------------------------------------------

_YEAR_S = 365 * 24 * 3600
_Q145_ARGS = {"total_gpus": Arg(inputs.count, "GPUs in the fleet", "integer >= 1"),
              "failures": _NUMBER, "gpus_observed": _NUMBER, "days": _NUMBER, "detect_s": _NON_NEG,
              "reschedule_s": _NON_NEG, "load_gb_per_s": _NUMBER, "warmup_s": _NON_NEG}


@macro("block", example='failure_domains("deepseek-v3", "h200-sxm", fmt="fp8", total_gpus=32, sizes=[8, 16, 32], '
       'failures=268, gpus_observed=16384, days=54, detect_s=60, reschedule_s=120, load_gb_per_s=2, warmup_s=180)',
       args=_Q145_ARGS)
def failure_domains(model: Model, gpu: Gpu, fmt: Format = "fp8", total_gpus: int = 32, sizes=(8, 16, 32),
                    failures: float = 268, gpus_observed: float = 16384, days: float = 54, detect_s: float = 60,
                    reschedule_s: float = 120, load_gb_per_s: float = 2, warmup_s: float = 180) -> str:
    """Worked example: the same GPUs cut into instances of different sizes: recovery time, availability p^N, capacity.

    GPU failure rate λ = `failures` / (`gpus_observed` × `days` / 365) per GPU-year. Recovery = detect +
    reschedule + weights per GPU / `load_gb_per_s` + warm-up (restart on a spare node). Per-GPU
    availability p = MTBF / (MTBF + recovery), MTBF = 1/λ; an instance of N GPUs is up with probability
    p^N; expected capacity = p^N; all instances down at once = (1 − p^N)^k.
    """
    if not isinstance(sizes, (list, tuple)) or not sizes:
        raise MacroInputError(f"sizes must be a non-empty list of GPUs per instance, got {sizes!r}")
    ns = [inputs.count("sizes", n) for n in sizes]
    for n in ns:
        if total_gpus % n:
            raise MacroInputError(f"sizes: {n} GPUs per instance does not divide total_gpus={total_gpus}")
    weights = F.weight_bytes(model, fmt)
    lam = failures / (gpus_observed * days / 365)
    ex = Example(f"{_i(total_gpus)} × {gpu.name} serving {model.name} as instances of different sizes")
    ex.formula("λ per GPU-year = failures / (GPUs observed × days / 365)")
    ex.formula("recovery = detect + reschedule + weights per GPU / load bandwidth + warm-up")
    ex.formula("p = MTBF / (MTBF + recovery), MTBF = 1/λ; instance availability = p^N")
    ex.formula("expected capacity = k × p^N instances; GPU-hours lost per year = k × N × λ × N × recovery")
    ex.formula("all k instances down at once = (1 − p^N)^k")
    ex.input("model, weights", f"{_mlink(model)}, {_flink(fmt)}: {U.fmt_bytes(weights)}", "catalog")
    ex.input("GPU failures observed", f"{_n(failures)} over {_n(gpus_observed)} GPUs in {_n(days)} days",
             "Llama 3 paper, Table 5 (GPU-attributed interruptions, given)")
    ex.input("detect, reschedule, warm-up", f"{_ms(detect_s)}, {_ms(reschedule_s)}, {_ms(warmup_s)}",
             "assumptions")
    ex.input("weight load bandwidth per GPU", f"{_n(load_gb_per_s)} GB/s", "assumption")
    ex.step(f"λ = {_n(failures)} / ({_n(gpus_observed)} × {_n(days)} / 365) = {_n(lam)} failures per GPU-year "
            f"(MTBF {_n(1 / lam)} years)")
    rows = ["| GPUs per instance N | Instances k | Weights per GPU | Recovery | Instance failures per year | "
            "Instance availability p^N | GPU-hours lost per year | All instances down at once |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for n in ns:
        k = total_gpus // n
        shard = weights / n
        if shard > gpu.engine_memory_bytes:
            raise MacroInputError(f"sizes: {model.name} in {fmt.key} needs {U.fmt_bytes(shard)} per GPU on {n} "
                                  f"GPUs, more than a {gpu.name} holds")
        rec = F.recovery_time(detect_s, reschedule_s, shard, load_gb_per_s * 1e9, warmup_s)
        p = 1 / (1 + lam * rec / _YEAR_S)
        avail = F.instance_availability(p, n)
        rows.append(f"| {_i(n)} | {_i(k)} | {U.fmt_bytes(shard)} | {_ms(rec)} | "
                    f"{_n(F.instance_failure_rate(lam, n))} | {avail:.6%} | "
                    f"{_n(k * F.instance_failure_rate(lam, n) * rec * n / 3600)} | {(1 - avail) ** k:.2e} |")
    ex.table("\n".join(rows))
    ex.result("the fleet sees the same GPU failures per year at every size, but each failure idles N GPUs, so "
              "the capacity lost grows with N, and one instance makes every GPU failure a full outage")
    ex.note("Assumes a spare node to restart on and independent failures. Without a spare, recovery is the "
            "repair time (hours to days), and p^N falls much further. Host, network and software faults add to "
            "λ: in the same paper they are most of the other interruptions.")
    return ex.render()
