"""Cost against volume as a chart: self-hosting versus an API, with the crossing marked (Q114)
(formulas: :mod:`macros.formulas.costplan`)."""


from __future__ import annotations

import math
from html import escape

from .. import formulas as F
from .. import units as U
from ..catalog import ApiPrice, Gpu
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _esc, _n, catalog_link
from .figures import figure_id
from .registry import _POSITIVE, COUNT, macro

from .costplan import _MONTH_S, _price_src  # noqa: F401

_W, _H = 640, 380
_X0, _X1, _Y0, _Y1 = 78, 620, 24, 318  # plot area: left, right, top, bottom (SVG y grows downwards)


def _fmt_volume(v: float) -> str:
    for div, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if v >= div:
            x = v / div
            return f"{x:.3g}{suffix}"
    return f"{v:g}"


def _fmt_dollar_tick(y: float) -> str:
    return f"${y:g}" if y >= 1 else f"${y:.{max(0, -int(math.floor(math.log10(y))))}f}"


def _curve(gpu: Gpu, api: ApiPrice, n_gpus: int, tokens_per_s: float, utilization: float, input_share: float):
    p = inputs.gpu_price_of(gpu)
    replica_usd = F.fixed_cost_floor(p.usd_per_hour, n_gpus)
    capacity = tokens_per_s * utilization * _MONTH_S
    blended = F.blended_api_price(api.usd_per_m_input, api.usd_per_m_output, input_share)
    return p, replica_usd, capacity, blended


def cost_curve_svg(gpu: Gpu, api: ApiPrice, n_gpus: int = 1, tokens_per_s: float = 10000.0,
                   utilization: float = 0.5, input_share: float = 0.5, max_replicas: int = 4) -> str:
    """The chart alone: log-log $/M tokens against monthly volume; data-* attributes carry the axes."""
    p, r, c, blended = _curve(gpu, api, n_gpus, tokens_per_s, utilization, input_share)
    v_star = F.first_crossover_volume(r, c, blended)
    lo_anchor = min(v_star or c, c)
    x_lo = 10 ** math.floor(math.log10(lo_anchor) - 1.5)
    x_hi = 10 ** math.ceil(math.log10(max_replicas * c * 1.05))
    costs = []
    n_samples = 240
    xs: list[float] = []
    for i in range(n_samples + 1):
        xs.append(x_lo * (x_hi / x_lo) ** (i / n_samples))
    for k in range(1, max_replicas + 1):  # the exact steps: full at kC, one more replica just above it
        xs += [k * c, k * c * (1 + 1e-9)]
    if v_star is not None:
        xs.append(v_star)
    xs = sorted(x for x in xs if x_lo <= x <= x_hi)
    for x in xs:
        costs.append(F.self_host_usd_per_million(x, r, c))
    y_lo = 10 ** math.floor(math.log10(min(min(costs), blended)) - 0.3)
    y_hi = 10 ** math.ceil(math.log10(max(max(costs), blended)))

    def px(v: float) -> float:
        return _X0 + (math.log10(v) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo)) * (_X1 - _X0)

    def py(y: float) -> float:
        return _Y1 - (math.log10(y) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)) * (_Y1 - _Y0)

    title = f"Cost per million tokens against monthly volume: self-hosted {n_gpus} × {gpu.name} vs {api.name}"
    if v_star is not None:
        desc = (f"Self-hosted cost per million tokens falls as monthly volume grows, from the fixed cost of one "
                f"replica ({U.fmt_usd(r)} a month), and steps up each time a replica is added at "
                f"{_fmt_volume(c)} tokens a month per replica. The API price is flat at {U.fmt_usd(blended)} per "
                f"million. The curves first cross at {_fmt_volume(v_star)} tokens a month "
                f"({_n(v_star / _MONTH_S)} tokens/s sustained). Prices as of {inputs.cat().prices.as_of}.")
    else:
        desc = (f"Self-hosted cost per million tokens never falls below the API's {U.fmt_usd(blended)}: one "
                f"replica full to capacity still costs {U.fmt_usd(r / c * 1e6)} per million. "
                f"Prices as of {inputs.cat().prices.as_of}.")
    slug = figure_id("cost-curve", gpu.key, api.key, n_gpus, tokens_per_s, utilization, input_share, max_replicas)
    out = [f'<svg class="cost-curve" viewBox="0 0 {_W} {_H}" width="{_W}" height="{_H}" '
           f'style="max-width: 100%; height: auto" role="img" aria-labelledby="{slug}-t {slug}-d" '
           f'xmlns="http://www.w3.org/2000/svg" font-size="12" fill="currentColor" '
           f'data-x-min="{x_lo:g}" data-x-max="{x_hi:g}" data-y-min="{y_lo:g}" data-y-max="{y_hi:g}" '
           f'data-plot="{_X0} {_Y0} {_X1} {_Y1}">',
           f'<title id="{slug}-t">{escape(title)}</title>',
           f'<desc id="{slug}-d">{escape(desc)}</desc>']
    grid = ['<g stroke="currentColor" stroke-opacity="0.15" stroke-width="1">']
    ticks = ['<g>']
    e = math.floor(math.log10(x_lo))
    while 10 ** e <= x_hi * 1.0001:
        x = px(10 ** e)
        grid.append(f'<line x1="{x:.1f}" y1="{_Y0}" x2="{x:.1f}" y2="{_Y1}"/>')
        ticks.append(f'<text x="{x:.1f}" y="{_Y1 + 16}" text-anchor="middle">{_fmt_volume(10 ** e)}</text>')
        e += 1
    e = math.floor(math.log10(y_lo))
    while 10 ** e <= y_hi * 1.0001:
        y = py(10 ** e)
        grid.append(f'<line x1="{_X0}" y1="{y:.1f}" x2="{_X1}" y2="{y:.1f}"/>')
        ticks.append(f'<text x="{_X0 - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt_dollar_tick(10 ** e)}</text>')
        e += 1
    grid.append("</g>")
    ticks.append("</g>")
    out += grid + ticks
    out.append(f'<rect x="{_X0}" y="{_Y0}" width="{_X1 - _X0}" height="{_Y1 - _Y0}" fill="none" '
               f'stroke="currentColor" stroke-opacity="0.6"/>')
    out.append(f'<text x="{(_X0 + _X1) / 2:.0f}" y="{_H - 22}" text-anchor="middle">tokens a month '
               f'(input + output, log scale)</text>')
    out.append(f'<text transform="translate(16 {(_Y0 + _Y1) / 2:.0f}) rotate(-90)" text-anchor="middle">'
               f'$ per million tokens (log scale)</text>')
    pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, costs))
    out.append(f'<polyline class="self-host" points="{pts}" fill="none" stroke="currentColor" stroke-width="2.5"/>')
    ya = py(blended)
    out.append(f'<line class="api" x1="{_X0}" y1="{ya:.1f}" x2="{_X1}" y2="{ya:.1f}" '
               f'stroke="var(--md-typeset-a-color, #3f51b5)" stroke-width="2.5" stroke-dasharray="8 5"/>')
    if v_star is not None:
        xc = px(v_star)
        out.append(f'<line x1="{xc:.1f}" y1="{ya:.1f}" x2="{xc:.1f}" y2="{_Y1}" stroke="currentColor" '
                   f'stroke-dasharray="2 3"/>')
        out.append(f'<circle class="crossing" cx="{xc:.2f}" cy="{ya:.2f}" r="6" fill="none" '
                   f'stroke="var(--md-typeset-a-color, #3f51b5)" stroke-width="2.5"/>')
        anchor = "start" if xc < (_X0 + _X1) / 2 else "end"
        dx = 10 if anchor == "start" else -10
        out.append(f'<text x="{xc + dx:.1f}" y="{ya - 12:.1f}" text-anchor="{anchor}" font-weight="bold">'
                   f'crossing: {_fmt_volume(v_star)} tokens/month</text>')
    lx = _X1 - 8
    out.append(f'<text x="{lx}" y="{_Y0 + 18}" text-anchor="end">━ self-hosted, {n_gpus} × {escape(gpu.name)} '
               f'per replica</text>')
    out.append(f'<text x="{lx}" y="{_Y0 + 36}" text-anchor="end" fill="var(--md-typeset-a-color, #3f51b5)">'
               f'╍ API, {U.fmt_usd(blended)} per million</text>')
    out.append("</svg>")
    return "\n".join(out)


@macro("block", example='cost_curve("h100-sxm", "llama-3.1-8b-hosted", n_gpus=1, tokens_per_s=10000, '
                        'utilization=0.5, input_share=0.75)',
       args={"tokens_per_s": _POSITIVE, "max_replicas": COUNT})
def cost_curve(gpu: Gpu, api: ApiPrice, n_gpus: int = 1, tokens_per_s: float = 10000.0, utilization: float = 0.5,
               input_share: float = 0.5, max_replicas: int = 4) -> str:
    """Chart: self-hosted vs API $ per million tokens against monthly volume, crossing marked (inline SVG).

    Self-hosted: whole replicas of `n_gpus` × `gpu` at the catalog's GPU-hour price, each serving
    `tokens_per_s` × `utilization` on average; the first replica is the fixed cost floor. API: the
    catalog price blended at `input_share`. Same formulas as `crossover` and `cost_floor`; the
    results list the volume windows where self-hosting is cheaper.
    """
    if not 0 < utilization <= 1:
        raise MacroInputError(f"utilization must be in (0, 1], got {utilization}")
    if not 0 <= input_share <= 1:
        raise MacroInputError(f"input_share must be in [0, 1], got {input_share}")
    p, r, c, blended = _curve(gpu, api, n_gpus, tokens_per_s, utilization, input_share)
    svg = cost_curve_svg(gpu, api, n_gpus, tokens_per_s, utilization, input_share, max_replicas)
    v_star = F.first_crossover_volume(r, c, blended)
    windows = F.cheaper_windows(r, c, blended, max_replicas)
    ex = Example(f"self-hosted {n_gpus} × {gpu.name} vs {api.name}, by monthly volume")
    ex.formula("self-hosted $/M at volume V = max(1, ceil(V / C)) × R / V × 10^6")
    ex.formula("API $/M = input $/M × share + output $/M × (1 − share); first crossing V = R / (API $/M / 10^6)")
    ex.input("price per GPU-hour", U.fmt_usd(p.usd_per_hour), _price_src(p))
    ex.input("GPUs per replica", str(n_gpus), GIVEN)
    ex.input("tokens/s per replica at the SLO × average utilization", f"{_n(tokens_per_s)} × {_bits(utilization)}",
             "load test (measured) × traffic shape")
    ex.input("API input / output $/M", f"{U.fmt_usd(api.usd_per_m_input)} / {U.fmt_usd(api.usd_per_m_output)}",
             catalog_link("api", api.key, f"{api.key}, as of {inputs.cat().prices.as_of} (illustrative)"))
    ex.input("input share of tokens", _bits(input_share), "assumption")
    ex.step(f"R = {U.fmt_usd(p.usd_per_hour)} × {n_gpus} × 730 = {U.fmt_usd(r)} a month per replica")
    ex.step(f"C = {_n(tokens_per_s)} × {_bits(utilization)} × 3600 × 730 = {_fmt_volume(c)} tokens a month per replica")
    ex.step(f"API: {U.fmt_usd(api.usd_per_m_input)} × {_bits(input_share)} + {U.fmt_usd(api.usd_per_m_output)} × "
            f"{_bits(1 - input_share)} = {U.fmt_usd(blended)} per million")
    ex.table(f'<figure class="cost-curve-figure">\n{svg}\n</figure>')
    if v_star is not None:
        ex.result(f"first crossing at {_fmt_volume(v_star)} tokens a month ({U.fmt_rate(v_star / _MONTH_S)} "
                  f"sustained), marked on the chart")
        ex.result("self-hosting is cheaper only inside these monthly volumes: " + "; ".join(
            f"{k + 1} replica{'s' if k else ''}, {_fmt_volume(lo)} to {_fmt_volume(hi)}"
            for k, (lo, hi) in enumerate(windows)))
    else:
        ex.result(f"no crossing: a full replica costs {U.fmt_usd(r / c * 1e6)} per million, above the API's "
                  f"{U.fmt_usd(blended)}")
    ex.note("Just past each full replica the next one's cost arrives with little traffic. "
            + _esc(inputs.cat().prices.disclaimer))
    return ex.render()


# --- LoRA slots -----------------------------------------------------------------------------------
