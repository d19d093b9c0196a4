"""Fleet-scale sizing (Part C): the prefill and decode pools of a disaggregated deployment, with the
figure that compares them across output lengths, and the expert layout of a wide expert-parallel
deployment (formulas: :mod:`macros.formulas.disagg`)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from ..formulas import disagg as D
from . import inputs
from .blocks import GIVEN, Example, _flink, _glink, _i, _mlink, _n, anchor_id
from .budget import _budget
from .linechart import ACCENT, DASHED, Series, line_chart
from .registry import ARGS, COUNT, Arg, macro
from .speed import _decode

_NUMBER = Arg(inputs.number, "a number", "> 0")
_OUTPUTS = Arg(lambda name, vs: [inputs.tokens(name, v) for v in vs], "list of output lengths (tokens)",
               "e.g. `[500, 1500]`")
_PD_ARGS = {"arrival_rate": _NUMBER, "ttft_ms": _NUMBER, "tpot_ms": _NUMBER, "input_tokens": ARGS["tokens"],
            "outputs": _OUTPUTS, "prefill_gpus": COUNT, "decode_gpus": COUNT, "max_batch": COUNT}


@dataclass(frozen=True)
class PdRow:
    """One traffic mix sized: the decode batch that meets the TPOT target, and both pools."""

    output_tokens: int
    context: int          # mean context during decode: input + output / 2 (Dynamo's SLA planner uses the same)
    batch: int            # per decode instance
    batch_limit: str      # "TPOT" or "memory"
    tpot_s: float         # decode step at that batch
    pools: D.PdPools


def _prefill_s(m: Model, g: Gpu, f: Format, n: int, tokens: int, mfu: float) -> float:
    peak, _ = inputs.peak_flops(g, f)
    flops = F.prefill_matmul_flops(m, tokens, 1) + F.prefill_attention_flops(m, tokens)
    return F.prefill_time(flops, peak * n, mfu)


def _decode_batch(m: Model, g: Gpu, f: Format, kv: Format, n: int, ctx: int, full_ctx: int, tpot_s: float,
                  gpu_util: float, max_batch: int) -> tuple[int, str, float]:
    """Largest batch whose roofline decode step meets ``tpot_s`` and whose sequences, at full length, fit in KV."""
    _, shard, budget = _budget(m, g, f, kv, n, gpu_util, 2.0, 1.0, None)
    per_seq = F.kv_bytes_per_sequence_paged(m, full_ctx, kv, F.DEFAULT_BLOCK_SIZE, shard.kv_fraction)
    mem_max = F.max_concurrent_sequences(budget, per_seq) if budget > 0 else 0
    cap, cap_name = (mem_max, "memory") if mem_max <= max_batch else (max_batch, "max_num_seqs")
    if mem_max < 1:
        raise MacroInputError(f"{m.name} on {n} × {g.name} has no room for one {_i(full_ctx)}-token sequence; "
                              "use more GPUs per decode instance")

    peak = inputs.peak_flops(g, f)[0]
    flops_tok = 2 * F.param_breakdown(m).compute_active

    def step(b: int) -> float:  # roofline: weights + KV over bandwidth, or the batch's FLOPs, plus TP all-reduces
        bound = _decode(m, g, f, None, kv, n, b, ctx)[0]
        return max(bound.memory_time_s, b * flops_tok / (n * peak)) + bound.comm_time_s

    if step(1) > tpot_s:
        raise MacroInputError(f"the TPOT target {U.fmt_seconds(tpot_s)} is below the decode step of {m.name} on "
                              f"{n} × {g.name} at batch 1 ({U.fmt_seconds(step(1))}); use more GPUs per decode "
                              "instance or a looser target")
    lo, hi = 1, cap
    if step(hi) <= tpot_s:
        return hi, cap_name, step(hi)
    while hi - lo > 1:  # step time grows with the batch: the largest batch at or under the target
        mid = (lo + hi) // 2
        if step(mid) <= tpot_s:
            lo = mid
        else:
            hi = mid
    return lo, "TPOT", step(lo)


def pd_rows(model: Model, gpu: Gpu, arrival_rate: float, input_tokens: int, outputs: list[int], fmt: Format,
            kv_dtype: Format, prefill_gpus: int, decode_gpus: int, ttft_s: float, tpot_s: float, mfu: float,
            gpu_util: float, max_batch: int = 1024) -> tuple[float, list[PdRow]]:
    """The prefill time of one prompt and one sized row per output length (the table and the figure)."""
    m, g, f, kv = model, gpu, fmt, kv_dtype
    inputs.check_tp(m, prefill_gpus)
    t_pre = _prefill_s(m, g, f, prefill_gpus, input_tokens, mfu)
    rows = []
    for out in outputs:
        ctx = input_tokens + out // 2
        b, limit, tpot = _decode_batch(m, g, f, kv, decode_gpus, ctx, input_tokens + out, tpot_s, gpu_util,
                                         max_batch)
        pools = D.pd_pools(arrival_rate, t_pre, ttft_s, out, tpot, b, prefill_gpus, decode_gpus)
        rows.append(PdRow(out, ctx, b, limit, tpot, pools))
    return t_pre, rows


@macro("block", example='pd_pools_plan("llama-3.1-70b", "h100-sxm", arrival_rate=10, input_tokens=3000, '
       'outputs=[300, 900], fmt="fp8", kv_dtype="fp8", prefill_gpus=2, decode_gpus=4, ttft_ms=600, tpot_ms=50)',
       args=_PD_ARGS)
def pd_pools_plan(model: Model, gpu: Gpu, arrival_rate: float, input_tokens: int, outputs: list[int],
                  fmt: Format = "bf16", kv_dtype: Format = "bf16", prefill_gpus: int = 1, decode_gpus: int = 1,
                  ttft_ms: float = 1000, tpot_ms: float = 50, mfu: float = 0.5,
                  gpu_util: float = F.DEFAULT_GPU_UTILIZATION, max_batch: int = 1024) -> str:
    """Worked example: prefill and decode pools of a disaggregated deployment, per output length.

    Prefill: one prompt's time `D` on a `prefill_gpus` instance (FLOPs at `mfu`, as `prefill_time`);
    instances = the fewest `n` whose M/D/1 mean TTFT `D + ρD / (2(1 − ρ))`, `ρ = λD / n`, meets
    `ttft_ms`. Decode: per instance the largest batch whose bandwidth-bound step (as `decode_speed`, at
    the mean context `input + output / 2`) meets `tpot_ms` and whose sequences fit in the KV budget at
    full length, at most `max_batch` (`--max-num-seqs`; vLLM 0.11 defaults to 1,024 on GPUs of 70 GiB
    or more, other than A100); concurrency `λ × output × TPOT` (Little's law); instances = concurrency / batch.
    One table row per entry of `outputs`.
    """
    m, g, f, kv = model, gpu, fmt, kv_dtype
    if not outputs:
        raise MacroInputError("outputs must list at least one output length")
    t_pre, rows = pd_rows(m, g, arrival_rate, input_tokens, outputs, f, kv, prefill_gpus, decode_gpus,
                          ttft_ms / 1e3, tpot_ms / 1e3, mfu, gpu_util, max_batch)
    peak, label = inputs.peak_flops(g, f)
    ex = Example(f"prefill and decode pools for {m.name} ({f.name}) on {g.name}, {_n(arrival_rate)} requests/s "
                 f"of {_i(input_tokens)} input tokens")
    ex.formula("prefill: D = prompt FLOPs / (GPUs × peak × MFU); mean TTFT = D + ρD / (2(1 − ρ)), "
               "ρ = λD / instances (M/D/1)")
    ex.formula("decode: in flight = λ × output tokens × TPOT (Little's law); instances = ceil(in flight / batch)")
    ex.input("arrival rate λ / input tokens", f"{_n(arrival_rate)} /s / {_i(input_tokens)}", GIVEN)
    ex.input("mean TTFT target / TPOT target", f"{U.fmt_seconds(ttft_ms / 1e3)} / {U.fmt_seconds(tpot_ms / 1e3)}",
             GIVEN)
    ex.input("model / weights / KV", f"{m.name} / {f.name} / {kv.name}", f"{_mlink(m)}, {_flink(f)}, {_flink(kv)}")
    ex.input(f"GPU: peak ({label}) / bandwidth", f"{inputs.fmt_peak(f, peak)} / "
             f"{U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)}", _glink(g))
    ex.input("GPUs per prefill / decode instance; MFU", f"{prefill_gpus} / {decode_gpus}; {_n(mfu)}",
             "given; MFU: assumption")
    p0 = rows[0].pools
    ex.step(f"prefill of one {_i(input_tokens)}-token prompt on {prefill_gpus} × {g.name}: D = {U.fmt_seconds(t_pre)}; "
            f"λD = {_n(arrival_rate * t_pre)} instances busy on average")
    ex.step(f"{p0.prefill_instances} prefill instances: ρ = {_n(arrival_rate * t_pre / p0.prefill_instances)}, "
            f"mean TTFT {U.fmt_seconds(p0.ttft_s)}"
            + (f" ({p0.prefill_instances - 1} would give "
               f"{U.fmt_seconds(D.md1_ttft(arrival_rate / (p0.prefill_instances - 1), t_pre))})"
               if p0.prefill_instances > 1 and arrival_rate * t_pre / (p0.prefill_instances - 1) < 1 else ""))
    for r in rows:
        ex.step(f"output {_i(r.output_tokens)}: batch {_i(r.batch)} per decode instance ({r.batch_limit}-bound) at "
                f"mean context {_i(r.context)}, step {U.fmt_seconds(r.tpot_s)}; in flight {_n(arrival_rate)} × "
                f"{_i(r.output_tokens)} × {U.fmt_seconds(r.tpot_s)} = {_n(r.pools.decode_concurrency)}")
    tab = ["| Output tokens | Decode batch (limit) | TPOT | In decode | Decode GPUs | Prefill GPUs "
           "| Decode : prefill GPUs |", "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        p = r.pools
        tab.append(f"| {_i(r.output_tokens)} | {_i(r.batch)} ({r.batch_limit}) | {U.fmt_seconds(r.tpot_s)} | "
                   f"{_n(p.decode_concurrency)} | {p.decode_gpus} ({p.decode_instances} × {decode_gpus}) | "
                   f"{p.prefill_gpus} ({p.prefill_instances} × {prefill_gpus}) | {_n(p.decode_to_prefill)} |")
    ex.table("\n".join(tab))
    last = rows[-1].pools
    ex.result(f"{p0.prefill_gpus} prefill GPUs and {p0.decode_gpus} decode GPUs at {_i(rows[0].output_tokens)} "
              f"output tokens" + (f"; at {_i(rows[-1].output_tokens)} the prefill pool is unchanged and decode "
                                  f"needs {last.decode_gpus}" if len(rows) > 1 else ""))
    ex.note("Bandwidth-bound decode steps (an upper bound on speed) and prefill at the assumed MFU; the decode "
            "batch is capped so that every sequence can reach its full length without preemption; an even split "
            "of traffic over prefill instances, Poisson arrivals, equal prompt lengths. Prefix-cache hits, "
            "chunking and the KV transfer are left out.")
    return ex.render()


@macro("block", example='pd_split_measured(input_tokens_per_day=608e9, output_tokens_per_day=168e9, '
       'prefill_tps_per_node=73.7e3, decode_tps_per_node=14.8e3, tokens_per_s_per_sequence=21, '
       'source="DeepSeek, V3/R1 inference system overview")',
       args={k: _NUMBER for k in ("input_tokens_per_day", "output_tokens_per_day", "prefill_tps_per_node",
                                  "decode_tps_per_node", "tokens_per_s_per_sequence", "output_scale")})
def pd_split_measured(input_tokens_per_day: float, output_tokens_per_day: float, prefill_tps_per_node: float,
                      decode_tps_per_node: float, tokens_per_s_per_sequence: float, output_scale: float = 3,
                      source: str = "given") -> str:
    """Worked example: prefill and decode nodes from measured per-node throughput, and the split when outputs grow.

    Average demand = tokens per day / 86,400 s; nodes = demand / per-node throughput, per phase; sequences
    in decode by Little's law = output tokens/s / tokens/s per sequence. The last row multiplies the output
    tokens by `output_scale` at the same per-node decode throughput.
    """
    day = 86_400

    def big(x: float) -> str:
        return (f"{_n(x / 1e9)} billion" if x >= 1e9 else f"{_n(x / 1e6)} million" if x >= 1e6
                else f"{_n(x / 1e3)} thousand" if x >= 1e4 else _n(x))
    inp, out = input_tokens_per_day / day, output_tokens_per_day / day
    p, d = D.pools_from_throughput(inp, out, prefill_tps_per_node, decode_tps_per_node)
    p3, d3 = D.pools_from_throughput(inp, out * output_scale, prefill_tps_per_node, decode_tps_per_node)
    seqs = D.sequences_in_decode(out, tokens_per_s_per_sequence)
    ex = Example("prefill and decode nodes from measured throughput")
    ex.formula("nodes per phase = tokens/s demanded / tokens/s one node sustains in that phase")
    ex.formula("sequences in decode = output tokens/s / tokens/s per sequence (Little's law)")
    ex.input("input / output tokens per day", f"{big(input_tokens_per_day)} / {big(output_tokens_per_day)}",
             source)
    ex.input("per node: prefill input / decode output",
             f"{big(prefill_tps_per_node)} / {big(decode_tps_per_node)} tokens/s", source)
    ex.input("output speed per sequence", U.fmt_rate(tokens_per_s_per_sequence), source)
    ex.step(f"demand: {big(inp)} input and {big(out)} output tokens/s (daily average)")
    ex.step(f"prefill: {big(inp)} / {big(prefill_tps_per_node)} = {_n(p)} nodes; decode: "
            f"{big(out)} / {big(decode_tps_per_node)} = {_n(d)} nodes")
    ex.step(f"in decode: {big(out)} / {_n(tokens_per_s_per_sequence)} = {_i(round(seqs))} sequences, "
            f"{_i(round(seqs / d))} per decode node")
    ex.table("\n".join([
        "| Traffic | Prefill nodes | Decode nodes | Total | Decode : prefill |", "| --- | ---: | ---: | ---: | ---: |",
        f"| as measured | {_n(p)} | {_n(d)} | {_n(p + d)} | {_n(d / p)} |",
        f"| outputs × {_n(output_scale)} | {_n(p3)} | {_n(d3)} | {_n(p3 + d3)} | {_n(d3 / p3)} |"]))
    ex.result(f"{_n(p + d)} nodes on average, decode : prefill = {_n(d / p)}; with outputs × {_n(output_scale)} "
              f"the ratio becomes {_n(d3 / p3)}")
    ex.note("Daily averages, not peaks. The scaled row keeps per-node decode throughput fixed; longer outputs "
            "lengthen the average context, so each decode node holds fewer sequences and the real increase is "
            "larger.")
    return ex.render()


# ---------------------------------------------------------------- the figure: pools against output length

@macro("figure", example='pd_pools_svg("llama-3.1-70b", "h100-sxm", arrival_rate=10, input_tokens=3000, '
       'outputs=[150, 300, 600, 900, 1200, 1800], fmt="fp8", kv_dtype="fp8", prefill_gpus=2, decode_gpus=4, '
       'ttft_ms=600, tpot_ms=50)', args=_PD_ARGS)
def pd_pools_svg(model: Model, gpu: Gpu, arrival_rate: float, input_tokens: int, outputs: list[int],
                 fmt: Format = "bf16", kv_dtype: Format = "bf16", prefill_gpus: int = 1, decode_gpus: int = 1,
                 ttft_ms: float = 1000, tpot_ms: float = 50, mfu: float = 0.5,
                 gpu_util: float = F.DEFAULT_GPU_UTILIZATION, max_batch: int = 1024) -> str:
    """Figure: prefill and decode GPUs against output length, from the same sizing as `pd_pools_plan`.

    Linear axes; one point per entry of `outputs` (at least two, ascending) for each pool; each point
    carries its output length in `data-x` and its GPUs in `data-y`.
    """
    if len(outputs) < 2 or list(outputs) != sorted(set(outputs)):
        raise MacroInputError("outputs must list at least two distinct output lengths in ascending order")
    _, rows = pd_rows(model, gpu, arrival_rate, input_tokens, outputs, fmt, kv_dtype, prefill_gpus, decode_gpus,
                      ttft_ms / 1e3, tpot_ms / 1e3, mfu, gpu_util, max_batch)
    xs = [r.output_tokens for r in rows]
    title = f"Prefill and decode GPUs for {model.name} against output length"
    desc = (f"{_n(arrival_rate)} requests per second of {_i(input_tokens)} input tokens on {gpu.name}: "
            + "; ".join(f"{_i(r.output_tokens)} output tokens: {r.pools.prefill_gpus} prefill GPUs, "
                        f"{r.pools.decode_gpus} decode GPUs" for r in rows)
            + ". The prefill pool does not depend on the output length; the decode pool grows with it.")
    return line_chart(f"fig-pd-pools-{anchor_id('model', model.key)}", title, desc,
                      f"{title}: the same sizing as the worked example (M/D/1 prefill pool, Little's-law decode "
                      "pool). Generated from the catalog.", xs,
                      [Series("prefill", [r.pools.prefill_gpus for r in rows], DASHED),
                       Series("decode", [r.pools.decode_gpus for r in rows], ACCENT)],
                      "output tokens per request", "GPUs in the pool")
