"""Drill types on speed: the batch-1 and batched decode bounds and the prefill time (from the calculator's
sheet), the batch at the ridge point, and the tensor-parallel all-reduce time per step."""

from __future__ import annotations

from macros import formulas as F
from macros import units as U
from macros.formulas import traps as T
from macros.render.blocks import _bits, _bytes_el, _i, _sci

from ..calcsheet import peak_flops
from ..calculator import DEFAULTS
from .core import ATTEMPTS, RIDGE_FORMATS, TOL, Ctx, Draft, Rng, _differs, _num, _within
from .deploy import _deploy_values, _draw_deployment


# ---- decode and prefill --------------------------------------------------------------------------------

DECODE_CONTEXTS = (1024, 2048, 4096, 8192, 16384, 32768)
PREFILL_CONTEXTS = (1024, 4096, 8192, 32768, 131072)


def _decode_values(v: dict, m, g, f, kv, n, context, conc, s) -> None:
    _deploy_values(v, m, g, f, kv, n, s)
    b = F.param_breakdown(m)
    v.update(bw=U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s), ctx=_i(context), conc=_i(conc),
             kvtok=U.fmt_bytes(s["kv_per_token"]), read=U.fmt_gb(s["decode_weight_read"]),
             read_gpu=_i(s["decode_weight_read_gpu"]), kv_gpu=_i(s["decode_kv_read_gpu"]),
             mem_s=U.fmt_seconds(s["decode_memory_s"]), step=U.fmt_seconds(s["decode_step_s"]),
             per_seq=_num(s["decode_per_sequence"]), agg=_num(s["decode_aggregate"]))
    if s["decode_comm_s"]:
        v["comm"] = U.fmt_seconds(s["decode_comm_s"])
    if m.moe is not None and b.moe_layers:
        wb = F.weight_bytes_breakdown(m, f, None, breakdown=b)
        v.update(moe="", k=_i(m.moe.experts_per_token), experts=_i(m.moe.num_experts),
                 expert_bytes=U.fmt_gb(wb.routed_experts), touched=_num(s["experts_touched"]))
    if b.lm_head:
        v["lookup"] = ""


_DECODE_PROMPT = [
    "{model} in {fmt}, {weights} of weights, decodes on {n} × {gpu} with tensor parallelism {n}; each GPU "
    "reads its memory at {bw}.",
    "?moe:Each token is routed to {k} of the {experts} experts in every MoE layer; the routed experts hold "
    "{expert_bytes} of the weights.",
    "Each token of context holds {kvtok} of KV cache for the whole model.",
    "?comm:The step's tensor-parallel all-reduces take {comm}.",
]
_DECODE_INPUTS = [["memory bandwidth per GPU", "{bw}", "gpu"],
                  ["weights (all GPUs)", "{weights}", "model"],
                  ["TP degree (= GPUs)", "{n}", "given"],
                  ["KV per token (whole model)", "{kvtok}", "model"]]


def _decode_napkin(m, f, g, n, s, conc) -> float:
    """Weights (MoE: the non-expert weights plus the experts' expected share) over TP, plus the KV, over
    the bandwidth, plus the stated all-reduce time."""
    b = F.param_breakdown(m)
    wb = F.weight_bytes_breakdown(m, f, None, breakdown=b)
    weights = wb.total
    if m.moe is not None and b.moe_layers:
        weights = wb.non_expert + wb.routed_experts * s["experts_touched"] / m.moe.num_experts
    step = (weights / n + conc * s["kv_per_sequence"] * s["kv_fraction"]) / g.memory_bandwidth_bytes_per_s
    return conc / (step + s["decode_comm_s"])


def _decode_traps(m, f, g, n, s, conc: int) -> dict:
    bw, comm = g.memory_bandwidth_bytes_per_s, s["decode_comm_s"]
    traps = {"kv_reads_forgotten": conc / (s["decode_weight_read_gpu"] / bw + comm)}
    if comm:
        traps["comm_forgotten"] = conc / s["decode_memory_s"]
    if n > 1:
        traps["tp_share_forgotten"] = conc / ((s["decode_weight_read"] + s["decode_kv_read_gpu"] / s["kv_fraction"])
                                              / bw)
    if m.moe is not None and F.param_breakdown(m).moe_layers:
        every = T.weight_bytes_read_all_experts(m, f, conc) / n + s["replicated_extra"]
        traps["all_experts"] = conc / ((every + s["decode_kv_read_gpu"]) / bw + comm)
    return traps


def make_decode_b1(rng: Rng, ctx: Ctx) -> Draft:
    tol = TOL

    def ok(n, s, d):
        return (s["fits"] and s["max_sequences"] >= 1
                and _within(_decode_napkin(d["m"], d["f"], d["g"], n, s, 1), s["decode_per_sequence"], tol / 2)
                and any(_differs(t, s["decode_per_sequence"]) for t in _decode_traps(d["m"], d["f"], d["g"], n, s,
                                                                                   1).values()))

    d = _draw_deployment(rng, ctx, DECODE_CONTEXTS, (1,), ok)
    m, g, f, kv, n, s = d["m"], d["g"], d["f"], d["kv"], d["n"], d["s"]
    v: dict = {}
    _decode_values(v, m, g, f, kv, n, d["ctx"], 1, s)
    v["result"] = f"{_num(s['decode_per_sequence'])} tokens/s"
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, s["decode_per_sequence"],
                 _decode_traps(m, f, g, n, s, 1), napkin=_decode_napkin(m, f, g, n, s, 1))


DECODE_B1 = {
    "title": "batch-1 decode bound of {model} in {fmt} on {n} × {gpu}",
    "prompt": _DECODE_PROMPT + ["One sequence decodes, {ctx} tokens into its context."],
    "ask": ["What is the decode bound at batch 1, in tokens per second?"],
    "formulas": ["step time = (weight bytes read per GPU + KV bytes read per GPU) / bandwidth + all-reduce time",
                 "tokens/s per sequence = 1 / step time"],
    "inputs": _DECODE_INPUTS + [["context", "{ctx} tokens", "given"]],
    "steps": ["weights read per step (all GPUs): {read}",
              "per GPU: {read_gpu} bytes of weights + {kv_gpu} bytes of KV",
              "memory time: {mem_s}",
              "?comm:with the all-reduces ({comm}): step {step}",
              "1 / {step} = {per_seq} tokens/s"],
    "results": ["{result}"],
    "notes": ["?moe:At batch 1 a step reads the non-expert weights and the token's top-{k} experts per layer.",
              "?lookup:The input embedding is only looked up (one row per token), not read whole.",
              "A bound, not a prediction: kernels reach a fraction of the bandwidth."],
}


def make_decode_batch(rng: Rng, ctx: Ctx) -> Draft:
    tol = TOL

    def ok(n, s, d):
        return (s["fits"] and s["headroom"] >= 0
                and _within(_decode_napkin(d["m"], d["f"], d["g"], n, s, d["conc"]), s["decode_aggregate"], tol / 2))

    d = _draw_deployment(rng, ctx, DECODE_CONTEXTS, (8, 16, 32, 64, 128), ok)
    m, g, f, kv, n, s, conc = d["m"], d["g"], d["f"], d["kv"], d["n"], d["s"], d["conc"]
    v: dict = {}
    _decode_values(v, m, g, f, kv, n, d["ctx"], conc, s)
    v["result"] = f"{_num(s['decode_aggregate'])} tokens/s in total ({v['per_seq']} per sequence)"
    traps = _decode_traps(m, f, g, n, s, conc)
    bw = g.memory_bandwidth_bytes_per_s
    traps["weights_per_sequence"] = conc / ((conc * s["decode_weight_read_gpu"] + s["decode_kv_read_gpu"]) / bw
                                            + s["decode_comm_s"])
    traps["per_sequence_rate"] = s["decode_per_sequence"]
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key, "kv": kv.key}, v, s["decode_aggregate"], traps,
                 napkin=_decode_napkin(m, f, g, n, s, conc))


DECODE_BATCH = {
    "title": "decode bound of {model} in {fmt} on {n} × {gpu} at batch {conc}",
    "prompt": _DECODE_PROMPT + ["{conc} sequences decode together, each {ctx} tokens into its context.",
                                "?moe:At this batch a step touches {touched} of the {experts} experts per layer on "
                                "average."],
    "ask": ["What is the decode bound for the whole batch, in tokens per second?"],
    "formulas": ["step time = (weight bytes read per GPU + batch × KV bytes per sequence per GPU) / bandwidth "
                 "+ all-reduce time",
                 "aggregate tokens/s = batch / step time"],
    "inputs": _DECODE_INPUTS + [["batch × context", "{conc} × {ctx} tokens", "given"]],
    "steps": ["weights read per step (all GPUs, once for the whole batch): {read}",
              "per GPU: {read_gpu} bytes of weights + {kv_gpu} bytes of KV for {conc} sequences",
              "memory time: {mem_s}",
              "?comm:with the all-reduces ({comm}): step {step}",
              "{conc} / {step} = {agg} tokens/s"],
    "results": ["{result}"],
    "notes": ["?moe:A batch reads the experts its tokens are routed to: {touched} of {experts} per layer on average "
              "under uniform routing.",
              "?lookup:The input embedding is only looked up (one row per token), not read whole.",
              "A bound, not a prediction: kernels reach a fraction of the bandwidth."],
}


def _prefill_parts(m, context, s) -> tuple[int, int, float, float]:
    """(matmul parameters per token without the LM head, the LM head, weight-matmul FLOPs, attention FLOPs)."""
    b = F.param_breakdown(m)
    head = b.lm_head or b.embedding
    dense = F.prefill_matmul_flops(m, context, min(1, context))
    return b.compute_active - head, head, dense, s["prefill_flops"] - dense


def _prefill_napkin(m, context, s, n, mfu) -> float:
    matmul, _, _, attn = _prefill_parts(m, context, s)
    return (2 * matmul * context + attn) / (s["prefill_peak"] * n * mfu)


def make_prefill(rng: Rng, ctx: Ctx) -> Draft:
    tol = TOL

    def ok(n, s, d):
        return (s["fits"] and s["max_sequences"] >= 1 and "prefill_s" in s
                and _within(_prefill_napkin(d["m"], d["ctx"], s, n, d["mfu"]), s["prefill_s"], tol / 2))

    d = _draw_deployment(rng, ctx, PREFILL_CONTEXTS, (1,), ok, gpu_ok=lambda x, f: peak_flops(x, f)[0] is not None,
                         mfus=(0.3, 0.4, 0.5, 0.6))
    m, g, f, n, s, context, mfu = d["m"], d["g"], d["f"], d["n"], d["s"], d["ctx"], d["mfu"]
    b = F.param_breakdown(m)
    matmul, head, dense, attn = _prefill_parts(m, context, s)
    peak, label, flops = s["prefill_peak"], s["prefill_peak_label"], s["prefill_flops"]
    v = {"model": m.name, "gpu": g.name, "fmt": f.name, "n": _i(n), "ctx": _i(context), "mfu": _bits(mfu),
         "matmul": _i(matmul), "attn": _sci(attn), "dense": _sci(dense), "flops": _sci(flops),
         "label": label, "kind": _rate_kind(label), "peak": U.fmt_flops(peak),
         "sparse": U.fmt_flops(T.sparse_flops_as_dense(peak)), "group": U.fmt_flops(peak * n),
         "result": U.fmt_seconds(s["prefill_s"])}
    moe = m.moe is not None and b.moe_layers
    if moe:
        v.update(moe="", total=_i(b.total))
    traps = {"sparse_flops": F.prefill_time(flops, T.sparse_flops_as_dense(peak) * n, mfu),
             "mfu_forgotten": F.prefill_time(flops, peak * n, 1.0),
             "one_flop_per_param": F.prefill_time(dense / 2 + attn, peak * n, mfu),
             "attention_forgotten": F.prefill_time(dense, peak * n, mfu)}
    if moe:
        every = b.total - (b.embedding if b.lm_head else 0) - head
        traps["total_for_active"] = F.prefill_time(2 * every * context + 2 * head + attn, peak * n, mfu)
    if n > 1:
        traps["tp_share_forgotten"] = F.prefill_time(flops, peak, mfu)
    return Draft({"model": m.key, "gpu": g.key, "fmt": f.key}, v, s["prefill_s"], traps,
                 question=116 if context >= 32768 else None, napkin=_prefill_napkin(m, context, s, n, mfu))


PREFILL = {
    "title": "prefill of {ctx} tokens, {model} in {fmt} on {n} × {gpu}",
    "prompt": ["{model} in {fmt} prefills a prompt of {ctx} tokens on {n} × {gpu} with tensor parallelism {n}.",
               "Each token passes through {matmul} matmul parameters (the LM head runs once, at the last position).",
               "?moe:Those are the active parameters: the model has {total} in all.",
               "At this length the attention scores add {attn} FLOPs.",
               "The GPU's datasheet prints {sparse} {kind} with 2:4 structured sparsity.",
               "The engine reaches {mfu} MFU."],
    "ask": ["How long does the prefill take?"],
    "formulas": ["prefill FLOPs = 2 × matmul parameters × tokens + 2 × LM head + attention FLOPs",
                 "time = FLOPs / (dense peak × GPUs × MFU)"],
    "inputs": [["matmul parameters per token", "{matmul}", "model"],
               ["prompt tokens", "{ctx}", "given"],
               ["dense peak per GPU ({label})", "{peak}", "gpu"],
               ["GPUs (TP)", "{n}", "given"],
               ["MFU", "{mfu}", "given"]],
    "steps": ["matmul FLOPs: {dense}", "with the attention FLOPs ({attn}): {flops}",
              "{flops} / ({group} × {mfu}) = {result}"],
    "results": ["{result}"],
    "notes": ["The dense rate is half the with-sparsity figure datasheets print.",
              "A bound at the stated MFU: long prompts are compute-bound."],
}


def _rate_kind(label: str) -> str:
    """'dense FP8' -> 'FP8': the precision of a tensor rate, for the datasheet's with-sparsity figure."""
    return label.replace("dense ", "")


def _rate(x: float, label: str) -> str:
    """A tensor rate in TFLOPS, or in TOPS for an integer format."""
    text = U.fmt_flops(x)
    return text.replace("TFLOPS", "TOPS") if "INT8" in label else text


def make_ridge_batch(rng: Rng, ctx: Ctx) -> Draft:
    for _ in range(ATTEMPTS):
        g = rng.pick(ctx.gpus)
        f = ctx.fmt(rng.pick(RIDGE_FORMATS))
        peak, label = peak_flops(g, f)
        if peak is not None:
            break
    else:
        raise RuntimeError("sitebuild/drills/speed.py: ridge_batch: no GPU drawn")
    bw = g.memory_bandwidth_bytes_per_s
    ridge = F.ridge_point(peak, bw)
    bpp = f.bits_per_weight / 8
    answer = F.batch_to_reach_ridge(ridge, bpp)
    v = {"gpu": g.name, "fmt": f.name, "fkey": f.key, "bits": _bits(f.bits_per_weight), "bpp": _bytes_el(bpp),
         "label": label, "kind": _rate_kind(label), "peak": _rate(peak, label),
         "sparse": _rate(T.sparse_flops_as_dense(peak), label), "bw": U.fmt_bandwidth(bw), "ridge": _num(ridge),
         "op": "op" if "INT8" in label else "FLOP", "answer": _i(answer)}
    if f.key not in ("bf16", "fp8", "int8"):
        v["weight_only"] = ""
    traps = {"sparse_flops": F.batch_to_reach_ridge(F.ridge_point(T.sparse_flops_as_dense(peak), bw), bpp),
             "bits_as_bytes": F.batch_to_reach_ridge(ridge, bpp * 8)}
    if bpp != 2:
        traps["ridge_as_batch"] = F.batch_to_reach_ridge(ridge, 2)
    if f.key == "fp8":
        traps["bf16_rate_for_fp8"] = F.batch_to_reach_ridge(F.ridge_point(g.bf16_dense_flops, bw), bpp)
    return Draft({"gpu": g.key, "fmt": f.key}, v, answer, traps, question=7)


RIDGE_BATCH = {
    "title": "decode batch at the ridge point of {gpu}, weights in {fmt}",
    "prompt": ["On {gpu}, memory bandwidth {bw}; its datasheet prints {sparse} {kind} with 2:4 structured "
               "sparsity.",
               "Decode runs with weights in {fmt}, {bits} bits per weight.",
               "?weight_only:The weights are dequantized, so the matmuls run at the BF16 rate."],
    "ask": ["From what batch size on do decode's weight matmuls stop being memory-bound (reach the ridge point)?"],
    "formulas": ["ridge point = dense peak / bandwidth (operations per byte)",
                 "decode matmul intensity ≈ 2 × batch / bytes per weight",
                 "batch = ceil(ridge × bytes per weight / 2)"],
    "inputs": [["dense peak ({label})", "{peak}", "gpu"], ["memory bandwidth", "{bw}", "gpu"],
               ["bytes per weight, {fkey}", "{bpp}", "fmt"]],
    "steps": ["ridge: {peak} / {bw} = {ridge} {op} per byte",
              "batch: ceil({ridge} × {bpp} / 2) = {answer}"],
    "results": ["batch {answer}"],
    "notes": ["Each weight does a multiply and an add per sequence in the batch; KV reads push the real batch "
              "higher.",
              "The dense rate is half the with-sparsity figure datasheets print."],
}



ALLREDUCE_BATCHES = (1, 8, 32, 64, 128, 256)


def make_allreduce(rng: Rng, ctx: Ctx) -> Draft:
    gpus = [g for g in ctx.gpus if g.allreduce_latency_s and g.interconnect_bytes_per_s_per_direction]
    for _ in range(ATTEMPTS):
        m = rng.pick(ctx.models)
        g = rng.pick(gpus)
        degrees = [t for t in (2, 4, 8) if t in F.valid_tp_degrees(m, DEFAULTS["max_tp"])]
        if degrees:
            break
    else:
        raise RuntimeError("sitebuild/drills/speed.py: allreduce: no model drawn")
    n = rng.pick(degrees)
    batch = rng.pick(ALLREDUCE_BATCHES)
    eb = DEFAULTS["activation_element_bytes"]
    lat, link = g.allreduce_latency_s, g.interconnect_bytes_per_s_per_direction
    answer = F.tp_decode_allreduce_time(m, batch, eb, n, lat, link)
    buf = batch * m.hidden_size * eb
    one = F.allreduce_time(buf, n, lat, link)
    v = {"model": m.name, "gpu": g.name, "layers": _i(m.num_hidden_layers), "hidden": _i(m.hidden_size),
         "n": _i(n), "batch": _i(batch), "eb": _bits(eb), "lat": U.fmt_seconds(lat),
         "bidir": U.fmt_bandwidth(T.bidirectional_as_per_direction(link)), "link": U.fmt_bandwidth(link),
         "buf": _i(buf), "ring": _i(F.ring_allreduce_bytes_per_gpu(buf, n)), "one": U.fmt_seconds(one),
         "calls": _i(2 * m.num_hidden_layers), "result": U.fmt_seconds(answer)}
    args = (m, batch, eb, n, lat, link)
    traps = {"bidirectional": F.tp_decode_allreduce_time(m, batch, eb, n, lat, T.bidirectional_as_per_direction(link)),
             "one_allreduce_per_layer": T.allreduce_time_one_per_layer(*args),
             "latency_forgotten": T.allreduce_time_no_latency(*args),
             "ring_factor_forgotten": T.allreduce_time_no_ring_factor(*args)}
    if batch > 1:
        traps["batch_forgotten"] = F.tp_decode_allreduce_time(m, 1, eb, n, lat, link)
    return Draft({"model": m.key, "gpu": g.key}, v, answer, traps, question=79)


ALLREDUCE = {
    "title": "TP all-reduce time per decode step, {model} on {n} × {gpu}, batch {batch}",
    "prompt": ["{model} ({layers} layers, hidden_size {hidden}) decodes with tensor parallelism {n} on {gpu}.",
               "A step carries {batch} tokens; the activations are BF16 ({eb} bytes per value).",
               "The GPU-to-GPU link's datasheet figure is {bidir}, both directions added together; one all-reduce "
               "call costs about {lat} before any bytes move."],
    "ask": ["How long do one decode step's tensor-parallel all-reduces take in total?"],
    "formulas": ["per step = 2 × layers × (latency + 2(p − 1)/p × tokens × hidden_size × bytes / link per direction)"],
    "inputs": [["`num_hidden_layers` / `hidden_size`", "{layers} / {hidden}", "model"],
               ["link per direction", "{link}", "gpu"], ["all-reduce latency", "{lat}", "gpu"],
               ["TP degree p", "{n}", "given"], ["tokens in the step", "{batch}", "given"]],
    "steps": ["buffer: {batch} × {hidden} × {eb} = {buf} bytes; the ring sends {ring} bytes per GPU",
              "one all-reduce: {lat} + {ring} / {link} = {one}",
              "× {calls} all-reduces (2 per layer) = {result}"],
    "results": ["{result} per step"],
    "notes": ["Two all-reduces per layer: after attention's output projection and after the MLP.",
              "Real collectives pick ring, tree or one-shot algorithms whose constants differ; a bound-style "
              "estimate."],
}
