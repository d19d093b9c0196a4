"""Tuning against published targets: can any scheduler setting meet them (formulas:
:mod:`macros.formulas.tuning`, :mod:`macros.formulas.speed`, :mod:`macros.formulas.memory`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from .blocks import GIVEN, Example, _flink, _glink, _i, _mlink
from .budget import _budget
from .registry import _POSITIVE, macro
from .speed import _decode


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


@macro("block", args={"tpot_ms": _POSITIVE, "throughput_tps": _POSITIVE},
       example='tuning_check("llama-3.1-8b", "h100-sxm", tpot_ms=25, throughput_tps=3000, context="4K")')
def tuning_check(model: Model, gpu: Gpu, tpot_ms: float, throughput_tps: float, fmt: Format = "bf16",
                 n_gpus: int = 1, context: int = 4096, kv_dtype: Format = "bf16",
                 gpu_util: float = F.DEFAULT_GPU_UTILIZATION) -> str:
    """Worked example: do a TPOT target and an aggregate output-throughput target admit any batch size?

    Required concurrency = ceil(throughput × TPOT) (Little's law over decoding sequences); the TPOT
    ceiling is the largest batch whose decode bandwidth bound (as in `decode_speed`) is within TPOT;
    the KV ceiling is the concurrent sequences at `context` from the memory budget (as in `max_seqs`).
    Feasible only if the required concurrency is at most both ceilings.
    """
    m, g, f, kv, n, ctx = model, gpu, fmt, kv_dtype, n_gpus, context
    tpot = tpot_ms / 1000
    need = F.concurrency_for_target(throughput_tps, tpot)
    _, shard, budget = _budget(m, g, f, kv, n, gpu_util, 2.0, 1.0, None)
    per_seq = F.kv_bytes_per_sequence_paged(m, ctx, kv, F.DEFAULT_BLOCK_SIZE, shard.kv_fraction)
    kv_cap = F.max_concurrent_sequences(budget, per_seq)

    def step(b: int) -> float:
        return _decode(m, g, f, None, kv, n, b, ctx)[0].step_time_s

    limit = max(need, kv_cap, 1) * 4
    tpot_cap = F.tpot_batch_limit(step, tpot, limit)
    ceiling = min(tpot_cap, kv_cap)
    ex = Example(f"targets for {m.name} ({f.name}) on {n} × {g.name} at {_i(ctx)} tokens per sequence")
    ex.formula("required concurrency = ceil(throughput target × TPOT target)")
    ex.formula("TPOT ceiling = largest batch with (weights read + batch × KV per sequence) / bandwidth ≤ TPOT")
    ex.formula("KV ceiling = floor(KV budget / KV bytes per sequence)")
    ex.input("TPOT target", f"{tpot_ms:g} ms", GIVEN)
    ex.input("aggregate output throughput target", U.fmt_rate(throughput_tps), GIVEN)
    ex.input("model / format / GPU", f"{_mlink(m)} / {_flink(f)} / {_glink(g)}", "catalog")
    ex.input("GPUs (TP) / context / `--gpu-memory-utilization`", f"{n} / {_i(ctx)} / {gpu_util:g}", GIVEN)
    ex.step(f"required concurrency: ceil({U.fmt_num(throughput_tps)} × {tpot:g} s) = {_i(need)} sequences")
    if tpot_cap:
        ex.step(f"TPOT ceiling: batch {_i(tpot_cap)} has a bound step of {_ms(step(tpot_cap))}; "
                f"batch {_i(tpot_cap + 1)} has {_ms(step(tpot_cap + 1))}")
    else:
        ex.step(f"TPOT ceiling: none; even batch 1 has a bound step of {_ms(step(1))}")
    ex.step(f"KV ceiling: {U.fmt_gb(budget)} / {U.fmt_gb(per_seq)} per sequence = {_i(kv_cap)} sequences")
    if ceiling >= need and ceiling > 0:
        ex.result(f"feasible under the bound: {_i(need)} sequences needed, at most {_i(ceiling)} allowed; "
                  f"the bound at {_i(need)} gives {U.fmt_rate(need / step(need))} aggregate")
    else:
        best = U.fmt_rate(ceiling / step(ceiling)) if ceiling else "nothing"
        which = "TPOT" if tpot_cap < kv_cap else "KV"
        ex.result(f"infeasible: {_i(need)} sequences needed, the {which} ceiling allows {_i(ceiling)}; the bound "
                  f"at the ceiling is {best} aggregate, so no scheduler flag meets both targets")
    ex.note("The bound assumes peak memory bandwidth and no prefill in the step; measured steps are slower, so "
            "a target that is feasible here can still fail, but one that is infeasible here cannot be met by "
            "scheduler settings. Activation and runtime reserve as in `memory_budget`.")
    return ex.render()
