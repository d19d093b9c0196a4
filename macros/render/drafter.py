"""Living with a drafter: the acceptance it needs to pay for its memory and compute
(formulas: :mod:`macros.formulas.drafter`, :mod:`macros.formulas.specdec`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from ..formulas import overhead as O
from . import inputs
from .blocks import GIVEN, Example, _bits, _flink, _gib, _glink, _i, _mlink, _n
from .registry import macro


def _pct(x: float) -> str:
    return f"{x * 100:.1f} %"


def _full_layers(m: Model) -> int:
    layers, sliding, linear = F.kv_layer_counts(m)
    if sliding or linear:
        raise ValueError(f"drafter_payback: {m.key} has sliding-window or linear layers; the per-token KV "
                         "here assumes every layer caches every token")
    return layers


@macro("block", example='drafter_payback("deepseek-v3", "h200-sxm", n_gpus=8, fmt="fp8", '
                        'drafter_params=11.5e9, drafter_layers=1, draft_length=1, measured_acceptance=0.85)')
def drafter_payback(model: Model, gpu: Gpu, n_gpus: int = 1, fmt: Format = "bf16", kv_dtype: Format = "bf16",
                    draft_model: str | None = None, drafter_params: float = 0.0, drafter_layers: int = 1,
                    shares_embed_and_head: bool = True, draft_length: int = 1, verify_cost: float | None = None,
                    measured_acceptance: float = 0.8, drafter_active_params: float | None = None,
                    gpu_util: float = F.DEFAULT_GPU_UTILIZATION,
                    activation_gib: float = 2.0, reserve_gib: float = 1.0) -> str:
    """Worked example: the acceptance rate at which a drafter pays back its compute and its KV capacity.

    Either a separate `draft_model` (a catalog key: its parameters and its own KV per token), or a
    head or MTP module that adds `drafter_params` parameters of its own to GPU memory, with
    `drafter_layers` attention layers of the target's KV shape. With `shares_embed_and_head` it uses
    the target's embedding and LM head: they cost no memory, but every draft pass runs the head, so
    the head counts in the draft cost `c`. Drafter weights are split over the TP group in `fmt`.

    `c` is a ratio of parameters read per pass. By default it takes the drafter's parameters (plus the
    shared head) over the target's total: right for a dense target, and for an MoE target at a batch
    where a decode step already reads every expert; verification then costs `v` = 1 step unless
    `verify_cost` says otherwise. `drafter_active_params` (what one draft pass reads at batch one,
    counted with the shared embedding and head as DeepSeek states it) switches an MoE target to batch
    one: `c` is the drafter's active parameters less the embedding (a row lookup) over the target's
    active ones, and `v` is the weight bytes a step reads for γ + 1 tokens over those for one token
    (uniform routing; KV reads left out). The break-even rates solve `E(a, γ) / (γ c + v) = 1` and
    `= 1 / (1 − f)` for the capacity fraction `f` lost.
    """
    m, g, f, kv, n = model, gpu, fmt, kv_dtype, n_gpus
    inputs.check_tp(m, n)
    shard = F.tp_shard(m, n, f)
    budget = F.kv_budget_bytes(g.memory_bytes, shard.weights_per_gpu, gpu_util,
                               activation_gib * U.GiB, reserve_gib * U.GiB)
    if budget <= 0:
        raise ValueError(f"drafter_payback: {m.key} in {f.key} on {n} x {g.key} leaves no KV budget")
    layers = _full_layers(m)
    kv_tok = F.kv_bytes_per_token(m, kv) * shard.kv_fraction
    gl, a = draft_length, measured_acceptance
    small_batch = drafter_active_params is not None
    if small_batch and (draft_model is not None or not m.is_moe or m.stated_active_params is None):
        raise ValueError("drafter_payback: drafter_active_params is for a head or MTP module on an MoE target "
                         f"with stated active parameters; {m.key} with draft_model={draft_model!r} is not one")
    head = m.vocab_size * m.hidden_size  # one of the embedding table and the LM head
    if draft_model is not None:
        d = inputs.model(draft_model)
        _full_layers(d)
        inputs.check_tp(d, n)
        own = d.stated_total_params
        d_kv = F.kv_bytes_per_token(d, kv) * F.kv_fraction_per_gpu(d, n)
        what = f"{_mlink(d)} as draft model"
        kv_src = f"its own {d.num_hidden_layers} layers"
        read, read_text = own, U.fmt_params(own)
    else:
        own = inputs.number("drafter_params", drafter_params)
        d_kv = kv_tok * inputs.count("drafter_layers", drafter_layers) / layers
        what = f"a head or MTP module with {U.fmt_params(own)} parameters of its own"
        noun = "layer" if drafter_layers == 1 else "layers"
        kv_src = f"{drafter_layers} {noun} of the target's shape: × {drafter_layers} / {layers}"
        if small_batch:
            act = inputs.number("drafter_active_params", drafter_active_params)
            read = act - head if shares_embed_and_head else act
            if read <= 0:
                raise ValueError(f"drafter_payback: drafter_active_params {act:.4g} is not above the shared "
                                 f"embedding ({head:.4g})")
            read_text = (f"({U.fmt_params(act)} − {U.fmt_params(head)} embedding)" if shares_embed_and_head
                         else U.fmt_params(act))
        elif shares_embed_and_head:
            read = own + head
            read_text = f"({U.fmt_params(own)} + {U.fmt_params(head)} LM head)"
        else:
            read, read_text = own, U.fmt_params(own)
    d_bytes = F.bytes_for_params(own, F.bits_of(f)) / n
    cost = F.drafter_kv_cost(budget, kv_tok, d_bytes, d_kv)
    if small_batch:
        target_read = m.stated_active_params
        v = verify_cost if verify_cost is not None else (
            F.weight_bytes_read_per_step(m, f, gl + 1) / F.weight_bytes_read_per_step(m, f, 1))
        regime = "batch one: each pass reads only activated parameters"
    else:
        target_read = m.stated_total_params
        v = 1.0 if verify_cost is None else verify_cost
        regime = ("medium batch: a decode step already reads every expert" if m.is_moe
                  else "weight-bandwidth-bound decode")
    c = read / target_read
    a_even = F.breakeven_acceptance(gl, c, v, 1.0)
    a_pay = F.breakeven_acceptance(gl, c, v, cost.payback_speedup)
    e = F.expected_tokens_per_step(a, gl)
    s = O.speedup_with_verify_cost(e, gl, c, v)

    ex = Example(f"{what} for {m.name} on {n} × {g.name}" + (", batch one" if small_batch else ""))
    ex.formula("E = (1 − a^(γ+1)) / (1 − a); speed-up = E / (γ × c + v)")
    ex.formula("KV tokens = floor((KV budget − drafter weights) / (target KV per token + drafter KV per token))")
    ex.formula("pay-back speed-up = 1 / (1 − capacity fraction lost)")
    ex.input("target", f"{_mlink(m)} in {_flink(f)}, TP {n}, KV {kv.key}", "catalog")
    ex.input("GPU", _glink(g), "catalog")
    ex.input("drafter parameters in memory", U.fmt_params(own), "catalog" if draft_model else GIVEN)
    if draft_model is None and shares_embed_and_head:
        ex.input("shared with the target", f"embedding and LM head, {U.fmt_params(head)} each (vocab × hidden): "
                 "no memory; the head runs in every draft pass", "catalog")
    if small_batch:
        ex.input("drafter parameters read per pass at batch one", U.fmt_params(drafter_active_params), GIVEN)
    ex.input("draft length γ", str(gl), GIVEN)
    if small_batch and verify_cost is None:
        t1 = F.expected_experts_touched(m.moe.num_experts, m.moe.experts_per_token, 1)
        tv = F.expected_experts_touched(m.moe.num_experts, m.moe.experts_per_token, gl + 1)
        ex.step(f"verification cost v: routed experts read per MoE layer {_n(t1)} for one token, {_n(tv)} for "
                f"{gl + 1}; weight bytes read for {gl + 1} tokens over those for one: v = {_n(v)}")
    else:
        ex.input("verification cost v (target steps)", _bits(v), "assumption")
    ex.input("measured per-token acceptance a", _bits(a), GIVEN)
    ex.input("`--gpu-memory-utilization`, activations, reserve",
             f"{_bits(gpu_util)}, {_bits(activation_gib)} GiB, {_bits(reserve_gib)} GiB", "assumption")
    ex.step(f"KV budget per GPU: {_gib(budget)}; target KV per token per GPU {_i(round(kv_tok))} bytes "
            f"→ {_i(cost.tokens_without)} tokens without a drafter")
    ex.step(f"drafter weights per GPU: {U.fmt_params(own)} × {_bits(F.bits_of(f) / 8)} bytes / {n} = "
            f"{_gib(d_bytes)}; drafter KV per token per GPU {_i(round(d_kv))} bytes ({kv_src})")
    ex.step(f"KV tokens with the drafter: {_i(cost.tokens_with)}, {_pct(cost.fraction_lost)} fewer; "
            f"pay-back speed-up 1 / (1 − {_n(cost.fraction_lost)}) = {_n(cost.payback_speedup)}")
    ex.step(f"draft cost c = {read_text} / {U.fmt_params(target_read)} = {_n(c)} of a target step ({regime})")

    def _rate(x: float | None) -> str:
        if x is None:
            return "unreachable at any acceptance"
        return f"a = {_n(x)} (engine's accepted / drafted = {_n((F.expected_tokens_per_step(x, gl) - 1) / gl)})"

    ex.step(f"break-even on compute, speed-up 1: {_rate(a_even)}")
    ex.step(f"break-even on compute and capacity, speed-up {_n(cost.payback_speedup)}: {_rate(a_pay)}")
    ex.step(f"at the measured a = {_bits(a)}: E = {_n(e)} tokens per step, speed-up "
            f"{_n(e)} / ({gl} × {_n(c)} + {_n(v)}) = {_n(s)}")
    if small_batch:
        verdict = "pays for its compute" if a_even is not None and a >= a_even else "does not pay for its compute"
        ex.result(f"at batch one the drafter {verdict} at a = {_bits(a)} (speed-up {_n(s)} against 1); KV capacity "
                  f"rarely binds at batch one, so the {_n(cost.payback_speedup)} pay-back is the bound only once "
                  "the batch grows")
    else:
        verdict = "pays for itself" if a_pay is not None and a >= a_pay else "does not pay for itself"
        ex.result(f"the drafter costs {_pct(cost.fraction_lost)} of the KV tokens and {verdict} at a = {_bits(a)} "
                  f"(speed-up {_n(s)} against the {_n(cost.payback_speedup)} it must reach)")
    ex.note("Leviathan et al. 2023 (arXiv:2211.17192) for E and the speed-up; i.i.d. acceptance; drafter "
            "weights split over the TP group like the target's; c from parameter counts ignores the fixed "
            "per-pass overhead that makes small drafters slower than their size; the pay-back bound applies "
            "when throughput is capped by KV capacity; at large batch verification costs more than one step "
            "(v > 1), which raises both break-even rates.")
    return ex.render()


@macro("inline", example='breakeven_rate(3, 0.05, 1.0, 1.5)')
def breakeven_rate(draft_length: int, draft_cost: float, verify_cost: float = 1.0,
                   target_speedup: float = 1.0) -> str:
    """The per-token acceptance rate a drafter needs for a target speed-up, e.g. '0.443', or 'unreachable'."""
    x = F.breakeven_acceptance(draft_length, draft_cost, verify_cost, target_speedup)
    return "unreachable" if x is None else _n(x)


@macro("inline", example='rate_from_mean_length(2.8, 3)')
def rate_from_mean_length(mean_acceptance_length: float, draft_length: int) -> str:
    """The i.i.d. per-token acceptance rate behind a measured mean acceptance length, e.g. '0.765'."""
    return _n(F.mean_acceptance_to_rate(mean_acceptance_length, draft_length))


@macro("inline", example='engine_draft_acceptance(2.8, 3)')
def engine_draft_acceptance(mean_acceptance_length: float, draft_length: int) -> str:
    """What vLLM's 'draft acceptance rate' (accepted / drafted tokens) reads for a mean acceptance length,
    ``(E − 1) / γ`` as a percentage, e.g. '60.0 %'."""
    inputs.number("mean_acceptance_length", mean_acceptance_length)
    g = inputs.count("draft_length", draft_length)
    return _pct((mean_acceptance_length - 1) / g)
