"""Engine configuration: the start-up memory ledger, concurrency from the memory fraction and a TPOT
target, and the GPU count and decode bound per weight format (formulas: :mod:`macros.formulas.engineconf`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _flink, _gib, _glink, _i, _mlink, _n
from .budget import _budget
from .registry import COUNT, TOKENS, Arg, macro
from .speed import _decode

RELEASES = ("0.11", "0.33")
_GIB = Arg(lambda name, v: inputs.number(name, v, positive=False), "GiB", ">= 0")
_ARGS = {"max_num_batched_tokens": TOKENS, "max_num_seqs": COUNT, "sequences": COUNT, "non_torch_gib": _GIB,
         "graph_gib": _GIB, "in_use_gib": _GIB,
         "tpot_ms": Arg(inputs.number, "milliseconds", "> 0"),
         "bw_efficiency": Arg(inputs.number, "share of peak bandwidth reached", "> 0, <= 1"),
         "utils": Arg(lambda _n, vs: [inputs.number("utils", v) for v in vs], "list of fractions", "")}


def _release(release: str) -> bool:
    """True when the release counts CUDA graphs inside the budget."""
    if release not in RELEASES:
        raise MacroInputError(f"release must be one of {', '.join(RELEASES)}, got {release!r}")
    return release == "0.33"


@macro("block", example='startup_memory("llama-3.1-8b", "h100-sxm")', args=_ARGS)
def startup_memory(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 1, gpu_util: float = 0.9,
                   max_num_batched_tokens: int = 8192, max_num_seqs: int = 1024, non_torch_gib: float = 0.5,
                   graph_gib: float = 1.0, in_use_gib: float = 0.5, release: str = "0.11",
                   kv_dtype: Format = "bf16") -> str:
    """Worked example: where one GPU's memory goes when vLLM starts, and what is left for the KV cache.

    `requested = memory × gpu_util`; KV pool = requested − weights per GPU − activation peak − non-torch
    memory (− the CUDA graph pool with `release="0.33"`, which estimates it during profiling). The
    activation peak is floored by the two largest tensors of the profiling pass: the fused gate/up output
    at `max_num_batched_tokens` and the FP32 logits of `min(max_num_seqs, tokens)` rows. Outside the
    share: memory in use before start-up and (0.11) the graph pool. Dense models.
    """
    inside = _release(release)
    m, g, f, n = model, gpu, fmt, n_gpus
    inputs.check_tp(m, n)
    shard = F.tp_shard(m, n, f)
    peak = F.profile_peak_tensors(m, max_num_batched_tokens, max_num_seqs, n)
    led = F.startup_ledger(g.engine_memory_bytes, gpu_util, shard.weights_per_gpu, peak.floor, non_torch_gib * U.GiB,
                           graph_gib * U.GiB, in_use_gib * U.GiB, inside)
    ex = Example(f"start-up memory of {m.name} ({f.name}) on {n} × {g.name}, vLLM {release}")
    ex.formula("requested = GPU memory × gpu_memory_utilization")
    ex.formula("KV pool = requested − weights − activation peak − non-torch"
               + (" − CUDA graphs" if inside else ""))
    ex.formula("activation peak ≥ max(tokens × 2 × intermediate_size / TP × 2 bytes, rows × vocab × 4 bytes)")
    ex.input("GPU memory (CUDA total)", U.fmt_gb(g.engine_memory_bytes), _glink(g))
    ex.input("weights per GPU (TP " + str(n) + ")", U.fmt_gb(shard.weights_per_gpu), f"{_mlink(m)}, {_flink(f)}")
    ex.input("`--gpu-memory-utilization`", _bits(gpu_util), GIVEN)
    ex.input("`--max-num-batched-tokens` / `--max-num-seqs`", f"{_i(max_num_batched_tokens)} / {_i(max_num_seqs)}",
             GIVEN)
    ex.input("intermediate_size / vocab_size", f"{_i(m.intermediate_size)} / {_i(m.vocab_size)}", _mlink(m))
    ex.input("non-torch memory / CUDA graphs / in use before start-up",
             f"{_bits(non_torch_gib)} / {_bits(graph_gib)} / {_bits(in_use_gib)} GiB",
             "assumption: read yours from the start-up log")
    ex.step(f"requested: {_gib(g.engine_memory_bytes)} × {_bits(gpu_util)} = {_gib(led.requested)}")
    ex.step(f"MLP activation: {_i(peak.tokens)} × 2 × {_i(m.intermediate_size)} / {n} × 2 bytes = "
            f"{_gib(peak.mlp_bytes)}")
    ex.step(f"FP32 logits: {_i(peak.rows)} rows × {_i(m.vocab_size)} × 4 bytes = {_gib(peak.logits_bytes)}")
    ex.step(f"KV pool: {_gib(led.requested)} − {_gib(led.weights)} − {_gib(led.activation)} − "
            f"{_gib(led.non_torch)}" + (f" − {_gib(led.cudagraph)}" if inside else "") + f" = {_gib(led.kv_pool)}")
    outside = g.engine_memory_bytes - led.requested
    ex.step(f"outside the share: {_gib(outside)} − {_gib(in_use_gib * U.GiB)} in use before start-up"
            + ("" if inside else f" − {_gib(led.cudagraph)} of CUDA graphs") + f" = {_gib(led.outside_left)}")
    rows = ["| Where it goes | GiB per GPU | Inside the share? | Moved by |", "| --- | ---: | --- | --- |",
            f"| weights | {_n(U.bytes_to_gib(led.weights))} | yes | `--tensor-parallel-size`, `--quantization` |",
            f"| activation peak (floor) | {_n(U.bytes_to_gib(led.activation))} | yes | "
            "`--max-num-batched-tokens`, `--max-num-seqs` |",
            f"| non-torch (NCCL, workspaces) | {_n(U.bytes_to_gib(led.non_torch))} | yes | parallel layout |",
            f"| CUDA graphs | {_n(U.bytes_to_gib(led.cudagraph))} | {'yes' if inside else 'no'} | "
            "`--max-num-seqs` (capture sizes), `--enforce-eager` |",
            f"| KV pool | {_n(U.bytes_to_gib(max(led.kv_pool, 0)))} | yes | `--gpu-memory-utilization` |"]
    ex.table("\n".join(rows))
    if led.kv_pool <= 0:
        ex.result("the engine refuses to start: no memory left for KV blocks")
    elif led.outside_left < 0:
        ex.result(f"KV pool {_gib(led.kv_pool)}, but the memory outside the share is short by "
                  f"{_gib(-led.outside_left)}: out of memory at graph capture")
    else:
        per_tok = F.kv_bytes_per_token(m, kv_dtype) * shard.kv_fraction
        ex.result(f"KV pool {_gib(led.kv_pool)} = {_i(F.kv_tokens_in_budget(led.kv_pool, per_tok))} tokens of "
                  f"{kv_dtype.key} KV; {_gib(led.outside_left)} spare outside the share")
    ex.note("The activation row is a floor: the measured peak also holds the layer input, residual and attention "
            "workspaces.")
    return ex.render()


def _step_time(m: Model, g: Gpu, f: Format, fe: Format | None, kv: Format, n: int, ctx: int, eff: float):
    peak, _ = inputs.peak_flops(g, f) if f.key != "fp8" or g.fp8_dense_flops else (g.bf16_dense_flops, "")
    flops_tok = 2 * F.param_breakdown(m).compute_active

    def step(b: int) -> float:
        bound = _decode(m, g, f, fe, kv, n, b, ctx)[0]
        return max(bound.memory_time_s / eff, b * flops_tok / (n * peak)) + bound.comm_time_s
    return step


@macro("block", example='concurrency_plan("llama-3.1-8b", "h100-sxm", context="4K", tpot_ms=20)', args=_ARGS)
def concurrency_plan(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 1, context: int = 8192,
                     tpot_ms: float = 50.0, utils: list | None = None, bw_efficiency: float = 0.7,
                     kv_dtype: Format = "bf16", expert_fmt: Format | None = None) -> str:
    """Worked example: KV tokens and sequences per `--gpu-memory-utilization`, and the batch a TPOT target allows.

    Per fraction: the KV budget as in `memory_budget` (2 GiB activations, 1 GiB reserve), its tokens and
    the sequences of `context` tokens it holds. The TPOT limit: the largest batch whose decode step,
    `max(bytes read / (bandwidth × bw_efficiency), batch × 2 × active params / peak) + all-reduces`,
    stays within `tpot_ms`. `--max-num-seqs` = the smaller of the two.
    """
    m, g, f, n, ctx, kv, fe = model, gpu, fmt, n_gpus, context, kv_dtype, expert_fmt
    utils = utils or [0.85, 0.9, 0.95]
    if not 0 < bw_efficiency <= 1:
        raise MacroInputError(f"bw_efficiency must be in (0, 1], got {bw_efficiency}")
    for u in utils:
        if not 0 < u <= 1:
            raise MacroInputError(f"every gpu_memory_utilization must be in (0, 1], got {u}")
    ex = Example(f"concurrency of {m.name} ({f.name}) on {n} × {g.name} at {_i(ctx)} tokens, TPOT {_n(tpot_ms)} ms")
    ex.formula("sequences that fit = floor(KV budget / KV bytes per sequence); KV budget as in memory_budget")
    ex.formula("TPOT limit = largest batch with step(batch) ≤ target; --max-num-seqs = min(sequences, TPOT limit)")
    ex.input("GPU", f"{_gib(g.engine_memory_bytes)}, {U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)}", _glink(g))
    ex.input("model; weights; KV dtype", f"{m.name}; {f.name}; {kv.name}", f"{_mlink(m)}, {_flink(f)}")
    ex.input("KV tokens held per active sequence", f"{_i(ctx)} tokens", "given: prompt + output so far, on average")
    ex.input("TPOT target / bandwidth share reached", f"{_n(tpot_ms)} ms / {_bits(bw_efficiency)}",
             "given / assumption: measure it")
    ex.input("activations / runtime reserve per GPU", "2 GiB / 1 GiB", "assumption, as in memory_budget")
    step = _step_time(m, g, f, fe, kv, n, ctx, bw_efficiency)
    limit = F.tpot_batch_limit(step, tpot_ms / 1000, 8192)
    rows = ["| `--gpu-memory-utilization` | KV budget per GPU | KV tokens | Sequences that fit | "
            "`--max-num-seqs` to set |", "| ---: | ---: | ---: | ---: | ---: |"]
    for u in utils:
        _, shard, budget = _budget(m, g, f, kv, n, u, 2.0, 1.0, fe)
        if budget <= 0:
            rows.append(f"| {_bits(u)} | none | 0 | 0 | does not fit |")
            continue
        per_tok = F.kv_bytes_per_token(m, kv) * shard.kv_fraction
        seqs = F.max_concurrent_sequences(budget, F.kv_bytes_per_sequence_paged(m, ctx, kv, 16, shard.kv_fraction))
        rows.append(f"| {_bits(u)} | {_gib(budget)} | {_i(F.kv_tokens_in_budget(budget, per_tok))} | {_i(seqs)} | "
                    f"{_i(min(seqs, limit))} |")
    if limit:
        ex.step(f"step at batch 1: {U.fmt_seconds(step(1))}; at batch {_i(limit)}: {U.fmt_seconds(step(limit))}; "
                f"at batch {_i(limit + 1)}: {U.fmt_seconds(step(limit + 1))}")
        ex.step(f"TPOT limit: {_i(limit)} sequences")
    else:
        ex.step(f"step at batch 1: {U.fmt_seconds(step(1))}, already above the target")
    ex.table("\n".join(rows))
    ex.result("the memory fraction sets how many sequences fit; the TPOT target caps how many should share a step")
    ex.note("A bound, not a measurement: scheduling, sampling and prefill chunks sharing the step add time.")
    return ex.render()


def _prefill_rate(g: Gpu, f: Format) -> str:
    if f.key == "fp8" and not g.fp8_dense_flops:
        return f"{U.fmt_flops(g.bf16_dense_flops)} (BF16: weight-only FP8)"
    peak, label = inputs.peak_flops(g, f)
    return f"{inputs.fmt_peak(f, peak)} ({label.replace('dense ', '')})"


@macro("block", example='format_plan("llama-3.1-70b", "h100-sxm", ["bf16", "fp8", "int4-g128"])', args=_ARGS)
def format_plan(model: Model, gpu: Gpu, fmts: list, context: int = 8192, sequences: int = 16,
                kv_dtype: Format = "bf16", n_gpus: int | None = None) -> str:
    """Worked example: per weight format, the GPUs needed for `sequences` × `context`, and the decode bound there.

    GPUs = smallest valid TP degree (up to 8) whose per-GPU KV budget (as in `memory_budget`) holds the
    sequences; decode bound per sequence at batch 1 and at `sequences`, with the all-reduces; the tensor
    rate prefill matmuls run at (weight-only formats and FP8 on GPUs without FP8 run at the BF16 rate).
    With `n_gpus`, every format runs on that TP degree instead (the GPU count held fixed).
    """
    m, g, kv, ctx = model, gpu, kv_dtype, context
    fixed = n_gpus is not None
    if fixed:
        inputs.check_tp(m, n_gpus)
    where = f"{n_gpus} × {g.name}" if fixed else g.name
    ex = Example(f"{m.name} on {where}: {'decode bound' if fixed else 'GPUs and decode bound'} per format, "
                 f"{_i(sequences)} × {_i(ctx)} tokens")
    if not fixed:
        ex.formula("GPUs = smallest valid TP with KV budget per GPU (as in memory_budget) ≥ sequences × KV per "
                   "sequence per GPU")
    ex.formula("decode step = (weights read per GPU + batch × KV per sequence per GPU) / bandwidth + all-reduces")
    ex.input("GPU", f"{U.fmt_gb(g.engine_memory_bytes)}, {U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)}", _glink(g))
    ex.input("model; KV dtype", f"{m.name}; {kv.name}", f"{_mlink(m)}, {_flink(kv)}")
    ex.input("load", f"{_i(sequences)} sequences of {_i(ctx)} tokens", GIVEN)
    act, res = 2.0, 1.0
    ex.input("`--gpu-memory-utilization`; activations; reserve per GPU",
             f"{_bits(F.DEFAULT_GPU_UTILIZATION)}; {_bits(act)} GiB; {_bits(res)} GiB",
             "vLLM 0.11 default; assumptions, as in memory_budget")
    rows = ["| Weights | Weight bytes | GPUs (TP) | Bound, batch 1 | Bound per sequence, batch "
            f"{_i(sequences)} | Prefill matmul rate |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for f in fmts:
        w = F.weight_bytes(m, f)
        tp = n_gpus if fixed else F.smallest_fitting_tp(m, f, kv, g.engine_memory_bytes, sequences, ctx,
                                                        F.DEFAULT_GPU_UTILIZATION, act * U.GiB, res * U.GiB)
        if tp is None:
            rows.append(f"| {_flink(f)} | {U.fmt_gb(w)} | > 8 | – | – | {_prefill_rate(g, f)} |")
            continue
        _, shard, budget = _budget(m, g, f, kv, tp, F.DEFAULT_GPU_UTILIZATION, act, res, None)
        per_seq = F.kv_bytes_per_sequence_paged(m, ctx, kv, F.DEFAULT_BLOCK_SIZE, shard.kv_fraction)
        if budget <= 0 or F.max_concurrent_sequences(budget, per_seq) < sequences:
            rows.append(f"| {_flink(f)} | {U.fmt_gb(w)} | {tp}: does not hold the load | – | – | "
                        f"{_prefill_rate(g, f)} |")
            continue
        one = _decode(m, g, f, None, kv, tp, 1, ctx)[0]
        full = _decode(m, g, f, None, kv, tp, sequences, ctx)[0]
        rows.append(f"| {_flink(f)} | {U.fmt_gb(w)} | {tp} | {U.fmt_rate(one.tokens_per_s_per_sequence)} | "
                    f"{U.fmt_rate(full.tokens_per_s_per_sequence)} | {_prefill_rate(g, f)} |")
    ex.table("\n".join(rows))
    ex.result("fewer weight bytes per GPU raise the decode bound; the prefill rate moves only when activations "
              "are quantized too")
    ex.note("Bounds at peak bandwidth; weight-only kernels lose part of the gain at large batch, where "
            "dequantization is no longer hidden under memory time.")
    return ex.render()
