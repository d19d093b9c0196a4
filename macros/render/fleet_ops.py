"""Operating an LLM fleet: TPOT against ITL, goodput under a joint SLO, reasoning-length requests,
admission and shedding, failure domains (Q141-Q145; formulas: :mod:`macros.formulas.fleet_ops`)."""

from __future__ import annotations

import math

from .. import formulas as F
from .. import units as U
from ..errors import MacroInputError
from ..formulas import fleet_ops as O
from .blocks import GIVEN, Example, _i, _n
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
