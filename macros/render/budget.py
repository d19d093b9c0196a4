"""The GPU memory budget: what fits, how many sequences, how long a context
(formulas: :mod:`macros.formulas.memory` and :mod:`macros.formulas.parallel`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import (GIVEN, REFERENCE_FORMATS, Example, _bits, _bytes_el, _flink, _frac, _gib, _glink, _i, _k,
                     _mlink, _n, catalog_link, deferred_block)
from .registry import macro


def _budget(m: Model, g: Gpu, f: Format, kv: Format, n_gpus: int, gpu_util: float, activation_gib: float,
            reserve_gib: float, expert_fmt: Format | None):
    inputs.check_tp(m, n_gpus)
    shard = F.tp_shard(m, n_gpus, f, expert_fmt)
    wtotal = shard.weights_total
    budget = F.kv_budget_bytes(g.engine_memory_bytes, shard.weights_per_gpu, gpu_util,
                               activation_gib * U.GiB, reserve_gib * U.GiB)
    return wtotal, shard, budget


def _capacity(m: Model, g: Gpu, f: Format, kv: Format, n_gpus: int, context: int, gpu_util: float,
              activation_gib: float, reserve_gib: float, block_size: int, expert_fmt: Format | None):
    inputs.check_tp(m, n_gpus)
    shard = F.tp_shard(m, n_gpus, f, expert_fmt)
    per_seq = F.kv_bytes_per_sequence_paged(m, context, kv, block_size, shard.kv_fraction)
    return F.sequence_capacity(g.engine_memory_bytes, shard.weights_per_gpu, per_seq, gpu_util,
                               activation_gib * U.GiB, reserve_gib * U.GiB)


def does_not_load(cap) -> str:
    """Why no KV cache is left: the weights (with the engine's allowances) take all it may use."""
    text = (f"does not load: the weights need {_gib(cap.weights_per_gpu)} per GPU, the engine may use "
            f"{_gib(cap.usable_per_gpu)}")
    if cap.weights_per_gpu < cap.usable_per_gpu:
        text += (f", and the activation peak and runtime reserve ({_gib(cap.overhead_per_gpu)}) take the "
                 f"remaining {_gib(cap.usable_per_gpu - cap.weights_per_gpu)}")
    return text


def capacity_words(cap, context: int) -> str:
    """A :class:`~macros.formulas.kvbudget.SequenceCapacity` in words: the count, or why there is none."""
    if cap.limit == "weights":
        return does_not_load(cap)
    if cap.limit == "one_sequence":
        return (f"one sequence of {_i(context)} tokens does not fit: it needs {_gib(cap.bytes_per_sequence)} "
                f"of KV cache per GPU, the KV budget is {_gib(cap.kv_budget)}")
    return _i(cap.sequences)


@macro("block", example='memory_budget("llama-3.1-70b", "h100-sxm", fmt="fp8", n_gpus=2, context="8K")')
def memory_budget(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 1, context: int = 8192,
                  kv_dtype: Format = "bf16", gpu_util: float = F.DEFAULT_GPU_UTILIZATION,
                  activation_gib: float = 2.0, reserve_gib: float = 1.0, block_size: int = F.DEFAULT_BLOCK_SIZE,
                  expert_fmt: Format | None = None) -> str:
    """Worked example: does ``model`` fit on ``n_gpus`` x ``gpu``, how many KV tokens, sequences and context.

    Per-GPU memory × `gpu_util` − weights per GPU (weights / TP + replicated tensors) − activations −
    runtime reserve = KV budget; KV tokens;
    concurrent sequences at `context` (paged, `ceil(context / block_size)` blocks each); the longest
    single sequence. Says "does not fit" when the weights leave no room.
    """
    # Imported here, not at module level, so the facts macros keep their place in MACROS.md.
    from .facts import flag_default, release
    m, g, f, kv, fe, n, ctx = model, gpu, fmt, kv_dtype, expert_fmt, n_gpus, context
    wtotal, shard, budget = _budget(m, g, f, kv, n, gpu_util, activation_gib, reserve_gib, fe)
    ex = Example(f"{m.name} in {f.name} on {n} × {g.name}")
    ex.formula("KV budget per GPU = memory × gpu_util − weights per GPU − activations − runtime reserve")
    ex.formula("max sequences = floor(KV budget / (KV bytes per block × ceil(context / block_size)))")
    ex.input("GPU memory (CUDA total)", U.fmt_gb(g.engine_memory_bytes), _glink(g))
    ex.input("weights (all GPUs)", U.fmt_gb(wtotal),
             f"{_mlink(m)}, {_flink(f)}" + (f", experts {_flink(fe)}" if fe else ""))
    ex.input("TP degree (= GPUs)", str(n), GIVEN)
    ex.input("`--gpu-memory-utilization`", _bits(gpu_util),
             f"assumption (the default in {release('vllm')} is {flag_default('vllm', '--gpu-memory-utilization')}; "
             "v0.11.0 defaulted to 0.9)")
    ex.input("activations / runtime reserve per GPU", f"{_bits(activation_gib)} GiB / {_bits(reserve_gib)} GiB",
             "assumption")
    ex.input(f"KV dtype ({kv.key}), block size", f"{_bytes_el(kv.bits_per_weight / 8)} bytes, {block_size} tokens",
             _flink(kv))
    ex.input("context per sequence", f"{_i(ctx)} tokens", GIVEN)
    usable = g.engine_memory_bytes * gpu_util
    ex.step(f"usable: {_gib(g.engine_memory_bytes)} × {_bits(gpu_util)} = {_gib(usable)}")
    if shard.replicated_extra_bytes:
        ex.step(f"weights per GPU: {_gib(wtotal)} / {n} + {U.fmt_bytes(shard.replicated_extra_bytes)} of "
                f"replicated tensors = {_gib(shard.weights_per_gpu)}")
    else:
        ex.step(f"weights per GPU: {_gib(wtotal)} / {n} = {_gib(shard.weights_per_gpu)}")
    ex.step(f"KV budget: {_gib(usable)} − {_gib(shard.weights_per_gpu)} − {_bits(activation_gib)} GiB − "
            f"{_bits(reserve_gib)} GiB = {_gib(budget)}")
    if budget <= 0:
        cap = _capacity(m, g, f, kv, n, ctx, gpu_util, activation_gib, reserve_gib, block_size, fe)
        ex.result(f"{does_not_load(cap)} (short by {U.fmt_gb(-budget)} per GPU)")
        valid = F.valid_tp_degrees(m)
        ex.note(f"Valid TP degrees for {m.name}: {', '.join(map(str, valid))}.")
        return ex.render()
    per_tok_gpu = F.kv_bytes_per_token(m, kv) * shard.kv_fraction
    ex.step(f"KV per token per GPU: {_i(F.kv_bytes_per_token(m, kv))} bytes × {_frac(shard.kv_fraction)} "
            f"(share held by one GPU) = {_i(per_tok_gpu)} bytes")
    tokens = F.kv_tokens_in_budget(budget, per_tok_gpu)
    per_seq = F.kv_bytes_per_sequence_paged(m, ctx, kv, block_size, shard.kv_fraction)
    seqs = F.max_concurrent_sequences(budget, per_seq)
    ex.step(f"per sequence at {_i(ctx)} tokens ({F.blocks_per_sequence(ctx, block_size)} blocks): "
            f"{_i(per_seq)} bytes per GPU")
    ex.step(f"max sequences: floor({_i(budget)} / {_i(per_seq)}) = {_i(seqs)}")
    max_ctx, limit = F.max_context_one_sequence(m, budget, kv, block_size, shard.kv_fraction)
    ex.result(f"fits; KV budget {U.fmt_gb(budget)} per GPU = {_i(tokens)} tokens")
    if seqs:
        ex.result(f"{_i(seqs)} concurrent sequences of {_i(ctx)} tokens")
    else:
        cap = _capacity(m, g, f, kv, n, ctx, gpu_util, activation_gib, reserve_gib, block_size, fe)
        ex.result(capacity_words(cap, ctx))
    lim = ("the model's `max_position_embeddings`" if limit == "max_position_embeddings" else "memory")
    ex.result(f"longest single sequence: {_i(max_ctx)} tokens (limited by {lim})")
    if ctx > m.max_position_embeddings:
        ex.note(f"The requested context exceeds the model's max_position_embeddings ({_i(m.max_position_embeddings)}).")
    if F.kv_layer_counts(m)[1] or F.kv_layer_counts(m)[2]:
        ex.note("Sliding-window and linear layers are capped per sequence, so tokens-per-budget is an uncapped "
                "lower bound.")
    ex.note(f"vLLM measures the activation peak with a profiling pass at start-up and, in {release('vllm')}, also "
            "subtracts an estimate of its CUDA graph memory; the allowances here stand in for both and are "
            "illustrative.")
    return ex.render()


@macro("block",
       example='hybrid_kv_capacity("gpt-oss-120b", "h100-sxm", fmt="bf16", expert_fmt="mxfp4", context="128K")')
def hybrid_kv_capacity(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 1, context: int = 8192,
                       kv_dtype: Format = "bf16", expert_fmt: Format | None = None,
                       max_num_batched_tokens: int = F.DEFAULT_MAX_NUM_BATCHED_TOKENS,
                       gpu_util: float = F.DEFAULT_GPU_UTILIZATION, activation_gib: float = 2.0,
                       reserve_gib: float = 1.0, block_size: int = F.DEFAULT_BLOCK_SIZE) -> str:
    """Worked example: vLLM 0.11's two start-up KV lines for a hybrid model, manager on and off.

    "GPU KV cache size" = KV budget / KV bytes per token of every caching layer; "Maximum concurrency"
    = KV budget / bytes planned per request (sliding layers keep `window − 1 + max_num_batched_tokens`
    tokens when the hybrid KV cache manager is on, every token when it is off).
    """
    m, g, kv, n, ctx = model, gpu, kv_dtype, n_gpus, context
    wtotal, shard, budget = _budget(m, g, fmt, kv, n, gpu_util, activation_gib, reserve_gib, expert_fmt)
    full, sliding, linear = F.kv_layer_counts(m)
    if not (sliding or linear):
        raise MacroInputError(f"hybrid_kv_capacity: {m.key} has neither sliding-window nor linear-attention "
                              "layers; use memory_budget")
    ex = Example(f"KV capacity of {m.name} on {n} × {g.name}, "
                 "vLLM 0.11 hybrid KV cache manager on and off")
    ex.formula("GPU KV cache size (tokens) = KV budget / (per-layer bytes × caching layers)")
    ex.formula("per request = per-layer bytes × block_size × (full × ceil(ctx/bs) + sliding × sliding_blocks)"
               " + linear × state")
    ex.formula("sliding_blocks = ceil(min(window − 1 + max_num_batched_tokens, ctx) / bs) + 1 (manager on); "
               "ceil(ctx / bs) (off)")
    ex.input("KV budget per GPU", U.fmt_gb(budget) if budget > 0 else "none",
             f"as in memory_budget: {_glink(g)}, {_mlink(m)}, gpu_util {_bits(gpu_util)}")
    ex.input("layers: full / sliding / linear", f"{full} / {sliding} / {linear}", _mlink(m))
    if sliding:
        ex.input("window", f"{_i(m.sliding_window.size)} tokens", _mlink(m))
    ex.input("`--max-num-batched-tokens`", _i(max_num_batched_tokens), "vLLM 0.11 default for the API server")
    ex.input("context per request (`--max-model-len`)", f"{_i(ctx)} tokens", GIVEN)
    ex.input(f"KV dtype ({kv.key}), block size", f"{_bytes_el(kv.bits_per_weight / 8)} bytes, {block_size} tokens",
             _flink(kv))
    if budget <= 0:
        cap = _capacity(m, g, fmt, kv, n, ctx, gpu_util, activation_gib, reserve_gib, block_size, expert_fmt)
        ex.result(does_not_load(cap))
        return ex.render()
    per_tok = F.kv_bytes_per_token(m, kv) * shard.kv_fraction
    tokens = F.kv_tokens_in_budget(budget, per_tok)
    on = F.kv_bytes_per_request_reserved(m, ctx, kv, block_size, max_num_batched_tokens, True, shard.kv_fraction)
    off = F.kv_bytes_per_request_reserved(m, ctx, kv, block_size, max_num_batched_tokens, False, shard.kv_fraction)
    ex.step(f"KV bytes per token, all caching layers, per GPU: {_i(per_tok)} → {_i(tokens)} tokens")
    ex.step(f"per request, manager on: {_i(on)} bytes; off: {_i(off)} bytes")
    ex.step(f"concurrency on: {_i(budget)} / {_i(on)} = {budget / on:.2f}; off: {budget / off:.2f}")
    ex.result(f"logged `GPU KV cache size`: {_i(tokens)} tokens")
    ex.result(f"`Maximum concurrency for {_i(ctx)} tokens per request`: {budget / on:.2f}x with the hybrid "
              f"manager, {budget / off:.2f}x with `--disable-hybrid-kv-cache-manager`")
    ex.note("The tokens line counts every caching layer for every token, so for a hybrid model it understates "
            "how much full-attention context fits; the concurrency line is the one to plan with.")
    if linear:
        ex.note("vLLM pads each linear-attention state page to the attention page size; ignored here.")
    return ex.render()


@macro("block", example='logged_startup("gpt-oss-120b", "h100-sxm", loading_gib=65.9651, kv_gib=-2.14, '
                         'log_gpu_util=0.9, source="https://github.com/vllm-project/vllm/issues/23278")')
def logged_startup(model: Model, gpu: Gpu, loading_gib: float, kv_gib: float, log_gpu_util: float, source: str,
                   max_model_len: int | None = None, gpu_util: float = F.DEFAULT_GPU_UTILIZATION,
                   mxfp4_backend: str = "triton") -> str:
    """Worked example: a published vLLM start-up log on one GPU, carried to the reference release's defaults.

    From the log ("Model loading took X GiB", "Available KV cache memory: Y GiB", at the log's
    `--gpu-memory-utilization` u): the engine's other non-KV memory = CUDA total × u − X − Y. At the
    reference release: KV = CUDA total × `gpu_util` − its weights for the shipped checkpoint
    (`loaded_weights`) − that other memory; vLLM starts only if one request of `max_model_len`
    (default: the model's maximum) fits, as its start-up check demands.
    """
    from .memory import _loaded

    m, g = model, gpu
    inputs.number("loading_gib", loading_gib)
    if isinstance(kv_gib, bool) or not isinstance(kv_gib, (int, float)):
        raise MacroInputError(f"logged_startup: kv_gib must be the logged number (may be negative), got {kv_gib!r}")
    if not 0 < inputs.number("log_gpu_util", log_gpu_util) <= 1:
        raise MacroInputError(f"logged_startup: log_gpu_util must be in (0, 1], got {log_gpu_util!r}")
    if not str(source).startswith("https://"):
        raise MacroInputError(f"logged_startup: source must be the log's https:// address, got {source!r}")
    ctx = inputs.tokens("max_model_len", max_model_len) if max_model_len else m.max_position_embeddings
    bf16 = inputs.kv_dtype("bf16")
    _, _, weights = _loaded(m, mxfp4_backend)
    total = g.engine_memory_bytes
    other = total * log_gpu_util - loading_gib * U.GiB - kv_gib * U.GiB
    kv = total * gpu_util - weights - other
    need = F.kv_bytes_per_request_reserved(m, ctx, bf16)
    ex = Example(f"{m.name} on one {g.name}: a logged start-up, then the reference release's defaults")
    ex.formula("other non-KV memory = CUDA total × u(log) − model loading(log) − available KV(log)")
    ex.formula("KV now = CUDA total × gpu_util − weights as loaded − other non-KV memory")
    ex.input("CUDA total", _gib(total), _glink(g))
    ex.input("logged: model loading / available KV / `--gpu-memory-utilization`",
             f"{_bits(loading_gib)} GiB / {_bits(kv_gib)} GiB / {_bits(log_gpu_util)}", f"[start-up log]({source})")
    ex.input("weights as vLLM loads them now", f"{_gib(weights)} (MXFP4 kernel `{mxfp4_backend}`)"
             if m.moe is not None else _gib(weights), "`loaded_weights`, checkpoints.yaml")
    ex.input("`--gpu-memory-utilization`, `--max-model-len`", f"{_bits(gpu_util)}, {_i(ctx)}",
             "reference-release default; the model's maximum")
    ex.step(f"other non-KV memory: {_gib(total)} × {_bits(log_gpu_util)} − {_bits(loading_gib)} GiB − "
            f"({_bits(kv_gib)} GiB) = {_gib(other)}")
    ex.step(f"KV now: {_gib(total)} × {_bits(gpu_util)} − {_gib(weights)} − {_gib(other)} = {_gib(kv)}")
    ex.step(f"one request of {_i(ctx)} tokens reserves {_gib(need)} of KV cache")
    if kv >= need:
        ex.result(f"starts: {_gib(kv)} of KV cache, {kv / need:.2f} requests of {_i(ctx)} tokens")
    elif kv <= 0:
        ex.result(f"does not start: the weights and the other non-KV memory take more than the "
                  f"{_gib(total * gpu_util)} the engine may use")
    else:
        fit, _ = F.max_context_one_sequence(m, kv, inputs.kv_dtype("bf16"),
                                            per_sequence=lambda c: F.kv_bytes_per_request_reserved(m, c, bf16))
        ex.result(f"does not start: one request of {_i(ctx)} tokens needs {_gib(need)}, {_gib(kv)} is left; "
                  f"`--max-model-len {fit}` or less would fit")
    ex.note("The other non-KV memory (activation peak of the profiling run, CUDA-graph and non-torch memory) is "
            "taken from the log and assumed unchanged at the reference release; it varies with release, "
            "`--max-num-batched-tokens` and CUDA-graph settings.")
    return ex.render()


@macro("inline", example='max_seqs("llama-3.1-70b", "h100-sxm", fmt="fp8", n_gpus=2)')
def max_seqs(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 1, context: int = 8192,
             kv_dtype: Format = "bf16", gpu_util: float = F.DEFAULT_GPU_UTILIZATION, activation_gib: float = 2.0,
             reserve_gib: float = 1.0, block_size: int = F.DEFAULT_BLOCK_SIZE, expert_fmt: Format | None = None) -> str:
    """Max concurrent sequences at ``context`` from the memory budget, e.g. '52'; never a bare 0: when
    the weights leave no KV budget, 'does not load: the weights need X per GPU, the engine may use Y';
    when one sequence is larger than the budget, 'one sequence of N tokens does not fit: ...'."""
    cap = _capacity(model, gpu, fmt, kv_dtype, n_gpus, context, gpu_util, activation_gib, reserve_gib, block_size,
                    expert_fmt)
    return capacity_words(cap, context)


@macro("inline", example='max_context("llama-3.1-70b", "h100-sxm", fmt="fp8", n_gpus=2)')
def max_context(model: Model, gpu: Gpu, fmt: Format = "bf16", n_gpus: int = 1, kv_dtype: Format = "bf16",
                gpu_util: float = F.DEFAULT_GPU_UTILIZATION, activation_gib: float = 2.0, reserve_gib: float = 1.0,
                block_size: int = F.DEFAULT_BLOCK_SIZE, expert_fmt: Format | None = None) -> str:
    """Longest single-sequence context from the memory budget, e.g. '131,072 tokens (model maximum)';
    'does not load: ...' (as ``max_seqs``) when the weights leave no KV budget."""
    cap = _capacity(model, gpu, fmt, kv_dtype, n_gpus, model.max_position_embeddings, gpu_util, activation_gib,
                    reserve_gib, block_size, expert_fmt)
    if not cap.loads:
        return does_not_load(cap)
    _, shard, budget = _budget(model, gpu, fmt, kv_dtype, n_gpus, gpu_util, activation_gib, reserve_gib, expert_fmt)
    tokens, limit = F.max_context_one_sequence(model, budget, kv_dtype, block_size, shard.kv_fraction)
    return f"{_i(tokens)} tokens" + (" (model maximum)" if limit == "max_position_embeddings" else "")


def _fit_cell(m: Model, g: Gpu, f: Format, kv: Format, n: int, context: int, gpu_util: float,
              activation_gib: float, reserve_gib: float, block_size: int) -> str:
    try:
        _, shard, budget = _budget(m, g, f, kv, n, gpu_util, activation_gib, reserve_gib, None)
    except MacroInputError:
        return "TP invalid"
    if budget <= 0:
        return f"✗ ({_n(U.bytes_to_gib(shard.weights_per_gpu))} GiB weights/GPU)"
    ctx = min(context, m.max_position_embeddings)
    per_seq = F.kv_bytes_per_sequence_paged(m, ctx, kv, block_size, shard.kv_fraction)
    seqs = F.max_concurrent_sequences(budget, per_seq)
    max_ctx, limit = F.max_context_one_sequence(m, budget, kv, block_size, shard.kv_fraction)
    ctx_txt = f"{_k(max_ctx)} ctx" + (" (max)" if limit == "max_position_embeddings" else "")
    if seqs == 0:
        return f"✓ {ctx_txt}; one seq @ {_k(ctx)} does not fit"
    return f"✓ {ctx_txt}; {_i(seqs)} seqs @ {_k(ctx)}"


FITS_ROW_REM = 3.4  # height of one what-fits row (cells wrap to two lines), for the placeholder


@macro("page", example='what_fits()')
def what_fits(context: int = 8192, kv_dtype: Format = "bf16", counts=(1, 2, 4, 8), fmts=REFERENCE_FORMATS,
              models=None, gpus=None, gpu_util: float = F.DEFAULT_GPU_UTILIZATION, activation_gib: float = 2.0,
              reserve_gib: float = 1.0, block_size: int = F.DEFAULT_BLOCK_SIZE, level: int = 2) -> str:
    """Reference page: model × GPU × GPU count × format -> fits?, max single-sequence context, max sequences.

    For docs/reference/what-fits.md: the stated assumptions, then per model (heading anchor `fits-<key>`)
    a table of GPU × GPU count × format with "✓ <longest context> ctx; <n> seqs @ 8K", "✗ (weights per
    GPU)" or "TP invalid". `models` / `gpus` restrict it to lists of keys.
    """
    cat = inputs.cat()
    ctx, kv, fobjs = context, kv_dtype, fmts
    mlist = models or list(cat.models.values())
    glist = gpus or list(cat.gpus.values())
    out = ["**Assumptions.** Tensor parallelism over all GPUs of one node (TP = GPU count); every weight "
           f"tensor in the column's format; KV cache in {catalog_link('format', kv.key, kv.name)}; "
           f"`--gpu-memory-utilization` {_bits(gpu_util)} of the memory CUDA reports (the GPU reference's "
           f"CUDA total); {_bits(activation_gib)} GiB activations and "
           f"{_bits(reserve_gib)} GiB runtime reserve per GPU; paged KV in blocks of {block_size} tokens. "
           "A cell shows the longest single sequence that fits (ctx; “(max)” = the model's trained maximum) and "
           f"how many sequences of {_k(ctx)} tokens (or the model's maximum, if shorter) fit at once. "
           "“one seq … does not fit” = the model loads but one sequence of that length is larger than the KV "
           "budget; “✗” = the weights alone leave no KV budget; “TP invalid” = the head counts do not divide by "
           "the GPU "
           "count. Weight-only storage is assumed possible in every format on every GPU (e.g. FP8 weights on "
           "A100 through weight-only kernels); speed is a separate question."]
    for m in mlist:
        head = ["| GPU | GPUs | " + " | ".join(catalog_link("format", f.key, f.key) for f in fobjs) + " |",
                "| --- | --- | " + " | ".join("---" for _ in fobjs) + " |"]
        for g in glist:
            for n in counts:
                cells = [_fit_cell(m, g, f, kv, n, ctx, gpu_util, activation_gib, reserve_gib, block_size)
                         for f in fobjs]
                head.append(f"| {catalog_link('gpu', g.key, g.name)} | {n} | " + " | ".join(cells) + " |")
        out.append(f"{'#' * level} {m.name} {{#fits-{m.key.replace('.', '-')}}}\n\n"
                   f"{_mlink(m)}: weights "
                   + ", ".join(f"{f.key} {U.fmt_gb(F.weight_bytes(m, f))}" for f in fobjs)
                   + f"; KV {U.fmt_bytes(F.kv_bytes_per_token(m, kv))} per token.\n\n"
                   # The cells are numbers: kept out of the search index, which the headings still reach.
                   # Rendered when near the viewport; the placeholder height follows the rows.
                   + deferred_block("\n".join(head), FITS_ROW_REM * (len(head) - 1), classes="fits-table",
                                    attrs=f'data-search-exclude="" data-model="{m.key}"'))
    return "\n\n".join(out)
