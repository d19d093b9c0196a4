"""Cache salting in a multi-tenant prefix cache (formulas: :mod:`macros.formulas.cachesalt`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Gpu, Model
from . import inputs
from .blocks import GIVEN, Example, _bits, _flink, _glink, _i, _mlink, _n
from .registry import macro


def _prefix_prefill_seconds(m: Model, g: Gpu, f: Format, tokens: int, mfu: float) -> float:
    """Compute-bound prefill time of the prefix alone (dense matmuls + causal attention), one GPU."""
    peak, _label = inputs.peak_flops(g, f)
    flops = F.prefill_matmul_flops(m, tokens, 0) + F.prefill_attention_flops(m, tokens)
    return F.prefill_time(flops, peak, mfu)


def _small(x: float) -> str:
    return "< 0.01" if 0 < x < 0.01 else _n(x)


@macro("block", example='salting_cost_table("llama-3.1-8b", "h100-sxm", prefix_tokens=2000, '
                        'requests_per_hour=36000, tenant_counts=[1, 10, 100, 1000], residency_s=300)')
def salting_cost_table(model: Model, gpu: Gpu, prefix_tokens: int = 2000, requests_per_hour: float = 36000,
                       tenant_counts: list | None = None, residency_s: float = 300, fmt: Format = "bf16",
                       kv_dtype: Format = "bf16", mfu: float = 0.5) -> str:
    """Worked example: what salting the prefix cache per tenant costs when every tenant sends the same prefix.

    Per tenant count N: the prefix's hit probability with one shared copy (`1 − exp(−λτ)`) and with one
    copy per tenant (`1 − exp(−λτ/N)`), the prefix tokens recomputed per hour because of salting
    (`R × P × (hit_shared − hit_salted)`), that prefill as GPU time at `mfu`, and the KV the resident
    copies hold (only full 16-token blocks are cached).
    """
    m, g, f, kv = model, gpu, fmt, kv_dtype
    p = inputs.count("prefix_tokens", prefix_tokens)
    rate_h = inputs.number("requests_per_hour", requests_per_hour)
    tau = inputs.number("residency_s", residency_s)
    counts = [inputs.count("tenant_counts", n) for n in (tenant_counts or [1, 10, 100, 1000])]
    mfu = inputs.number("mfu", mfu)
    cold_s = _prefix_prefill_seconds(m, g, f, p, mfu)
    cached_tokens = (p // F.DEFAULT_BLOCK_SIZE) * F.DEFAULT_BLOCK_SIZE
    copy_bytes = cached_tokens * F.kv_bytes_per_token(m, kv)
    pool = F.kv_budget_bytes(g.engine_memory_bytes, F.weight_bytes(m, f))

    ex = Example(f"one shared {_i(p)}-token prefix, salted per tenant, {m.name} on {g.name}")
    ex.formula("hit probability = 1 − exp(−λ × τ), λ = arrival rate of the requests that share one copy")
    ex.formula("prefix tokens recomputed per hour because of salting = R × P × (hit_shared − hit_salted)")
    ex.input("requests per hour R (all tenants, spread evenly)", _i(rate_h), GIVEN)
    ex.input("shared prefix P (system prompt, tool schemas)", f"{_i(p)} tokens", GIVEN)
    ex.input("residency τ after last use", U.fmt_seconds(tau), "assumption")
    ex.input("cold prefill of the prefix (compute-bound, MFU " + _bits(mfu) + ")", U.fmt_seconds(cold_s),
             f"{_mlink(m)}, {_glink(g)}, {_flink(f)}")
    ex.input("KV of one cached copy (full blocks only)",
             f"{_i(cached_tokens)} × {_i(F.kv_bytes_per_token(m, kv))} B = {U.fmt_gb(copy_bytes)}",
             f"{_mlink(m)}, {_flink(kv)}")
    ex.input("KV pool on one GPU (memory × " + _bits(F.DEFAULT_GPU_UTILIZATION) + " − weights − activation peak "
             f"{_bits(F.DEFAULT_ACTIVATION_BYTES / U.GiB)} GiB − CUDA graphs and runtime "
             f"{_bits(F.DEFAULT_RUNTIME_RESERVE_BYTES / U.GiB)} GiB)", U.fmt_gb(pool),
             f"{_glink(g)}, {_mlink(m)}; the two allowances are assumptions (vLLM measures both at start-up)")
    rows = ["| tenants N | requests per tenant per minute | hit, shared copy | hit, salted | "
            "prefix tokens recomputed per hour (extra) | extra prefill, GPU-seconds per hour | "
            "resident copies | their KV | share of the KV pool |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    last = None
    for n in counts:
        c = F.salting_cost(rate_h, n, p, tau)
        gpu_s = c.extra_prefill_tokens_per_h / p * cold_s
        rows.append(f"| {_i(n)} | {_n(rate_h / n / 60)} | {U.fmt_pct(c.hit_shared)} | {U.fmt_pct(c.hit_salted)} | "
                    f"{_i(round(c.extra_prefill_tokens_per_h))} | {_small(gpu_s)} | {_n(c.copies_salted)} | "
                    f"{U.fmt_gb(c.copies_salted * copy_bytes)} | {U.fmt_pct(c.copies_salted * copy_bytes / pool)} |")
        last = (n, c, gpu_s)
    ex.table("\n".join(rows))
    n, c, gpu_s = last
    ex.step(f"N = {_i(n)}: λτ = {_n(rate_h / 3600 * tau)} shared, {_n(rate_h / 3600 * tau / n)} per tenant; "
            f"extra = {_i(rate_h)} × {_i(p)} × ({U.fmt_pct(c.hit_shared)} − {U.fmt_pct(c.hit_salted)}) "
            f"= {_i(round(c.extra_prefill_tokens_per_h))} tokens per hour")
    ex.result(f"at {_i(n)} tenants, salting costs {_small(gpu_s)} GPU-seconds of prefill per hour "
              f"({U.fmt_pct(gpu_s / 3600)} of one GPU) and holds {_n(c.copies_salted)} copies of the prefix: "
              f"{U.fmt_pct(c.copies_salted * copy_bytes / pool)} of one GPU's KV pool")
    ex.note("Over 100% of the pool means the copies cannot all stay resident: the cache evicts them sooner, "
            "τ shrinks and the hit rate falls; rerun with a shorter τ.")
    ex.note("Poisson arrivals spread evenly over tenants, and a copy that lives exactly τ after its last use, "
            "are simplifications: skewed tenants keep their copies warmer, and cache pressure from other "
            "prompts shortens τ. Measure the real hit rate per salt before and after.")
    return ex.render()
