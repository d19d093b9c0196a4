"""Reading inference benchmarks for a buying decision: $ per million tokens at interactivity targets and
the ranking flip, as a table and a throughput-vs-interactivity figure (Q148)
(formulas: :mod:`macros.formulas.benchread`)."""

from __future__ import annotations

import math
from html import escape

from .. import formulas as F
from .. import units as U
from ..errors import MacroInputError
from . import inputs
from .blocks import Example, _esc, _i, _n
from .costplan import _price_src
from .figures import figure_id
from .linechart import LINK, SOLID, Series, line_chart
from .registry import macro

_SAMPLES = 60

_DEFAULT_SYSTEMS = [["System A", "h200-sxm", 8, 15, 0.1, 512], ["System B", "b200", 8, 6, 0.2, 256]]


def _systems(spec: list | None) -> list[tuple[F.DecodeSystem, object, object]]:
    """[[name, gpu key, GPUs, t0 ms, c ms per sequence, max batch], ...] -> (system, gpu, price)."""
    spec = spec or _DEFAULT_SYSTEMS
    if len(spec) != 2:
        raise MacroInputError(f"systems must list exactly two systems, got {len(spec)}")
    out = []
    for row in spec:
        if not isinstance(row, (list, tuple)) or len(row) != 6:
            raise MacroInputError(f"each system is [name, gpu key, GPUs, t0 ms, c ms, max batch], got {row!r}")
        name, key, gpus, t0_ms, c_ms, bmax = row
        g = inputs.gpu(key)
        try:
            s = F.DecodeSystem(str(name), gpus, inputs.number("t0 ms", t0_ms) / 1e3,
                               inputs.number("c ms", c_ms) / 1e3, bmax)
        except ValueError as e:
            raise MacroInputError(str(e)) from e
        out.append((s, g, inputs.gpu_price_of(g)))
    return out


def _ticks(hi: float) -> list[float]:
    step = 10 ** math.floor(math.log10(hi / 4))
    for m in (1, 2, 5, 10):
        if hi / (step * m) <= 6:
            step *= m
            break
    return [k * step for k in range(int(hi / step) + 1)]


def pareto_svg(systems, targets: list[float]) -> str:
    """The two throughput-per-GPU curves against interactivity, the targets and the crossing marked."""
    (a, _, pa), (b, _, pb) = systems
    x_hi = max(a.max_interactivity, b.max_interactivity) * 1.05
    y_hi = max(F.throughput_per_gpu_at(s, s.knee_interactivity) for s in (a, b)) * 1.1
    xt, yt = _ticks(x_hi), _ticks(y_hi)
    cross = F.throughput_crossing(a, b)
    title = f"Throughput per GPU against interactivity: {a.name} and {b.name} (illustrative)"
    desc = (f"{a.name} serves more tokens per GPU at loose interactivity, {b.name} at tight interactivity"
            + (f"; the curves cross at {_n(cross)} tokens/s per user." if cross else ".")
            + " Curves from a stated step-time model, not measured data.")
    slug = figure_id("pareto", repr([(s.name, s.gpus, s.fixed_step_s, s.per_seq_step_s, s.max_batch)
                                     for s in (a, b)]), tuple(targets))
    series = []
    for s, look in zip((a, b), (SOLID, (f'stroke-dasharray="8 5" style="stroke:{LINK}"', LINK))):
        lo, hi = s.knee_interactivity, s.max_interactivity
        xs = [lo + (hi - lo) * j / _SAMPLES for j in range(_SAMPLES + 1)]
        series.append(Series(escape(s.name), [F.throughput_per_gpu_at(s, x) for x in xs], look, xs, points=False))
    caption = (escape(title) + ": " + "; ".join(f"{escape(s.name)}, {s.gpus} GPUs, batch up to {s.max_batch}"
                                                for s in (a, b)) + ". Drawn from the same formulas as the table.")
    return line_chart(slug, escape(title), escape(desc), caption, xt, series,
                      "interactivity (output tokens/s per user)", "output tokens/s per GPU", svg_class="pareto",
                      x_fmt=lambda v: f"{v:g}", x_max=max(x_hi, xt[-1]), y_ticks=yt, y_max=max(y_hi, yt[-1]),
                      y_fmt=lambda v: f"{v:,.0f}", grid=True, vlines=[(t, f"target {t:g}") for t in targets],
                      marks=[] if cross is None else
                      [(cross, F.throughput_per_gpu_at(a, cross), f"throughput flip: {_n(cross)} tokens/s per user")])


def _ms(seconds: float) -> str:
    return f"{_n(round(seconds * 1e3, 6))} ms"


def _r(x: float) -> str:
    return _n(round(x, 6))


def _cell(x: float | None, fmt) -> str:
    return "infeasible" if x is None else fmt(x)


@macro("block", example='benchmark_flip(targets=[20, 60])')
def benchmark_flip(systems: list | None = None, targets: list | None = None) -> str:
    """Worked example: $ per million output tokens of two systems at two interactivity targets, the ranking
    flip, and the throughput-vs-interactivity figure drawn from the same formulas.

    `systems`: two rows `[name, gpu key, GPUs per instance, t0 ms, c ms per sequence, max batch]`; the
    step-time parameters are illustrative, the GPU-hour price comes from prices.yaml. `targets`: per-user
    output tokens/s. Batch at a target = min(max batch, (1/i − t0) / c); throughput per GPU =
    batch / (t0 + c × batch) / GPUs.
    """
    sy = _systems(systems)
    ts = [inputs.number("targets", t) for t in (targets or [20, 60])]
    if len(ts) != 2 or ts[0] >= ts[1]:
        raise MacroInputError(f"targets must be two interactivity values, loose then tight, got {ts}")
    (a, ga, pa), (b, gb, pb) = sy
    ex = Example(f"{a.name} vs {b.name} at {ts[0]:g} and {ts[1]:g} tokens/s per user (illustrative curves)")
    ex.formula("batch at target i: b = min(b_max, (1/i − t0) / c); step time = t0 + c × b")
    ex.formula("output tokens/s per GPU = b / (t0 + c × b) / GPUs; $/M = $/GPU-hour × 10^6 / (tokens/s per GPU × 3600)")
    for s, g, p in sy:
        ex.input(f"{s.name}: GPUs per instance, t0, c, max batch",
                 f"{s.gpus}, {_ms(s.fixed_step_s)}, {_ms(s.per_seq_step_s)}, {_i(s.max_batch)}",
                 "illustrative, not a measurement")
        ex.input(f"{s.name}: price per GPU-hour", U.fmt_usd(p.usd_per_hour), _price_src(p))
    rows = ["| target (tokens/s per user) | system | batch | output tokens/s per GPU | $ per million output tokens |",
            "|---:|---|---:|---:|---:|"]
    winners = []
    for t in ts:
        costs = []
        for s, _, p in sy:
            bt = F.batch_at(s, t)
            tp = F.throughput_per_gpu_at(s, t)
            c = F.usd_per_million_at(s, p.usd_per_hour, t)
            costs.append(c)
            rows.append(f"| {t:g} | {escape(s.name)} | {_cell(bt, _r)} | {_cell(tp, _r)} | {_cell(c, U.fmt_usd)} |")
        feasible = [(c, s.name) for c, (s, _, _) in zip(costs, sy) if c is not None]
        winners.append(min(feasible)[1] if feasible else None)
    for s, p, t in ((a, pa, ts[0]), (b, pb, ts[1])):
        bt = F.batch_at(s, t)
        if bt is None:
            continue
        tp = F.throughput_per_gpu_at(s, t)
        ex.step(f"{s.name} at {t:g}: b = min({_i(s.max_batch)}, (1/{t:g} − {_ms(s.fixed_step_s)}) / "
                f"{_ms(s.per_seq_step_s)}) = {_r(bt)}; {_r(bt)} / {_ms(s.fixed_step_s + s.per_seq_step_s * bt)}"
                f" / {s.gpus} = {_r(tp)} tokens/s per GPU; {U.fmt_usd(p.usd_per_hour)} × 10^6 / ({_r(tp)} × 3600)"
                f" = {U.fmt_usd(F.usd_per_million_at(s, p.usd_per_hour, t))} per million")
    ex.table("\n".join(rows))
    ex.table(pareto_svg(sy, ts))
    for t, w in zip(ts, winners):
        ex.result(f"at {t:g} tokens/s per user the cheaper system is {w or 'neither (both infeasible)'}")
    xt = F.throughput_crossing(a, b)
    xc = F.cost_crossing(a, pa.usd_per_hour, b, pb.usd_per_hour)
    if xt is not None:
        ex.result(f"throughput per GPU ranks them the other way above {_n(xt)} tokens/s per user; "
                  + (f"cost per million tokens only above {_n(xc)}, because the GPU-hours are priced differently"
                     if xc is not None else "cost per million tokens does not flip in the drawn range"))
    ex.note("Curves from a two-parameter step-time model with illustrative parameters, not any vendor's "
            "measurement; read real curves from the benchmark itself. Every paid GPU-hour is assumed busy. "
            + _esc(inputs.cat().prices.disclaimer))
    return ex.render()


@macro("inline", example="output_token_share(8192, 1024)")
def output_token_share(input_tokens: int, output_tokens: int) -> str:
    """Share of output tokens in a fixed-length request, osl / (isl + osl), as a percentage."""
    return U.fmt_pct(F.output_share(inputs.count("input_tokens", input_tokens),
                                    inputs.count("output_tokens", output_tokens)))


@macro("inline", example="tpot_as_interactivity(40)")
def tpot_as_interactivity(tpot_ms: float) -> str:
    """A TPOT bound in ms as per-user speed, 1000 / TPOT, e.g. '25 tokens/s per user'."""
    return f"{_n(F.interactivity_from_tpot_ms(inputs.number('tpot_ms', tpot_ms)))} tokens/s per user"
