"""Drill types on a deployment, answered by the calculator's sheet (:func:`sitebuild.calcsheet.evaluate`):
the most sequences and the longest context that fit, and the memory each GPU needs."""

from __future__ import annotations

import math

from macros import formulas as F
from macros import units as U
from macros.formulas import traps as T
from macros.render.blocks import _bits, _frac, _gib, _i

from ..calcsheet import evaluate
from ..calculator import DEFAULTS
from .core import (ATTEMPTS, CONTEXTS, SHEET_FORMATS, SHEET_KV, TOL, TP_CHOICES, Ctx, Draft, Rng, _num,
                   _within)


# ---- deployments: the calculator's sheet ------------------------------------------------------------

def _sheet(m, g, f, kv, n, context, conc, mfu=None):
    """The calculator's sheet (:func:`sitebuild.calcsheet.evaluate`) at the calculator's defaults."""
    return evaluate(m, g, f, kv, None, n, context, conc, DEFAULTS["gpu_util"],
                    DEFAULTS["mfu"] if mfu is None else mfu)


def _smallest_tp(m, g, f, kv, context, conc, ok, mfu=None):
    """The smallest TP degree of :data:`TP_CHOICES` the model allows for which ``ok(n, sheet)`` holds."""
    valid = F.valid_tp_degrees(m, DEFAULTS["max_tp"])
    for n in TP_CHOICES:
        if n in valid:
            s = _sheet(m, g, f, kv, n, context, conc, mfu)
            if ok(n, s):
                return n, s
    return None




def _allowances() -> float:
    return DEFAULTS["activation_bytes"] + DEFAULTS["reserve_bytes"]


def _budget(memory: float, weights_per_gpu: float, util: float, allowances: bool = True) -> float:
    d = DEFAULTS
    if allowances:
        return F.kv_budget_bytes(memory, weights_per_gpu, util, d["activation_bytes"], d["reserve_bytes"])
    return F.kv_budget_bytes(memory, weights_per_gpu, util, 0, 0)


def _napkin_budget(s, n) -> float:
    """The KV budget per GPU with the weights split evenly (the replicated tensors left out)."""
    return s["usable_per_gpu"] - s["weights_total"] / n - _allowances()


def _deploy_values(v: dict, m, g, f, kv, n, s) -> None:
    v.update(model=m.name, gpu=g.name, fmt=f.name, fkey=f.key, kvname=kv.name, kvkey=kv.key, n=_i(n),
             mem=_num(g.engine_memory_bytes / U.GiB), mem_gb=U.fmt_gb(g.engine_memory_bytes),
             weights=U.fmt_gb(s["weights_total"]),
             util=_bits(DEFAULTS["gpu_util"]), act=_bits(DEFAULTS["activation_bytes"] / U.GiB),
             res=_bits(DEFAULTS["reserve_bytes"] / U.GiB), frac=_frac(s["kv_fraction"]),
             usable=_gib(s["usable_per_gpu"]), wpg=_gib(s["weights_per_gpu"]), wtot=_gib(s["weights_total"]),
             budget=_gib(s["kv_budget"]), budget_b=_i(s["kv_budget"]))
    if s["replicated_extra"]:
        v["extra"] = U.fmt_bytes(s["replicated_extra"])
    if m.mla is not None:
        v["mla"] = ""
    else:
        v["kvh"] = _i(m.num_key_value_heads)


_DEPLOY_PROMPT = [
    "{model} in {fmt}, {weights} of weights in total, runs on {n} × {gpu} with tensor parallelism {n}; "
    "CUDA reports {mem} GiB on each GPU.",
    "The engine may use {util} of each GPU's memory, and {act} GiB of activations and {res} GiB of runtime "
    "reserve per GPU come off that share.",
]
_KV_SPLIT = ["?kvh:The model has {kvh} KV heads.",
             "?mla:The model caches an MLA latent per token."]
_DEPLOY_INPUTS = [
    ["GPU memory (CUDA total)", "{mem_gb}", "gpu"],
    ["weights (all GPUs)", "{weights}", "model"],
    ["TP degree (= GPUs)", "{n}", "given"],
    ["`--gpu-memory-utilization`", "{util}", "assumption (the calculator's default)"],
    ["activations / runtime reserve per GPU", "{act} GiB / {res} GiB", "assumption (the calculator's default)"],
]
_BUDGET_STEPS = [
    "usable: {mem} GiB × {util} = {usable}",
    "?extra:weights per GPU: {wtot} / {n} + {extra} of replicated tensors = {wpg}",
    "!extra:weights per GPU: {wtot} / {n} = {wpg}",
    "KV budget: {usable} − {wpg} − {act} GiB − {res} GiB = {budget}",
]
_SPLIT_NOTES = ["?kvh:Under tensor parallelism each GPU caches its share of the KV heads (one whole head when TP "
                "exceeds the KV heads).",
                "?mla:An MLA latent is not split by tensor parallelism: every GPU keeps it whole."]


def _draw_deployment(rng: Rng, ctx: Ctx, contexts, conc_choices, ok, *, formats=SHEET_FORMATS, gpu_ok=None,
                     mfus=None):
    """Model, format, GPU, KV dtype, context, concurrency (and MFU), then the smallest TP degree for which
    ``ok(n, sheet, draw)`` holds; redrawn until one does."""
    for _ in range(ATTEMPTS):
        m = rng.pick(ctx.sheet_models)
        f = ctx.fmt(rng.pick(formats))
        g = rng.pick([x for x in ctx.gpus if gpu_ok(x, f)] if gpu_ok else ctx.gpus)
        kv = ctx.fmt(rng.pick(SHEET_KV))
        context = rng.pick([c for c in contexts if c <= m.max_position_embeddings])
        conc = rng.pick(conc_choices)
        mfu = rng.pick(mfus) if mfus else None
        draw = {"m": m, "f": f, "g": g, "kv": kv, "ctx": context, "conc": conc, "mfu": mfu}
        found = _smallest_tp(m, g, f, kv, context, conc, lambda n, s: ok(n, s, draw), mfu)
        if found:
            draw["n"], draw["s"] = found
            return draw
    raise RuntimeError("sitebuild/drills/deploy.py: no deployment drawn after many attempts")


def _seqs_napkin(n, s) -> float:
    return _napkin_budget(s, n) / (s["kv_per_sequence"] * s["kv_fraction"])


def make_max_sequences(rng: Rng, ctx: Ctx) -> Draft:
    tol = TOL

    def ok(n, s, draw):
        return s["fits"] and s["max_sequences"] >= 1 and _within(_seqs_napkin(n, s), s["max_sequences"], tol / 2)

    d = _draw_deployment(rng, ctx, CONTEXTS, (1,), ok)
    m, g, f, kv, n, s = d["m"], d["g"], d["f"], d["kv"], d["n"], d["s"]
    v: dict = {}
    _deploy_values(v, m, g, f, kv, n, s)
    per_seq = s["kv_per_sequence_gpu"]
    per_seq_whole = per_seq / s["kv_fraction"]
    v.update(ctx=_i(d["ctx"]), kvseq=U.fmt_bytes(s["kv_per_sequence"]), kvseq_gpu=_i(per_seq),
             answer=_i(s["max_sequences"]), blocks=_i(s["blocks_per_sequence"]))
    mem, wpg, util = g.engine_memory_bytes, s["weights_per_gpu"], DEFAULTS["gpu_util"]
    seqs = F.max_concurrent_sequences
    traps = {"util_forgotten": seqs(_budget(mem, wpg, 1.0), per_seq),
             "ledger_forgotten": seqs(_budget(mem, wpg, util, allowances=False), per_seq),
             "gib_as_gb": seqs(_budget(T.gib_read_as_gb(mem), wpg, util), per_seq)}
    if s["kv_fraction"] < 1:
        traps["kv_share_forgotten"] = seqs(s["kv_budget"], per_seq_whole)
    if n > 1:
        traps["tp_share_forgotten"] = seqs(_budget(mem, s["weights_total"], util), per_seq_whole)
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, s["max_sequences"], traps,
                 napkin=_seqs_napkin(n, s))


MAX_SEQUENCES = {
    "title": "concurrent sequences of {model} in {fmt} on {n} × {gpu}",
    "prompt": _DEPLOY_PROMPT + ["Each sequence of {ctx} tokens holds {kvseq} of KV cache for the whole model, "
                                "in {kvname}."] + _KV_SPLIT,
    "ask": ["How many sequences of {ctx} tokens fit in the KV cache at once?"],
    "formulas": ["KV budget per GPU = memory × gpu_util − weights per GPU − activations − runtime reserve",
                 "max sequences = floor(KV budget / KV bytes per sequence per GPU)"],
    "inputs": _DEPLOY_INPUTS + [["KV per sequence (whole model)", "{kvseq}", "model"],
                                ["?kvh:`num_key_value_heads`", "{kvh}", "model"],
                                ["context per sequence", "{ctx} tokens", "given"]],
    "steps": _BUDGET_STEPS + [
        "KV per sequence per GPU: share {frac} held by one GPU, in {blocks} blocks of 16 tokens = {kvseq_gpu} bytes",
        "max sequences: floor({budget_b} / {kvseq_gpu}) = {answer}"],
    "results": ["{answer} concurrent sequences of {ctx} tokens"],
    "notes": _SPLIT_NOTES + ["The allowances are illustrative: vLLM measures the activation peak with a profiling "
                             "pass at start-up."],
}


def _window_parts(m, kv) -> tuple[float, float]:
    """(KV bytes per token of the layers that keep every token, fixed bytes per sequence once the
    windows are full, constant states included), whole model."""
    full, sliding, linear = F.kv_layer_counts(m)
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    fixed = 0.0
    if sliding:
        fixed += per_layer * sliding * m.sliding_window.size
    if linear:
        fixed += m.linear_attention.state_bytes_per_layer * linear
    return per_layer * full, fixed


def _context_napkin(budget: float, fixed: float, per_tok: float, frac: float) -> int:
    """The longest context by napkin, ``floor((budget - fixed x frac) / (per_tok x frac))``, at least 0;
    the mistakes are this figure with one input wrong."""
    return max(0, math.floor((budget - fixed * frac) / (per_tok * frac)))


def make_max_context(rng: Rng, ctx: Ctx) -> Draft:
    tol = TOL

    def ok(n, s, draw):
        if not s["fits"] or s["max_context_limit"] != "memory" or s["max_context"] < 1024:
            return False
        per_tok, fixed = _window_parts(draw["m"], draw["kv"])
        napkin = _context_napkin(_napkin_budget(s, n), fixed, per_tok, s["kv_fraction"])
        return _within(napkin, s["max_context"], tol / 2)

    d = _draw_deployment(rng, ctx, (1,), (1,), ok)
    m, g, f, kv, n, s = d["m"], d["g"], d["f"], d["kv"], d["n"], d["s"]
    v: dict = {}
    _deploy_values(v, m, g, f, kv, n, s)
    per_tok, fixed = _window_parts(m, kv)
    full, sliding, linear = F.kv_layer_counts(m)
    frac = s["kv_fraction"]
    v.update(per_tok=U.fmt_bytes(per_tok), per_tok_gpu=_i(per_tok * frac), answer=_i(s["max_context"]),
             maxpos=_i(m.max_position_embeddings))
    if fixed:
        v.update(windowed="", fixed=U.fmt_bytes(fixed), fixed_gpu=_i(fixed * frac))
    mem, wpg, util, budget = g.engine_memory_bytes, s["weights_per_gpu"], DEFAULTS["gpu_util"], s["kv_budget"]
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    traps = {"util_forgotten": _context_napkin(_budget(mem, wpg, 1.0), fixed, per_tok, frac),
             "ledger_forgotten": _context_napkin(_budget(mem, wpg, util, allowances=False), fixed, per_tok, frac),
             "gib_as_gb": _context_napkin(_budget(T.gib_read_as_gb(mem), wpg, util), fixed, per_tok, frac)}
    if frac < 1:
        traps["kv_share_forgotten"] = _context_napkin(budget, fixed, per_tok, 1.0)
    if sliding:
        traps["window_ignored"] = _context_napkin(budget, 0.0, per_layer * (full + sliding), frac)
    if linear:
        traps["linear_as_attention"] = _context_napkin(budget, 0.0, per_layer * (full + linear), frac)
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, s["max_context"], traps,
                 question=121 if fixed else 102,
                 napkin=_context_napkin(_napkin_budget(s, n), fixed, per_tok, frac))


MAX_CONTEXT = {
    "title": "longest context of {model} in {fmt} on {n} × {gpu}",
    "prompt": _DEPLOY_PROMPT + [
        "!windowed:Each token of context adds {per_tok} of KV cache for the whole model, in {kvname}.",
        "?windowed:Each token of context adds {per_tok} of KV cache on the layers that keep every token, for "
        "the whole model in {kvname}; the window-capped layers and constant states hold a further {fixed} "
        "per sequence once the context is past the window."] + _KV_SPLIT,
    "ask": ["What is the longest context a single sequence can reach?"],
    "formulas": ["KV budget per GPU = memory × gpu_util − weights per GPU − activations − runtime reserve",
                 "!windowed:longest context ≈ KV budget / KV bytes per token per GPU (whole blocks of 16 tokens)",
                 "?windowed:longest context ≈ (KV budget − fixed bytes per GPU) / KV bytes per token per GPU"],
    "inputs": _DEPLOY_INPUTS + [["KV per token (layers that keep every token)", "{per_tok}", "model"],
                                ["?windowed:fixed KV per sequence (windows, states)", "{fixed}", "model"],
                                ["?kvh:`num_key_value_heads`", "{kvh}", "model"]],
    "steps": _BUDGET_STEPS + [
        "KV per token per GPU: share {frac} held by one GPU = {per_tok_gpu} bytes",
        "?windowed:fixed part per GPU: {fixed_gpu} bytes",
        "longest context that fits in whole blocks: {answer} tokens (the model allows {maxpos})"],
    "results": ["{answer} tokens"],
    "notes": _SPLIT_NOTES + ["The cache is paged in blocks of 16 tokens, so the exact figure is a whole number of "
                             "blocks."],
}



def make_fit(rng: Rng, ctx: Ctx) -> Draft:
    tol = TOL
    for _ in range(ATTEMPTS):
        m = rng.pick(ctx.sheet_models)
        f = ctx.fmt(rng.pick(SHEET_FORMATS))
        g = rng.pick(ctx.gpus)
        kv = ctx.fmt(rng.pick(SHEET_KV))
        context = rng.pick([c for c in CONTEXTS if c <= m.max_position_embeddings])
        conc = rng.pick((1, 8, 16, 32, 64, 128, 256))
        n = rng.pick([t for t in TP_CHOICES if t in F.valid_tp_degrees(m, DEFAULTS["max_tp"])])
        s = _sheet(m, g, f, kv, n, context, conc)
        need = s["weights_per_gpu"] + s["kv_load_gpu"] + _allowances()
        napkin = s["weights_total"] / n + conc * s["kv_per_sequence"] * s["kv_fraction"] + _allowances()
        if need <= 2.5 * s["usable_per_gpu"] and _within(napkin, need, tol / 2):
            break
    else:
        raise RuntimeError("sitebuild/drills/deploy.py: fit: no deployment drawn")
    v: dict = {}
    _deploy_values(v, m, g, f, kv, n, s)
    v.update(ctx=_i(context), conc=_i(conc), kvseq=U.fmt_bytes(s["kv_per_sequence"]),
             load=_gib(s["kv_load_gpu"]), need=_gib(need), result=U.fmt_gb(need))
    v["fits" if s["headroom"] >= 0 else "short"] = U.fmt_gb(abs(s["headroom"]))
    per_seq_whole = s["kv_per_sequence_gpu"] / s["kv_fraction"]
    traps = {"ledger_forgotten": s["weights_per_gpu"] + s["kv_load_gpu"],
             "gb_as_gib": T.gb_read_as_gib(need), "gib_as_gb": T.gib_read_as_gb(need)}
    if s["kv_fraction"] < 1:
        traps["kv_share_forgotten"] = s["weights_per_gpu"] + conc * per_seq_whole + _allowances()
    if n > 1:
        traps["tp_share_forgotten"] = s["weights_total"] + conc * per_seq_whole + _allowances()
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, need, traps, napkin=napkin)


FIT = {
    "title": "memory per GPU of {model} in {fmt} on {n} × {gpu}, {conc} × {ctx} tokens",
    "prompt": _DEPLOY_PROMPT + ["It serves {conc} concurrent sequences of {ctx} tokens; each holds {kvseq} of KV "
                                "cache for the whole model, in {kvname}."] + _KV_SPLIT,
    "ask": ["How much memory does each GPU need for its weights, its KV cache and the allowances?"],
    "formulas": ["need per GPU = weights / TP (+ replicated tensors) + sequences × KV per sequence per GPU "
                 "+ activations + runtime reserve",
                 "fits when need ≤ memory × gpu_util"],
    "inputs": _DEPLOY_INPUTS + [["KV per sequence (whole model)", "{kvseq}", "model"],
                                ["?kvh:`num_key_value_heads`", "{kvh}", "model"],
                                ["concurrent sequences × context", "{conc} × {ctx} tokens", "given"]],
    "steps": ["?extra:weights per GPU: {wtot} / {n} + {extra} of replicated tensors = {wpg}",
              "!extra:weights per GPU: {wtot} / {n} = {wpg}",
              "KV per GPU: {conc} sequences × share {frac} of each, paged in blocks of 16 tokens = {load}",
              "need: {wpg} + {load} + {act} GiB + {res} GiB = {need}",
              "usable: {mem} GiB × {util} = {usable}"],
    "results": ["{result} per GPU", "?fits:fits, with {fits} per GPU to spare",
                "?short:does not fit: short by {short} per GPU"],
    "notes": _SPLIT_NOTES,
}
