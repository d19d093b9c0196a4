"""Drill types on load and cost: Little's law, cost per million tokens, the self-host/API crossover."""

from __future__ import annotations

from macros import formulas as F
from macros import units as U
from macros.render.blocks import _bits, _i

from .core import TP_CHOICES, Ctx, Draft, Rng, _num


def make_littles_law(rng: Rng, ctx: Ctx) -> Draft:
    rate = rng.pick((2, 4, 5, 8, 10, 12, 16, 20, 25, 40, 50, 80, 100))
    ttft_ms = rng.pick((150, 200, 250, 300, 400, 500, 800))
    tpot_ms = rng.pick((8, 10, 12, 15, 20, 25, 30, 40, 50))
    out = rng.pick((100, 150, 200, 256, 300, 500, 800, 1000))
    ttft, tpot = ttft_ms / 1000, tpot_ms / 1000
    w = ttft + out * tpot
    answer = F.littles_law(arrival_rate=rate, time_in_system=w)
    v = {"rate": _i(rate), "ttft": _i(ttft_ms), "tpot": _i(tpot_ms), "out": _i(out), "w": _num(w),
         "decode": _num(out * tpot), "ttft_s": _bits(ttft), "answer": _num(answer)}
    traps = {"ttft_only": F.littles_law(arrival_rate=rate, time_in_system=ttft),
             "ttft_forgotten": F.littles_law(arrival_rate=rate, time_in_system=out * tpot),
             "ms_as_s": F.littles_law(arrival_rate=rate, time_in_system=ttft_ms + out * tpot_ms)}
    return Draft({}, v, answer, traps, question=6)


LITTLES_LAW = {
    "title": "requests in flight at {rate} requests/s",
    "prompt": ["A chat service receives {rate} requests per second.",
               "Each request waits {ttft} ms for its first token, then streams {out} output tokens at {tpot} ms "
               "per token."],
    "ask": ["On average, how many requests are in flight?"],
    "formulas": ["L = λ × W (Little's law)", "W = TTFT + output tokens × TPOT"],
    "inputs": [["arrival rate λ", "{rate} requests/s", "given"], ["TTFT", "{ttft} ms", "given"],
               ["output tokens", "{out}", "given"], ["TPOT", "{tpot} ms", "given"]],
    "steps": ["W = {ttft_s} s + {out} × {tpot} ms = {ttft_s} + {decode} = {w} s",
              "L = {rate} × {w} = {answer}"],
    "results": ["{answer} requests in flight"],
    "notes": ["Little's law holds for any stable system in steady state, whatever the arrival pattern."],
}

COST_RATES = (400, 800, 1200, 2000, 2500, 3000, 4000, 6000, 10000)


def _price_values(v: dict, p, g, n) -> None:
    v.update(gpu=g.name, price=U.fmt_usd(p.usd_per_hour), n=_i(n), hourly=U.fmt_usd(p.usd_per_hour * n))


def make_cost_per_m(rng: Rng, ctx: Ctx) -> Draft:
    p = rng.pick(ctx.gpu_prices)
    n = rng.pick(TP_CHOICES)
    tps = rng.pick(COST_RATES) * n
    util = rng.pick((0.8, 0.6, 0.5, 0.4, 0.3))
    g = ctx.cat.gpu(p.gpu)
    answer = F.cost_per_million_tokens(p.usd_per_hour, n, tps, util)
    v: dict = {}
    _price_values(v, p, g, n)
    v.update(tps=_i(tps), util=U.fmt_pct(util), util_f=_bits(util), result=U.fmt_usd(answer),
             per_hour_tokens=_i(tps * 3600 * util))
    traps = {"idle_forgotten": F.cost_per_million_tokens(p.usd_per_hour, n, tps, 1.0)}
    if n > 1:
        traps["gpus_forgotten"] = F.cost_per_million_tokens(p.usd_per_hour, 1, tps, util)
    return Draft({"gpu": g.key, "price": p.key}, v, answer, traps, question=114)


COST_PER_M = {
    "title": "cost per million tokens on {n} × {gpu}",
    "prompt": ["{n} × {gpu}, rented at {price} per GPU-hour, serve {tps} tokens/s in total while busy.",
               "They are busy {util} of the hours paid for."],
    "ask": ["What does a million tokens cost?"],
    "formulas": ["$ per million tokens = price per GPU-hour × GPUs / (tokens/s × 3,600 × busy share) × 10^6"],
    "inputs": [["price per GPU-hour", "{price}", "price"], ["GPUs", "{n}", "given"],
               ["throughput while busy", "{tps} tokens/s", "given"], ["busy share", "{util_f}", "given"]],
    "steps": ["cost per hour: {price} × {n} = {hourly}",
              "tokens per paid hour: {tps} × 3,600 × {util_f} = {per_hour_tokens}",
              "{hourly} / {per_hour_tokens} × 10^6 = {result}"],
    "results": ["{result} per million tokens"],
    "notes": ["Prices are illustrative catalog figures, not quotes."],
}


def make_crossover(rng: Rng, ctx: Ctx) -> Draft:
    p = rng.pick(ctx.gpu_prices)
    n = rng.pick(TP_CHOICES)
    a = rng.pick(ctx.api_prices)
    share = rng.pick((0.5, 0.6, 0.75, 0.8, 0.9))
    g = ctx.cat.gpu(p.gpu)
    blended = F.blended_api_price(a.usd_per_m_input, a.usd_per_m_output, share)
    answer = F.crossover_tokens_per_s(p.usd_per_hour, n, blended)
    v: dict = {}
    _price_values(v, p, g, n)
    v.update(api=a.key, pin=U.fmt_usd(a.usd_per_m_input), pout=U.fmt_usd(a.usd_per_m_output), share=U.fmt_pct(share),
             share_f=_bits(share), out_f=_bits(1 - share), blended=U.fmt_usd(blended),
             result=f"{_num(answer)} tokens/s")
    traps = {"output_price_only": F.crossover_tokens_per_s(p.usd_per_hour, n, a.usd_per_m_output),
             "input_price_only": F.crossover_tokens_per_s(p.usd_per_hour, n, a.usd_per_m_input)}
    if n > 1:
        traps["gpus_forgotten"] = F.crossover_tokens_per_s(p.usd_per_hour, 1, blended)
    return Draft({"gpu": g.key, "price": p.key, "api": a.key}, v, answer, traps, question=114)


CROSSOVER = {
    "title": "self-host or API: {n} × {gpu} against {api}",
    "prompt": ["A hosted API charges {pin} per million input tokens and {pout} per million output tokens; "
               "{share} of your tokens are input tokens.",
               "Self-hosting takes {n} × {gpu} at {price} per GPU-hour, paid whether busy or not."],
    "ask": ["Above what sustained rate, in tokens per second, is self-hosting cheaper?"],
    "formulas": ["blended API price = input price × input share + output price × (1 − input share)",
                 "crossover tokens/s = price per GPU-hour × GPUs / 3,600 / (blended price / 10^6)"],
    "inputs": [["API price in / out per million", "{pin} / {pout}", "api"], ["input share", "{share_f}", "given"],
               ["price per GPU-hour", "{price}", "price"], ["GPUs", "{n}", "given"]],
    "steps": ["blended: {pin} × {share_f} + {pout} × {out_f} = {blended} per million tokens",
              "self-hosting per hour: {price} × {n} = {hourly}",
              "{hourly} / 3,600 / ({blended} / 10^6) = {result}"],
    "results": ["{result}"],
    "notes": ["Only meaningful if the deployment can serve that rate; above its capacity add replicas.",
              "Prices are illustrative catalog figures, not quotes."],
}
