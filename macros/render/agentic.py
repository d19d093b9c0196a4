"""Agentic multi-turn traffic: hold the KV across a tool call, recompute it, or reload it from host memory;
the break-even idle time and the prefill a session pays per turn (Q140; formulas:
:mod:`macros.formulas.fleet_ops`)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _flink, _glink, _i, _mlink, _n
from .fleet_ops import _NON_NEG, _NUMBER, _TOK, _ms
from .reasoning import linear_axes, svg_figure
from .registry import Arg, macro

_ARGS = {"mfu": _NUMBER, "gap_s": _NON_NEG, "link_gb_per_s": _NUMBER, "system": _TOK, "new_per_turn": _TOK,
         "output_per_turn": Arg(lambda name, v: inputs.tokens(name, v, allow_zero=True), "tokens", ">= 0"),
         "turns": Arg(inputs.count, "turns", "integer >= 1")}


@dataclass(frozen=True)
class HoldVsRecompute:
    kv: float            # bytes of the session's KV
    pool: float          # KV pool of the replica, bytes
    prefill_s: float     # recompute time of the whole context
    reload_s: float      # host-to-GPU copy time
    price_s: float       # USD per GPU-second
    break_even_s: float  # idle time at which holding costs as much as recomputing


def hold_vs_recompute_data(model: Model, gpu: Gpu, fmt: Format, kv_dtype: Format, context: int, mfu: float,
                           link_gb_per_s: float) -> HoldVsRecompute:
    """The numbers the table and the figure share (one-GPU replica, KV pool at the default utilization)."""
    pool = F.kv_budget_bytes(gpu.engine_memory_bytes, F.weight_bytes(model, fmt))
    if pool <= 0:
        raise MacroInputError(f"{model.name} in {fmt.key} does not fit one {gpu.name}: no KV pool is left")
    kv = F.kv_bytes_per_sequence(model, context, kv_dtype)
    if kv > pool:
        raise MacroInputError(f"context: {_i(context)} tokens need {U.fmt_bytes(kv)} of KV, more than the "
                              f"{U.fmt_bytes(pool)} pool of one {gpu.name}")
    peak, _ = inputs.peak_flops(gpu, fmt)
    flops = F.prefill_matmul_flops(model, context) + F.prefill_attention_flops(model, context)
    prefill = F.prefill_time(flops, peak, mfu)
    reload = F.transfer_time(kv, link_gb_per_s * 1e9)
    price = inputs.gpu_price_of(gpu).usd_per_hour / 3600
    return HoldVsRecompute(kv, pool, prefill, reload, price, F.break_even_hold_seconds(prefill, kv, pool))


@macro("block", example='kv_between_turns("llama-3.1-8b", "h100-sxm", context="32K", mfu=0.5, gap_s=30, '
       'link_gb_per_s=25)', args=_ARGS)
def kv_between_turns(model: Model, gpu: Gpu, fmt: Format = "bf16", kv_dtype: Format = "bf16",
                     context: int = 32768, mfu: float = 0.5, gap_s: float = 30, link_gb_per_s: float = 25) -> str:
    """Worked example: hold a session's KV in HBM through a tool call, recompute it, or reload it from host memory.

    Hold: the idle KV's share of the pool for the gap, at the GPU's price. Recompute: the replica busy for
    the context's prefill (matmul + attention FLOPs / (peak × MFU)). Reload: KV bytes / host link
    bandwidth, added to the next TTFT. Break-even idle time = prefill time × pool / KV bytes.
    """
    d = hold_vs_recompute_data(model, gpu, fmt, kv_dtype, context, mfu, link_gb_per_s)
    hold = F.kv_hold_cost(d.kv, gap_s, d.pool, d.price_s)
    ex = Example(f"KV of a {_i(context)}-token session across a {_ms(gap_s)} tool call, {model.name} on one "
                 f"{gpu.name}")
    ex.formula("hold = price per second × KV bytes / KV pool × idle seconds")
    ex.formula("recompute = price per second × prefill time of the context")
    ex.formula("break-even idle time = prefill time × KV pool / KV bytes (the price cancels)")
    ex.input("model, GPU", f"{_mlink(model)}, {_glink(gpu)}", "catalog")
    ex.input("weights, KV format", f"{_flink(fmt)}, {_flink(kv_dtype)}", GIVEN)
    ex.input("KV pool", U.fmt_bytes(d.pool), "memory × 0.9 − weights − activations − runtime reserve")
    ex.input("GPU price", U.fmt_usd(d.price_s * 3600) + " per hour", "[prices](/reference/prices.md)")
    ex.input("MFU, host link", f"{_n(mfu)}, {_n(link_gb_per_s)} GB/s", "assumptions")
    ex.step(f"session KV = {U.fmt_bytes(d.kv)} = {U.fmt_pct(d.kv / d.pool)} of the pool")
    ex.step(f"prefill of {_i(context)} tokens = {_ms(d.prefill_s)}; reload = {U.fmt_bytes(d.kv)} / "
            f"{_n(link_gb_per_s)} GB/s = {_ms(d.reload_s)}")
    ex.step(f"break-even = {_ms(d.prefill_s)} × {U.fmt_bytes(d.pool)} / {U.fmt_bytes(d.kv)} = "
            f"{_ms(d.break_even_s)}")
    rows = ["| Option | Added to the next turn's TTFT | GPU cost for this gap | Where the KV waits |",
            "| --- | --- | --- | --- |",
            f"| Hold in HBM | none | {U.fmt_usd(hold)} | GPU memory, {U.fmt_pct(d.kv / d.pool)} of the pool |",
            f"| Recompute | {_ms(d.prefill_s)} | {U.fmt_usd(d.price_s * d.prefill_s)} | nowhere |",
            f"| Reload from host memory | {_ms(d.reload_s)} | copy only | host DRAM |"]
    ex.table("\n".join(rows))
    cheaper = "holding" if gap_s < d.break_even_s else "recomputing"
    ex.result(f"for a {_ms(gap_s)} gap {cheaper} is cheaper on the GPU (break-even {_ms(d.break_even_s)}); "
              f"reloading from host memory costs {_ms(d.reload_s)} of TTFT and no GPU time")
    ex.note("Assumes the KV pool is the binding resource (a full engine), so idle KV displaces work. On an "
            "engine with free blocks holding costs nothing until they are needed. The reload time assumes the "
            "copy is not overlapped with compute.")
    return ex.render()


@macro("block", example='agent_session("llama-3.1-8b", "h100-sxm", system=2000, new_per_turn=1500, '
       'output_per_turn=300, turns=8, mfu=0.5)', args=_ARGS)
def agent_session(model: Model, gpu: Gpu, fmt: Format = "bf16", system: int = 2000, new_per_turn: int = 1500,
                  output_per_turn: int = 300, turns: int = 8, mfu: float = 0.5) -> str:
    """Worked example: prompt tokens and prefill time per turn of an agent session, with and without the KV kept.

    Turn k prefills system + (k − 1) × (new + output) + new tokens without a cache, only the new tokens
    with it (the first turn pays the system prompt). Prefill time = matmul FLOPs / (peak × MFU); attention
    against the growing prefix is left out, which understates the uncached cost.
    """
    peak, _ = inputs.peak_flops(gpu, fmt)
    cold = F.session_prefill_tokens(system, new_per_turn, output_per_turn, turns, cached=False)
    warm = F.session_prefill_tokens(system, new_per_turn, output_per_turn, turns, cached=True)

    def secs(tokens: int) -> float:
        return F.prefill_time(F.prefill_matmul_flops(model, tokens), peak, mfu)

    ex = Example(f"an agent session of {_i(turns)} turns on {model.name}, one {gpu.name}")
    ex.formula("prefill tokens, turn k, no cache = system + (k − 1) × (new + output) + new")
    ex.formula("prefill tokens, turn k, KV kept = new (turn 1: system + new)")
    ex.formula("prefill time = 2 × matmul params × tokens / (peak × MFU)")
    ex.input("model, GPU", f"{_mlink(model)}, {_glink(gpu)}", "catalog")
    ex.input("system prompt, new input per turn, output per turn",
             f"{_i(system)}, {_i(new_per_turn)}, {_i(output_per_turn)} tokens", GIVEN)
    ex.input("MFU", _n(mfu), "assumption")
    rows = ["| Turn | Prefill tokens, no cache | Prefill, no cache | Prefill tokens, KV kept | Prefill, KV kept |",
            "| --- | --- | --- | --- | --- |"]
    for k, (c, w) in enumerate(zip(cold, warm, strict=True), 1):
        rows.append(f"| {k} | {_i(c)} | {_ms(secs(c))} | {_i(w)} | {_ms(secs(w))} |")
    tc, tw = sum(cold), sum(warm)
    sc, sw = sum(secs(c) for c in cold), sum(secs(w) for w in warm)
    rows.append(f"| **total** | **{_i(tc)}** | **{_ms(sc)}** | **{_i(tw)}** | **{_ms(sw)}** |")
    ex.table("\n".join(rows))
    ex.result(f"without the KV the session prefills {_n(tc / tw)} × the tokens; the last turn alone waits "
              f"{_ms(secs(cold[-1]))} instead of {_ms(secs(warm[-1]))} of prefill")
    ex.note("Without a cache the total grows with the square of the number of turns; with it, linearly. "
            "Prefix caching gives the kept case only while the blocks survive eviction.")
    return ex.render()


@macro("figure", example='kv_hold_svg("llama-3.1-8b", "h100-sxm", context="32K", mfu=0.5, link_gb_per_s=25)',
       args=_ARGS)
def kv_hold_svg(model: Model, gpu: Gpu, fmt: Format = "bf16", kv_dtype: Format = "bf16", context: int = 32768,
                mfu: float = 0.5, link_gb_per_s: float = 25) -> str:
    """Figure: GPU-seconds spent on a session's KV against the idle gap: hold (rising) vs recompute (flat).

    From `hold_vs_recompute_data`, the same numbers as `kv_between_turns`: hold = KV / pool × gap,
    recompute = prefill time, both in GPU-seconds; the lines cross at the break-even idle time.
    """
    d = hold_vs_recompute_data(model, gpu, fmt, kv_dtype, context, mfu, link_gb_per_s)
    ax = linear_axes(2 * d.break_even_s, 2 * d.prefill_s)
    px, py, x_hi = ax.px, ax.py, ax.x_hi
    out = ax.draw("idle gap between turns (s)", "GPU-seconds per turn")
    slope = d.kv / d.pool
    x_end = min(x_hi, ax.y_hi / slope)       # the hold line stops where it leaves the plot
    out.append(f'<polyline class="hold" data-slope="{slope!r}" fill="none" stroke-width="2" '
               f'style="stroke:var(--md-typeset-a-color)" points="{px(0):.1f},{py(0):.1f} {px(x_end):.1f},'
               f'{py(slope * x_end):.1f}"/><text x="{px(x_end) - 10:.1f}" y="{py(slope * x_end) + 4:.1f}" '
               'text-anchor="end">hold in HBM</text>')
    out.append(f'<polyline class="recompute" data-level="{d.prefill_s!r}" fill="none" stroke-width="2" '
               f'stroke="currentColor" stroke-dasharray="6 4" points="{px(0):.1f},{py(d.prefill_s):.1f} '
               f'{px(x_hi):.1f},{py(d.prefill_s):.1f}"/><text x="{px(0) + 6:.1f}" y="{py(d.prefill_s) - 8:.1f}">'
               f'recompute: {_ms(d.prefill_s)}</text>')
    bx = px(d.break_even_s)
    out.append(f'<path class="break-even" data-seconds="{d.break_even_s!r}" stroke="currentColor" '
               f'stroke-dasharray="2 3" d="M{bx:.1f},{py(d.prefill_s):.1f}V{py(0):.1f}"/>'
               f'<text x="{bx + 6:.1f}" y="{py(0) - 8:.1f}">break-even {_ms(d.break_even_s)}</text>')
    fid = f"fig-kvhold-{model.key.replace('.', '-')}"
    title = f"Holding against recomputing the KV of a {_i(context)}-token session on {model.name}"
    desc = (f"Holding {U.fmt_bytes(d.kv)} of KV costs {U.fmt_pct(d.kv / d.pool)} of the replica per second of "
            f"idle time; recomputing costs {_ms(d.prefill_s)} of the replica once. They cross at "
            f"{_ms(d.break_even_s)}.")
    return svg_figure(fid, title, desc, out, f"{title}, on one {gpu.name}. Generated from the same formulas as "
                      "the table.")
