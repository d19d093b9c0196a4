"""Drill types on a model alone: weight footprint, KV bytes per token and per batch (GQA, MLA,
sliding-window and hybrid models), valid tensor-parallel degrees, effective bits of block formats."""

from __future__ import annotations

from macros import formulas as F
from macros import units as U
from macros.formulas import traps as T
from macros.render.blocks import _bits, _i
from macros.render.memory import kv_sequence_expr

from ..calculator import DEFAULTS
from .core import (ATTEMPTS, CONTEXTS, EXPERT_FORMATS, Ctx, Draft, Rng, _draw_kv_model, _kv_layer_traps,
                   _kv_per_layer_expr, _kv_values)


# --------------------------------------------------------------------------------------------------
# drill types
# --------------------------------------------------------------------------------------------------

def make_weights(rng: Rng, ctx: Ctx) -> Draft:
    m = rng.pick(ctx.models)
    f = rng.pick(ctx.formats)
    fe = None
    if m.moe is not None and rng.random() < 0.5:
        fe = ctx.fmt(rng.pick([k for k in EXPERT_FORMATS if k != f.key]))
    b = F.param_breakdown(m)
    wb = F.weight_bytes_breakdown(m, f, fe, breakdown=b)
    emb_bits = F.embedding_format_bits(f)
    rest = b.total - b.embeddings - b.routed_experts
    v = {"model": m.name, "fmt": f.name, "fkey": f.key, "params": _i(b.total), "bits": _bits(f.bits_per_weight),
         "result": U.fmt_gb(wb.total), "total_b": _i(wb.total)}
    refs = {"model": m.key, "fmt": f.key}
    mixed = fe is not None or emb_bits != f.bits_per_weight
    if mixed:
        v.update(mixed="", emb=_i(b.embeddings), rest=_i(rest), embbits=_bits(emb_bits),
                 emb_b=_i(wb.embeddings), rest_b=_i(wb.rest))
    else:
        v["plain"] = ""
    if emb_bits != f.bits_per_weight:
        v["embrule"] = ""
    if not b.lm_head:
        v["tied"] = ""
    if fe is not None:
        refs["efmt"] = fe.key
        v.update(experts=_i(b.routed_experts), fename=fe.name, fekey=fe.key, febits=_bits(fe.bits_per_weight),
                 exp_b=_i(wb.routed_experts))
    traps = {"bits_as_bytes": T.weight_bytes_bits_as_bytes(m, f, fe),
             "gb_as_gib": T.gb_read_as_gib(wb.total), "gib_as_gb": T.gib_read_as_gb(wb.total)}
    if emb_bits != f.bits_per_weight:
        traps["embeddings_quantized"] = T.weight_bytes_embeddings_quantized(m, f, fe)
    if f.group_size or (fe is not None and fe.group_size):
        traps["scale_forgotten"] = T.weight_bytes_scale_forgotten(m, f, fe)
    if m.moe is not None:
        traps["active_for_total"] = T.weight_bytes_active_for_total(m, f, fe)
    return Draft(refs, v, wb.total, traps)


WEIGHTS = {
    "title": "weights of {model} in {fmt}",
    "prompt": ["{model} has {params} parameters, counted from its config.",
               "?experts:{experts} of them are in the routed experts.",
               "?embrule:!tied:{emb} of them are in the embedding and the lm_head.",
               "?embrule:?tied:{emb} of them are in the embedding table, which the lm_head shares.",
               "The weights are stored in {fmt}, {bits} bits per weight.",
               "?embrule:The format keeps the embedding and lm_head in {embbits}-bit.",
               "?experts:The routed experts are stored in {fename} instead, {febits} bits per weight."],
    "ask": ["How much memory do the weights take?"],
    "formulas": ["?plain:weight bytes = parameters × bits_per_weight / 8",
                 "?mixed:bytes = experts × bits(experts)/8 + embeddings × bits(embeddings)/8 + rest × bits(rest)/8"],
    "inputs": [["?plain:parameters (computed from config)", "{params}", "model"],
               ["?plain:bits per weight, {fkey}", "{bits}", "fmt"],
               ["?experts:routed-expert parameters", "{experts}", "model"],
               ["?mixed:embedding + lm_head parameters", "{emb}", "model"],
               ["?mixed:other parameters", "{rest}", "model"],
               ["?experts:bits per weight, experts ({fekey})", "{febits}", "efmt"],
               ["?mixed:bits per weight, embeddings", "{embbits}", "fmt"],
               ["?mixed:bits per weight, rest ({fkey})", "{bits}", "fmt"]],
    "steps": ["?plain:{params} × {bits} / 8 = {total_b} bytes",
              "?experts:experts: {experts} × {febits} / 8 = {exp_b} bytes",
              "?mixed:embeddings: {emb} × {embbits} / 8 = {emb_b} bytes",
              "?mixed:rest: {rest} × {bits} / 8 = {rest_b} bytes",
              "?mixed:sum = {total_b} bytes"],
    "results": ["{result}"],
    "notes": ["Weights only: KV cache, activations and runtime memory come on top. Effective bits include "
              "the format's scale overhead."],
}

_KV_PROMPT = [
    "!sliding:!linear:{model} has {layers} layers.",
    "?sliding:!all_sliding:{model} has {layers} layers: {full} full-attention layers and {sliding} "
    "sliding-window layers with a window of {window} tokens.",
    "?all_sliding:{model} has {layers} layers, all with a sliding window of {window} tokens.",
    "?linear:{model} has {layers} layers: {full} full-attention layers and {linear} linear-attention layers, "
    "which keep a constant state per sequence instead of a KV cache.",
    "?gqa:!hd_derived:Its config gives num_attention_heads {heads}, num_key_value_heads {kvh}, head_dim {hd} "
    "and hidden_size {hidden}.",
    "?gqa:?hd_derived:Its config gives num_attention_heads {heads}, num_key_value_heads {kvh} and hidden_size "
    "{hidden}; head_dim is {hd} (hidden_size / num_attention_heads: the config does not state it).",
    "?mla:It uses multi-head latent attention with kv_lora_rank {rank} and qk_rope_head_dim {rope}; its "
    "config also gives num_attention_heads {heads}, num_key_value_heads {kvh} and hidden_size {hidden}, and "
    "each head's query and key are {hd} wide (qk_nope_head_dim + qk_rope_head_dim).",
    "The KV cache is stored in {kvname}, {kvbits} bits per element.",
]
_KV_INPUTS = [
    ["`num_hidden_layers`", "{layers}", "model"],
    ["?caching_note:layers with a growing KV cache (full)", "{full}", "model"],
    ["?sliding:sliding-window layers / window", "{sliding} / {window} tokens", "model"],
    ["?linear:constant-state (linear) layers / state per layer", "{linear} / {state}", "model"],
    ["?mla:`kv_lora_rank` + `qk_rope_head_dim`", "{rank} + {rope}", "model"],
    ["?gqa:`num_key_value_heads`", "{kvh}", "model"],
    ["?gqa:`head_dim`", "{hd}", "model"],
    ["bytes per element, {kvkey}", "{eb}", "kv"],
]


def make_kv_token(rng: Rng, ctx: Ctx) -> Draft:
    m, cls = _draw_kv_model(rng, ctx)
    kv = rng.pick(ctx.kv_formats)
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    answer = F.kv_bytes_per_token(m, kv)
    v: dict = {}
    _kv_values(v, m, kv)
    full, sliding, linear = F.kv_layer_counts(m)
    if sliding or linear:
        v["caching_note"] = ""
    if sliding:
        v["past_window"] = U.fmt_bytes(per_layer * full)
    if linear:
        v["states"] = U.fmt_bytes(m.linear_attention.state_bytes_per_layer * linear)
    v.update(expr=_kv_per_layer_expr(m, kv), per_layer=_i(per_layer), answer_b=_i(answer),
             result=U.fmt_bytes(answer))
    traps = {k: T.kv_per_token_with(m, x) for k, x in _kv_layer_traps(m, kv).items()}
    if linear:
        traps["linear_as_attention"] = T.kv_per_token_with(m, per_layer, linear_as_attention=True)
    return Draft({"model": m.key, "kv": kv.key}, v, answer, traps, question=121 if cls in ("sliding", "hybrid") else 75)


KV_TOKEN = {
    "title": "KV cache per token of {model} in {kvname}",
    "prompt": _KV_PROMPT,
    "ask": ["?sliding:How many bytes of KV cache does each token add across all layers, while the context is "
            "shorter than the window?",
            "!sliding:How many bytes of KV cache does each token add, across all layers?"],
    "formulas": ["?mla:KV bytes/token = layers × (kv_lora_rank + qk_rope_head_dim) × bytes",
                 "?gqa:KV bytes/token = 2 × layers × num_key_value_heads × head_dim × bytes"],
    "inputs": _KV_INPUTS,
    "steps": ["per layer: {expr} = {per_layer} bytes",
              "× {caching} layers that cache KV = {answer_b} bytes"],
    "results": ["{result} per token"],
    "notes": ["?sliding:{sliding} of these layers keep at most {window} tokens, so past the window each token "
              "adds only {past_window}.",
              "?linear:The {linear} linear-attention layers keep a constant state instead ({states} per sequence).",
              "?mla:MLA caches one compressed latent and one shared RoPE key per layer, not per-head K and V."],
}


def make_kv_batch(rng: Rng, ctx: Ctx) -> Draft:
    m, cls = _draw_kv_model(rng, ctx)
    kv = rng.pick(ctx.kv_formats)
    context = rng.pick([c for c in CONTEXTS if c <= m.max_position_embeddings])
    batch = rng.pick((1, 4, 8, 16, 32, 64, 128))
    per_layer = F.kv_bytes_per_token_per_layer(m, kv)
    per_seq = F.kv_bytes_per_sequence(m, context, kv)
    answer = F.kv_cache_bytes(m, batch, context, kv)
    v: dict = {}
    _kv_values(v, m, kv)
    full, sliding, linear = F.kv_layer_counts(m)
    v.update(batch=_i(batch), ctx=_i(context), per_layer=_i(per_layer), per_seq=_i(per_seq),
             answer_b=_i(answer), result=U.fmt_gb(answer), expr=_kv_per_layer_expr(m, kv))
    if sliding or linear:
        v["caching_note"] = ""
        v["seq_expr"] = kv_sequence_expr(m, context, per_layer)
    else:
        v["per_token"] = _i(per_layer * full)
    traps = {k: batch * T.kv_per_sequence_with(m, context, x) for k, x in _kv_layer_traps(m, kv).items()}
    if sliding and context > m.sliding_window.size:
        traps["window_ignored"] = batch * T.kv_per_sequence_with(m, context, per_layer, window=False)
    if linear:
        traps["linear_as_attention"] = batch * T.kv_per_sequence_with(m, context, per_layer,
                                                                      linear_as_attention=True)
    traps["gb_as_gib"] = T.gb_read_as_gib(answer)
    traps["gib_as_gb"] = T.gib_read_as_gb(answer)
    return Draft({"model": m.key, "kv": kv.key}, v, answer, traps,
                 question=121 if cls in ("sliding", "hybrid") else 75)


KV_BATCH = {
    "title": "KV cache of {model}, {batch} × {ctx} tokens, {kvname}",
    "prompt": _KV_PROMPT + ["?linear:Each linear-attention layer keeps {state} of state per sequence.",
                            "A batch of {batch} sequences of {ctx} tokens each is in the cache."],
    "ask": ["How much KV cache does the batch hold?"],
    "formulas": ["?caching_note:per sequence = per_layer × (full_layers × context + sliding_layers × "
                 "min(context, window)) + linear_layers × state",
                 "?mla:!caching_note:KV bytes/token = layers × (kv_lora_rank + qk_rope_head_dim) × bytes; "
                 "KV = batch × context × KV bytes/token",
                 "?gqa:!caching_note:KV bytes/token = 2 × layers × num_key_value_heads × head_dim × bytes; "
                 "KV = batch × context × KV bytes/token"],
    "inputs": _KV_INPUTS + [["batch", "{batch}", "given"], ["context", "{ctx} tokens", "given"]],
    "steps": ["per layer per token: {expr} = {per_layer} bytes",
              "?caching_note:per sequence: {seq_expr} = {per_seq} bytes",
              "!caching_note:per token: {per_layer} × {full} layers = {per_token} bytes; per sequence: × {ctx} = "
              "{per_seq} bytes",
              "× batch {batch} = {answer_b} bytes"],
    "results": ["{result}"],
    "notes": ["?sliding:The sliding-window layers stop growing at {window} tokens.",
              "?mla:MLA caches one compressed latent and one shared RoPE key per layer, not per-head K and V."],
}



def _tp_list(ts) -> str:
    return ", ".join(str(t) for t in ts)


def make_valid_tp(rng: Rng, ctx: Ctx) -> Draft:
    from macros.formulas.parallel import _model_widths

    mx = DEFAULTS["max_tp"]
    for _ in range(ATTEMPTS):  # a model on which some mistake changes the list
        m = rng.pick(ctx.models)
        answer = F.valid_tp_degrees(m, mx)
        traps = {"kv_capped_tp": T.valid_tp_kv_capped(m, mx), "heads_only_tp": T.valid_tp_heads_only(m, mx),
                 "powers_of_two": T.valid_tp_powers_of_two(mx)}
        if any(t != answer for t in traps.values()):
            break
    degrees = range(1, mx + 1)
    widths = _model_widths(m)
    heads, kvh = m.num_attention_heads, m.num_key_value_heads
    v = {"model": m.name, "heads": _i(heads), "kvh": _i(kvh), "answer": _tp_list(answer), "max": _i(mx),
         "widths": " and ".join(f"{name} {_i(w)}" for name, w in widths),
         "heads_ok": _tp_list(t for t in degrees if heads % t == 0),
         "width_ok": "; ".join(f"{name} {_i(w)} divides by TP {_tp_list(t for t in degrees if w % t == 0)}"
                               for name, w in widths)}
    if m.mla is not None:
        v["mla"] = ""
    else:
        v["kv_ok"] = _tp_list(t for t in degrees if (kvh % t == 0 if t <= kvh else t % kvh == 0))
    return Draft({"model": m.key}, v, answer, traps)


VALID_TP = {
    "title": "valid tensor-parallel degrees of {model}",
    "prompt": ["{model}: num_attention_heads {heads}, num_key_value_heads {kvh}, {widths}.",
               "?mla:It uses multi-head latent attention: every GPU keeps the whole latent cache."],
    "ask": ["Which tensor-parallel degrees from 1 to {max} split it evenly?"],
    "formulas": ["num_attention_heads % TP = 0",
                 "TP ≤ KV heads: KV heads % TP = 0; TP > KV heads: TP % KV heads = 0 (each GPU holds one replicated "
                 "KV head)",
                 "every MLP width % TP = 0"],
    "inputs": [["`num_attention_heads`", "{heads}", "model"], ["`num_key_value_heads`", "{kvh}", "model"],
               ["MLP widths", "{widths}", "model"]],
    "steps": ["num_attention_heads {heads} divides by TP {heads_ok}",
              "?kv_ok:num_key_value_heads {kvh}: TP {kv_ok} (dividing it, or a multiple of it when larger)",
              "{width_ok}",
              "all of them: TP {answer}"],
    "results": ["TP {answer}"],
    "notes": ["?mla:For MLA the latent is replicated, so only the query heads and the widths constrain TP.",
              "vLLM checks these divisions when it starts (QKVParallelLinear and the MLP's column-parallel split)."],
}



def make_effective_bits(rng: Rng, ctx: Ctx) -> Draft:
    f = rng.pick(ctx.block_formats)
    eb = T.element_bits(f)
    answer = F.effective_bits_per_weight(eb, f.group_size, f.scale_bits)
    v = {"fmt": f.name, "fkey": f.key, "eb": _bits(eb), "g": _i(f.group_size), "scale": _bits(f.scale_bits),
         "over": _bits(f.scale_bits / f.group_size), "answer": _bits(answer)}
    traps = {"scale_forgotten": eb, "scale_per_weight": T.effective_bits_scale_per_weight(eb, f.scale_bits),
             "bytes_for_bits": answer / 8}
    return Draft({"fmt": f.key}, v, answer, traps, question=144)


EFFECTIVE_BITS = {
    "title": "effective bits of {fmt}",
    "prompt": ["{fmt} stores {eb}-bit elements in groups of {g} weights.",
               "Each group also stores {scale} bits of scale data (its scale, and any minimum or zero point)."],
    "ask": ["How many bits does each weight take on average?"],
    "formulas": ["effective bits = element bits + scale bits / group size"],
    "inputs": [["element bits", "{eb}", "fmt"], ["group size", "{g}", "fmt"],
               ["scale bits per group", "{scale}", "fmt"]],
    "steps": ["{eb} + {scale} / {g} = {eb} + {over} = {answer}"],
    "results": ["{answer} bits per weight"],
    "notes": ["Weight bytes = parameters × effective bits / 8."],
}
