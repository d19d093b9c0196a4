"""KV tiers below GPU memory (Part C, Q139): reload against recompute per tier, capacity in tokens and
retention, the break-even hit rate, and the figure of reload over recompute against prefix length
(formulas: :mod:`macros.formulas.kvtier`)."""

from __future__ import annotations

from dataclasses import dataclass

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from ..formulas import kvtier as K
from . import inputs
from .blocks import GIVEN, Example, _esc, _flink, _glink, _i, _k, _mlink, _n, anchor_id
from .linechart import ACCENT, DASHED, DOTTED, Series, line_chart
from .registry import ARGS, Arg, macro

_NUMS = Arg(lambda name, vs: [inputs.number(name, v, positive=False) for v in vs], "list of numbers", ">= 0")
_ARGS = {"tier_names": Arg(lambda name, vs: [str(v) for v in vs], "tier names", "list of strings"),
         "tier_gb_per_s": _NUMS, "tier_capacity_gb": _NUMS, "tier_latency_ms": _NUMS,
         "miss_ms": Arg(lambda name, v: inputs.number(name, v, positive=False), "a number", ">= 0"),
         "new_tokens_per_s": Arg(inputs.number, "a number", "> 0"),
         "lengths": Arg(lambda name, vs: [inputs.tokens(name, v) for v in vs], "prefix lengths", "tokens"),
         "tokens": ARGS["tokens"]}


@dataclass(frozen=True)
class Tier:
    name: str
    bytes_per_s: float
    capacity_bytes: float
    latency_s: float


def _tiers(names: list[str], gbs: list[float], caps: list[float], lats: list[float]) -> list[Tier]:
    if not names or not len(names) == len(gbs) == len(caps) == len(lats):
        raise MacroInputError(f"tier_names, tier_gb_per_s, tier_capacity_gb and tier_latency_ms must have the same, "
                              f"non-zero length; got {len(names)}, {len(gbs)}, {len(caps)}, {len(lats)}")
    if any(b <= 0 for b in gbs):
        raise MacroInputError(f"tier_gb_per_s must all be above 0, got {gbs}")
    return [Tier(n, b * 1e9, c * 1e9, la / 1e3) for n, b, c, la in zip(names, gbs, caps, lats, strict=True)]


def recompute_s(m: Model, g: Gpu, f: Format, n: int, tokens: int, mfu: float) -> float:
    """Prefill time of a ``tokens`` prefix on ``n`` GPUs at ``mfu`` (matmuls and causal attention)."""
    inputs.check_tp(m, n)
    peak, _ = inputs.peak_flops(g, f)
    return F.prefill_time(F.prefill_matmul_flops(m, tokens, 0) + F.prefill_attention_flops(m, tokens),
                          peak * n, mfu)


@macro("block", example='kv_tier_plan("llama-3.1-70b", "h100-sxm", tokens="32K", fmt="fp8", kv_dtype="fp8", n_gpus=4, '
       'tier_names=["CPU memory", "local NVMe", "remote pool"], tier_gb_per_s=[100, 20, 50], '
       'tier_capacity_gb=[1000, 15000, 50000], tier_latency_ms=[0.1, 1, 2], miss_ms=1, new_tokens_per_s=100000)',
       args=_ARGS)
def kv_tier_plan(model: Model, gpu: Gpu, tokens: int, tier_names: list[str], tier_gb_per_s: list[float],
                 tier_capacity_gb: list[float], tier_latency_ms: list[float], fmt: Format = "bf16",
                 kv_dtype: Format = "bf16", n_gpus: int = 1, mfu: float = 0.5, miss_ms: float = 0.0,
                 new_tokens_per_s: float | None = None) -> str:
    """Worked example: reload a cached prefix from each tier, or recompute it; capacity, retention, break-even.

    Recompute = prefill of a `tokens` prefix on `n_gpus` × `gpu` at `mfu`; reload = latency + prefix KV bytes
    / tier bandwidth (aggregate to the instance); capacity in tokens = tier bytes / KV bytes per token;
    retention = capacity / `new_tokens_per_s` (LRU); break-even hit rate = miss / (recompute − reload + miss)
    with `miss_ms` the cost a miss adds (lookup, unhidden store).
    """
    m, g, f, kv, n = model, gpu, fmt, kv_dtype, n_gpus
    tiers = _tiers(tier_names, tier_gb_per_s, tier_capacity_gb, tier_latency_ms)
    bpt = F.kv_bytes_per_token(m, kv)
    rec = recompute_s(m, g, f, n, tokens, mfu)
    miss = miss_ms / 1e3
    ex = Example(f"reload or recompute a {_i(tokens)}-token prefix of {m.name} on {n} × {g.name}")
    ex.formula("recompute = prefill FLOPs of the prefix / (GPUs × peak × MFU); reload = latency + tokens × KV "
               "bytes per token / tier bandwidth")
    ex.formula("break-even hit rate = miss cost / (recompute − reload + miss cost); retention = tier tokens / new "
               "tokens per second")
    ex.input("KV bytes per token", U.fmt_bytes(bpt), f"{_mlink(m)}, {_flink(kv)}")
    ex.input("peak per GPU / GPUs / MFU", f"{inputs.fmt_peak(f, inputs.peak_flops(g, f)[0])} / {n} / {_n(mfu)}",
             f"{_glink(g)}; MFU: assumption")
    ex.input("tiers: bandwidth to the instance, capacity, latency",
             "; ".join(f"{_esc(t.name, cell=True)}: {U.fmt_bandwidth(t.bytes_per_s)}, {U.fmt_gb(t.capacity_bytes)}, "
                       f"{U.fmt_seconds(t.latency_s)}" for t in tiers), "assumption: measure yours")
    ex.input("miss cost / new KV tokens per second", f"{U.fmt_seconds(miss)} / "
             + (_n(new_tokens_per_s) if new_tokens_per_s else "not given"), GIVEN)
    ex.step(f"prefix KV: {_i(tokens)} × {U.fmt_bytes(bpt)} = {U.fmt_bytes(tokens * bpt)}; recompute "
            f"{U.fmt_seconds(rec)}")
    rows = ["| Tier | Capacity (tokens) | Retention | Reload | Recompute | Reload ÷ recompute | Break-even hit rate |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for t in tiers:
        cap = K.tier_tokens(t.capacity_bytes, bpt)
        rel = K.reload_time(tokens, bpt, t.bytes_per_s, t.latency_s)
        be = K.break_even_hit_rate(rec, rel, miss)
        ret = U.fmt_seconds(K.retention_s(cap, new_tokens_per_s)) if new_tokens_per_s else "—"
        rows.append(f"| {_esc(t.name, cell=True)} | {_i(cap)} | {ret} | {U.fmt_seconds(rel)} | {U.fmt_seconds(rec)} "
                    f"| {_n(rel / rec)} | {'never' if be == float('inf') else U.fmt_pct(be)} |")
    ex.table("\n".join(rows))
    best = min(tiers, key=lambda t: K.reload_time(tokens, bpt, t.bytes_per_s, t.latency_s))
    fastest = K.reload_time(tokens, bpt, best.bytes_per_s, best.latency_s)
    ex.result(f"fastest reload: {_esc(best.name)}, {U.fmt_seconds(fastest)} against {U.fmt_seconds(rec)} of prefill")
    ex.note("Reload at the given end-to-end bandwidth, not overlapped with compute (layer-by-layer loading hides "
            "part of it); recompute at the assumed MFU with causal attention. Retention assumes LRU and a steady "
            "stream of new KV.")
    return ex.render()


@macro("figure", example='kv_tier_svg("llama-3.1-8b", "h100-sxm", lengths=["1K", "4K", "16K", "64K"], '
       'tier_names=["CPU memory", "local NVMe"], tier_gb_per_s=[50, 10], tier_capacity_gb=[500, 8000], '
       'tier_latency_ms=[0.1, 1])', args=_ARGS)
def kv_tier_svg(model: Model, gpu: Gpu, lengths: list[int], tier_names: list[str], tier_gb_per_s: list[float],
                tier_capacity_gb: list[float], tier_latency_ms: list[float], fmt: Format = "bf16",
                kv_dtype: Format = "bf16", n_gpus: int = 1, mfu: float = 0.5) -> str:
    """Figure: reload time over recompute time against prefix length (log x), one line per tier, from the
    same formulas as `kv_tier_plan`; below the dashed line at 1 reloading wins. Points carry `data-x`
    (tokens) and `data-y` (the ratio)."""
    if len(lengths) < 2 or list(lengths) != sorted(set(lengths)):
        raise MacroInputError("lengths must list at least two distinct prefix lengths in ascending order")
    tiers = _tiers(tier_names, tier_gb_per_s, tier_capacity_gb, tier_latency_ms)
    bpt = F.kv_bytes_per_token(model, kv_dtype)
    rec = [recompute_s(model, gpu, fmt, n_gpus, L, mfu) for L in lengths]
    looks = [ACCENT, DASHED, DOTTED]
    series = [Series(t.name, [K.reload_time(L, bpt, t.bytes_per_s, t.latency_s) / r for L, r in zip(lengths, rec,
                                                                                                 strict=True)],
                     looks[i % 3]) for i, t in enumerate(tiers)]
    title = f"Reload over recompute for {model.name} prefixes on {n_gpus} × {gpu.name}"
    desc = ("; ".join(f"{s.name}: " + ", ".join(f"{_k(L)} tokens {y:.2f}" for L, y in zip(lengths, s.ys, strict=True))
                      for s in series)
            + ". Below 1, reloading the cached KV is faster than computing it again.")
    return line_chart(f"fig-kv-tier-{anchor_id('model', model.key)}", title, desc,
                      f"{title}: the same formulas as the worked example. Generated from the catalog.", list(lengths),
                      series, "prefix length in tokens (log scale)", "reload time ÷ recompute time", log2_x=True,
                      hline=1, hline_label="break-even")
