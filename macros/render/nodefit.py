"""A hybrid, mixed-format model on one multi-GPU node: weights by component against the node's memory,
then the KV budget with the full-attention cache and the linear-attention states counted apart
(formulas: :mod:`macros.formulas.hybridmoe`, :mod:`macros.formulas.memory`, :mod:`macros.formulas.parallel`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _bytes_el, _flink, _gib, _glink, _i, _mlink
from .registry import macro


@macro("block", example='node_fit("kimi-k3", "b300", n_gpus=8, fmt="bf16", expert_fmt="mxfp4", context="128K")')
def node_fit(model: Model, gpu: Gpu, n_gpus: int = 8, fmt: Format = "bf16", expert_fmt: Format | None = None,
             context: int = 131072, kv_dtype: Format = "bf16", gpu_util: float = F.DEFAULT_GPU_UTILIZATION,
             activation_gib: float = 2.0, reserve_gib: float = 1.0,
             block_size: int = F.DEFAULT_BLOCK_SIZE) -> str:
    """Worked example: a hybrid model's weights by component on one node, and the room left for KV.

    Weights = routed experts × bits(expert_fmt)/8 + embeddings and the rest × bits(fmt)/8, against
    `n_gpus` × GPU memory; per GPU at TP `n_gpus` (replicated tensors included); KV budget per GPU;
    per sequence, the full-attention cache (whole blocks; MLA latent on every GPU) plus the
    linear-attention states (split by TP for KDA); concurrent sequences at `context`.
    """
    m, g, f, fe, kv, n, ctx = model, gpu, fmt, expert_fmt, kv_dtype, n_gpus, context
    if m.linear_attention is None:
        raise MacroInputError(f"node_fit: {m.key} has no linear-attention layers; use memory_budget")
    inputs.check_tp(m, n)
    w = F.weight_bytes_breakdown(m, f, fe)
    shard = F.tp_shard(m, n, f, fe)
    node = g.engine_memory_bytes * n
    ex = Example(f"{m.name} on one node of {n} × {g.name}")
    ex.formula("weights = experts × bits(expert format)/8 + embeddings × bits/8 + rest × bits/8")
    ex.formula("KV budget per GPU = memory × gpu_util − weights per GPU − activations − runtime reserve")
    ex.formula("per sequence per GPU = full layers × per-layer KV × ceil(ctx / block) × block + "
               "linear layers × state / TP")
    ex.input("GPU memory (CUDA total, per GPU)", U.fmt_gb(g.engine_memory_bytes), _glink(g))
    ex.input("GPUs in the node (= TP degree)", str(n), GIVEN)
    ex.input("formats: routed experts / rest", f"{(fe or f).key} ({_bits((fe or f).bits_per_weight)} bits) / "
             f"{f.key} ({_bits(f.bits_per_weight)} bits)", f"{_flink(fe or f)}, {_flink(f)}")
    full, _, linear = F.kv_layer_counts(m)
    ex.input("layers: full-attention / linear (constant state)", f"{full} / {linear}", _mlink(m))
    ex.input("state per linear layer per sequence", U.fmt_bytes(m.linear_attention.state_bytes_per_layer), _mlink(m))
    ex.input("`--gpu-memory-utilization`; activations / reserve per GPU",
             f"{_bits(gpu_util)}; {_bits(activation_gib)} GiB / {_bits(reserve_gib)} GiB", "assumption")
    ex.input(f"KV dtype ({kv.key}), block size", f"{_bytes_el(kv.bits_per_weight / 8)} bytes, {block_size} tokens",
             _flink(kv))
    ex.input("context per sequence", f"{_i(ctx)} tokens", GIVEN)
    ex.step(f"routed experts: {U.fmt_gb(w.routed_experts)}; embedding + lm_head: {U.fmt_gb(w.embeddings)}; "
            f"everything else: {U.fmt_gb(w.rest)}")
    ex.step(f"weights: {U.fmt_gb(w.total)} against {n} × {U.fmt_gb(g.engine_memory_bytes)} = {U.fmt_gb(node)} "
            f"({U.fmt_pct(w.total / node)} of the node)")
    usable = g.engine_memory_bytes * gpu_util
    budget = F.kv_budget_bytes(g.engine_memory_bytes, shard.weights_per_gpu, gpu_util,
                               activation_gib * U.GiB, reserve_gib * U.GiB)
    ex.step(f"weights per GPU: {_gib(w.total)} / {n} + {U.fmt_bytes(shard.replicated_extra_bytes)} replicated "
            f"= {_gib(shard.weights_per_gpu)}")
    ex.step(f"KV budget per GPU: {_gib(usable)} − {_gib(shard.weights_per_gpu)} − {_bits(activation_gib)} GiB − "
            f"{_bits(reserve_gib)} GiB = {_gib(budget)}")
    if budget <= 0:
        ex.result(f"does not fit: {U.fmt_gb(w.total)} of weights leave no KV room on {n} × {g.name} "
                  f"(short by {U.fmt_gb(-budget)} per GPU)")
        return ex.render()
    seq = F.hybrid_sequence_bytes_per_gpu(m, ctx, kv, n, block_size)
    per_tok = F.kv_bytes_per_token(m, kv) * F.kv_fraction_per_gpu(m, n)
    ex.step(f"KV per token per GPU: {_i(per_tok)} bytes ({full} layers)")
    ex.step(f"one sequence per GPU: cache {U.fmt_bytes(seq.cache_bytes)} + states {U.fmt_bytes(seq.state_bytes)} "
            f"= {U.fmt_bytes(seq.total)}")
    seqs = F.max_concurrent_sequences(budget, seq.total)
    ex.step(f"sequences: floor({_i(budget)} / {_i(seq.total)}) = {_i(seqs)}")
    ex.result(f"weights {U.fmt_gb(w.total)} fit in {U.fmt_gb(node)}; {U.fmt_gb(budget)} per GPU is left for KV "
              f"({U.fmt_gb(budget * n)} across the node)")
    ex.result(f"{_i(F.kv_tokens_in_budget(budget, per_tok))} tokens of full-attention cache per GPU if no state "
              f"were held; {_i(seqs)} concurrent sequences of {_i(ctx)} tokens")
    ex.note("Weights per GPU assume an even split of experts and attention across the node plus the tensors "
            "vLLM 0.33 replicates (MLA down-projections, router, norms, latent-MoE projections, the KDA "
            "decay gate's first factor). vLLM measures "
            "activations with a profiling pass; the allowances here are illustrative.")
    return ex.render()


@macro("inline", example='measured_vs_bound("kimi-k3", "b300", tpot_ms=8.51, fmt="bf16", expert_fmt="mxfp4", '
                         'n_gpus=8, context="8K")')
def measured_vs_bound(model: Model, gpu: Gpu, tpot_ms: float, fmt: Format = "bf16", n_gpus: int = 1,
                      context: int = 8192, kv_dtype: Format = "bf16", expert_fmt: Format | None = None) -> str:
    """A measured batch-1 time per output token against the decode bound, e.g. '8.51 ms per token
    (117.5 tokens/s), 57.7% of the bound'. The measurement is an input from a cited benchmark."""
    from .speed import _decode

    if not isinstance(tpot_ms, (int, float)) or isinstance(tpot_ms, bool) or tpot_ms <= 0:
        raise MacroInputError(f"measured_vs_bound: tpot_ms must be a positive number of milliseconds, got {tpot_ms!r}")
    bound = _decode(model, gpu, fmt, expert_fmt, kv_dtype, n_gpus, 1, context)[0]
    measured = 1000 / tpot_ms
    return (f"{_bits(tpot_ms)} ms per token ({U.fmt_rate(measured)}), "
            f"{U.fmt_pct(measured / bound.tokens_per_s_per_sequence)} of the bound")
