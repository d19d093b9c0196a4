"""Wide expert parallelism (Part C, Q137): the layout of a DeepSeek-class MoE over a large EP group, one MoE
layer's expert time against its dispatch and combine, the figure across EP sizes, and EPLB's effect on the
busiest GPU (formulas: :mod:`macros.formulas.wideep`)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Gpu, Model
from ..errors import MacroInputError
from ..formulas import wideep as WE
from . import inputs
from .blocks import GIVEN, Example, _glink, _i, _mlink, _n, anchor_id
from .linechart import ACCENT, DASHED, Series, line_chart
from .registry import COUNT, Arg, macro

GPUS_PER_NODE = 8  # NVLink domain of an HGX H100/H200/H800 node: EP up to this stays on NVLink
SCALE_GROUP = 128  # DeepEP v1 FP8 dispatch: one float32 scale per 128 channels
_NUMBER = Arg(inputs.number, "a number", "> 0")
_LOADS = Arg(lambda name, vs: [inputs.number(name, v, positive=False) for v in vs], "expert loads", "numbers >= 0")
_ARGS = {"batch": COUNT, "redundant": Arg(lambda n, v: int(inputs.number(n, v, positive=False)), "a whole number",
                                           ">= 0"),
         "hot_factor": _NUMBER, "hot_copies": COUNT, "link_gb_per_s": _NUMBER,
         "eps": Arg(lambda name, vs: [inputs.count(name, v) for v in vs], "list of EP sizes", "e.g. `[8, 32, 144]`"),
         "loads": _LOADS, "copies": COUNT}


@dataclass(frozen=True)
class EpPoint:
    ep: int
    redundant: int
    layout: WE.ExpertLayout
    layer: WE.WideEpLayer
    link: str


def _min_redundant(num_experts: int, ep: int) -> int:
    """Fewest redundant copies that make the copies divide evenly over ``ep`` GPUs."""
    return (-num_experts) % ep


def ep_point(m: Model, g: Gpu, ep: int, batch: int, redundant: int | None = None, link_gb_per_s: float | None = None,
             hot_factor: float = 1.0, hot_copies: int = 1) -> EpPoint:
    """One EP size: layout and MoE-layer times for ``batch`` tokens per GPU (the table and the figure)."""
    if not m.is_moe:
        raise MacroInputError(f"{m.key!r} is a dense model; expert parallelism needs an MoE model")
    mo, b = m.moe, F.param_breakdown(m)
    red = _min_redundant(mo.num_experts, ep) if redundant is None else redundant
    layout = WE.expert_layout(mo.num_experts, mo.experts_per_token, ep, batch * ep, red, hot_factor, hot_copies)
    if ep <= GPUS_PER_NODE:
        bw, link = g.interconnect_bytes_per_s_per_direction, "NVLink"
        if not bw:
            raise MacroInputError(f"{g.name} has no interconnect bandwidth in gpus.yaml")
    elif link_gb_per_s:
        bw, link = link_gb_per_s * 1e9, f"network {_n(link_gb_per_s)} GB/s"
    else:
        raise MacroInputError(f"EP {ep} spans more than one {GPUS_PER_NODE}-GPU node: give link_gb_per_s, the "
                              "all-to-all bandwidth per GPU across nodes")
    fp8 = inputs.fmt("fp8")
    per_expert = F.weight_bytes_breakdown(m, fp8).routed_experts / (mo.num_experts * b.moe_layers)
    peak = inputs.peak_flops(g, fp8)[0]
    disp = WE.ep_dispatch_bytes(batch, mo.experts_per_token, m.hidden_size, 1, SCALE_GROUP)
    comb = WE.ep_dispatch_bytes(batch, mo.experts_per_token, m.hidden_size, 2)
    layer = WE.wide_ep_layer(layout.slots_per_gpu, per_expert, layout.hot_tokens_per_gpu, 2 * b.params_per_expert,
                             disp, comb, g.memory_bandwidth_bytes_per_s, peak, bw)
    return EpPoint(ep, red, layout, layer, link)


@macro("block", example='wide_ep_plan("deepseek-v3", "h200-sxm", eps=[8, 32, 144], batch=128, link_gb_per_s=40)',
       args=_ARGS)
def wide_ep_plan(model: Model, gpu: Gpu, eps: list[int], batch: int = 128, link_gb_per_s: float | None = None,
                 hot_factor: float = 1.0, hot_copies: int = 1) -> str:
    """Worked example: a DeepSeek-class MoE over several EP sizes, `batch` tokens per GPU per step.

    Per EP size: copies per GPU `(E + R) / EP`, with `R` the fewest redundant copies that divide evenly;
    token-expert pairs per copy `batch × EP × k / (E + R)`; per MoE layer on the busiest GPU, expert time
    `max(copies × bytes per expert / HBM, pairs × 2 × params per expert / FP8 peak)` against dispatch
    (FP8 with a float32 scale per 128 channels) plus combine (BF16), `batch × k × hidden × bytes` each, over
    NVLink up to one 8-GPU node and over `link_gb_per_s` beyond; per step, × MoE layers, serial and with
    two overlapped micro-batches. `hot_factor` / `hot_copies`: one expert at that multiple of its fair share,
    spread over that many copies.
    """
    m, g = model, gpu
    if not eps:
        raise MacroInputError("eps must list at least one EP size")
    pts = [ep_point(m, g, ep, batch, None, link_gb_per_s, hot_factor, hot_copies) for ep in eps]
    mo, b = m.moe, F.param_breakdown(m)
    fp8 = inputs.fmt("fp8")
    per_expert = F.weight_bytes_breakdown(m, fp8).routed_experts / (mo.num_experts * b.moe_layers)
    layers = b.moe_layers
    ex = Example(f"{m.name} over wide expert parallelism on {g.name}, {_i(batch)} tokens per GPU per step")
    ex.formula("copies per GPU = (experts + redundant) / EP; pairs per copy = batch × EP × top-k / (experts + "
               "redundant)")
    ex.formula("MoE layer = max(expert reads, expert FLOPs) + dispatch + combine (serial); "
               "max(expert time, dispatch + combine) with two overlapped micro-batches")
    ex.input("routed experts / top-k / hidden / MoE layers",
             f"{mo.num_experts} / {mo.experts_per_token} / {_i(m.hidden_size)} / {layers}", _mlink(m))
    ex.input("bytes per routed expert (FP8)", U.fmt_bytes(per_expert), _mlink(m))
    ex.input("HBM bandwidth / FP8 dense peak / NVLink per direction",
             f"{U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)} / {U.fmt_flops(inputs.peak_flops(g, fp8)[0])} / "
             f"{U.fmt_bandwidth(g.interconnect_bytes_per_s_per_direction)}", _glink(g))
    ex.input("all-to-all bandwidth across nodes", f"{_n(link_gb_per_s)} GB/s" if link_gb_per_s else "not used",
             "given")
    ex.input("dispatch / combine element", f"FP8 + a 4-byte scale per {SCALE_GROUP} channels / BF16",
             "DeepEP v1 and DeepSeek's serving")
    disp = WE.ep_dispatch_bytes(batch, mo.experts_per_token, m.hidden_size, 1, SCALE_GROUP)
    comb = WE.ep_dispatch_bytes(batch, mo.experts_per_token, m.hidden_size, 2)
    ex.step(f"dispatch per GPU per layer: {_i(batch)} × {mo.experts_per_token} × ({_i(m.hidden_size)} + "
            f"{_i(m.hidden_size // SCALE_GROUP)} × 4) bytes = {U.fmt_bytes(disp)}; combine {U.fmt_bytes(comb)}")
    if hot_factor > 1:
        ex.input("hot expert: load over fair share / copies", f"{_n(hot_factor)} / {hot_copies}", GIVEN)
    rows = ["| EP | Redundant | Copies per GPU | Expert weights per GPU | Pairs per copy | Expert time | "
            "Dispatch + combine | Link | Step, serial | Step, overlapped |",
            "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | ---: | ---: |"]
    for p in pts:
        L = p.layer
        rows.append(f"| {p.ep} | {p.redundant} | {p.layout.slots_per_gpu} | "
                    f"{U.fmt_gb(p.layout.slots_per_gpu * per_expert * layers)} | {_n(p.layout.tokens_per_slot)} | "
                    f"{U.fmt_seconds(L.expert_s)} | {U.fmt_seconds(L.comm_s)} | {p.link} | "
                    f"{U.fmt_seconds(L.serial_s * layers)} | {U.fmt_seconds(L.overlapped_s * layers)} |")
    ex.table("\n".join(rows))
    last = pts[-1]
    ex.result(f"at EP {last.ep} each GPU holds {last.layout.slots_per_gpu} expert copies per layer and each copy "
              f"sees {_n(last.layout.tokens_per_slot)} tokens per step; the MoE layers take "
              f"{U.fmt_seconds(last.layer.serial_s * layers)} per step serial, "
              f"{U.fmt_seconds(last.layer.overlapped_s * layers)} with overlap")
    ex.note("Times per MoE layer on the busiest GPU (imbalance "
            f"{_n(pts[-1].layout.imbalance)}), summed over the MoE layers; attention, the shared expert and the "
            "dense layers are left out, so the overlap column is a lower bound. Expert reads and FLOPs at "
            "peak; the all-to-all at the given bandwidth with no per-call latency.")
    return ex.render()


@macro("block", example='eplb_balance(loads=[90, 132, 40, 61, 104, 165, 39, 4, 73, 56, 183, 86], gpus=4, '
       'copies=16)', args={**_ARGS, "gpus": COUNT})
def eplb_balance(loads: list[float], gpus: int, copies: int) -> str:
    """Worked example: busiest GPU over the mean before and after EPLB's replication of hot experts.

    Without redundancy each expert is one copy; with `copies` copies, each extra copy goes to the expert with
    the highest load per copy; then copies are packed heaviest-first onto the least-loaded GPU with room, the
    same number on every GPU. Imbalance = max / mean GPU load.
    """
    base = WE.eplb_pack(loads, [1] * len(loads), gpus)
    counts = WE.eplb_replicate(loads, copies)
    packed = WE.eplb_pack(loads, counts, gpus)
    hot = [i for i, c in enumerate(counts) if c > 1]
    ex = Example(f"EPLB on {len(loads)} experts and {gpus} GPUs, {copies} copies")
    ex.formula("extra copy → expert with the highest load per copy; copies packed heaviest first onto the "
               "least-loaded GPU with room; imbalance = max / mean GPU load")
    ex.input("expert loads (tokens per window)", ", ".join(_n(x) for x in loads), GIVEN)
    ex.input("GPUs / copies", f"{gpus} / {copies}", GIVEN)
    ex.step("experts copied: " + ", ".join(f"{i} (load {_n(loads[i])}, {counts[i]} copies)" for i in hot))
    ex.table("\n".join(["| Placement | GPU loads | Imbalance (max ÷ mean) |", "| --- | --- | ---: |",
                        f"| one copy each | {', '.join(_n(x) for x in base)} | {_n(WE.gpu_imbalance(base))} |",
                        f"| with {copies - len(loads)} redundant | {', '.join(_n(x) for x in packed)} | "
                        f"{_n(WE.gpu_imbalance(packed))} |"]))
    ex.result(f"the busiest GPU goes from {_n(WE.gpu_imbalance(base))} to {_n(WE.gpu_imbalance(packed))} "
              "times the mean load")
    ex.note("EPLB's global policy (expert groups ignored, all GPUs treated as one node); its hierarchical policy "
            "first packs expert groups onto nodes and copies experts within each node, which can copy different ones.")
    return ex.render()


# ---------------------------------------------------------------- the figure: a layer's parts across EP sizes

@macro("figure", example='wide_ep_svg("deepseek-v3", "h200-sxm", eps=[8, 16, 32, 64, 144, 256], batch=128, '
       'link_gb_per_s=40)', args=_ARGS)
def wide_ep_svg(model: Model, gpu: Gpu, eps: list[int], batch: int = 128, link_gb_per_s: float | None = None) -> str:
    """Figure: one MoE layer's expert time and dispatch + combine time against EP size (log x), from `ep_point`.

    The same sizing as `wide_ep_plan`, balanced routing; points carry the EP size in `data-x` and microseconds
    in `data-y`.
    """
    if len(eps) < 2 or list(eps) != sorted(set(eps)):
        raise MacroInputError("eps must list at least two distinct EP sizes in ascending order")
    pts = [ep_point(model, gpu, ep, batch, None, link_gb_per_s) for ep in eps]
    title = f"One MoE layer of {model.name}: expert time and all-to-all time against EP size"
    desc = (f"{_i(batch)} tokens per GPU on {gpu.name}, NVLink up to {GPUS_PER_NODE} GPUs, "
            + (f"{_n(link_gb_per_s)} GB/s across nodes" if link_gb_per_s else "") + ": "
            + "; ".join(f"EP {p.ep}: experts {p.layer.expert_s * 1e6:,.0f} µs, dispatch and combine "
                        f"{p.layer.comm_s * 1e6:,.0f} µs" for p in pts)
            + ". Expert time falls as each GPU holds fewer experts; the all-to-all jumps when it leaves NVLink.")
    return line_chart(f"fig-wide-ep-{anchor_id('model', model.key)}", title, desc,
                      f"{title}: the same sizing as the worked example. Generated from the catalog.", list(eps),
                      [Series("expert time", [p.layer.expert_s * 1e6 for p in pts], DASHED),
                       Series("dispatch + combine", [p.layer.comm_s * 1e6 for p in pts], ACCENT)],
                      "EP size (GPUs, log scale)", "microseconds per MoE layer", log2_x=True)
