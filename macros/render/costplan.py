"""Capacity plans, the self-host vs API cost curve (an inline SVG chart), LoRA slots on a GPU
(formulas: :mod:`macros.formulas.costplan`)."""

from __future__ import annotations


from .. import formulas as F
from .. import units as U
from ..catalog import ApiPrice, Format, Gpu, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _bits, _esc, _flink, _glink, _i, _mlink, _n, catalog_link
from .registry import _POSITIVE, COUNT, Arg, macro

_MONTH_S = F.SECONDS_PER_MONTH


def _price_src(p) -> str:
    return catalog_link("price", p.key, f"{p.key}, as of {inputs.cat().prices.as_of} (illustrative)")


@macro("inline", example="prices_as_of()")
def prices_as_of() -> str:
    """The date of the price catalog (prices.yaml `as_of`), e.g. '2026-11-30'."""
    return str(inputs.cat().prices.as_of)


@macro("block", example='capacity_plan("h100-sxm", peak_rps=40, input_tokens=1500, output_tokens=400, '
                        'latency_s=8.5, per_replica_tps=2800, n_gpus=4)',
       args={"peak_rps": _POSITIVE, "output_tokens": _POSITIVE, "latency_s": _POSITIVE,
             "per_replica_tps": _POSITIVE})
def capacity_plan(gpu: Gpu, peak_rps: float, input_tokens: float, output_tokens: float, latency_s: float,
                  per_replica_tps: float, n_gpus: int = 1, target_util: float = 0.7, redundancy: int = 1,
                  average_to_peak: float = 0.5) -> str:
    """Worked example: the six capacity steps, from a traffic profile to GPUs and $ per million tokens.

    Profile → peak token demand → concurrency (Little's law) → measured per-replica output tokens/s
    at the SLO → replicas with headroom and redundancy → monthly cost and $/M tokens at the month's
    average load, beside the busy-replica figure. `n_gpus` is GPUs per replica.
    """
    g, n = gpu, n_gpus
    p = inputs.gpu_price_of(g)
    plan = F.capacity_plan(peak_rps=peak_rps, input_tokens=input_tokens, output_tokens=output_tokens,
                           latency_s=latency_s, per_replica_output_tps=per_replica_tps, gpus_per_replica=n,
                           usd_per_gpu_hour=p.usd_per_hour, target_utilization=target_util,
                           redundancy=redundancy, average_to_peak=average_to_peak)
    ex = Example(f"capacity plan on {g.name}, {n} GPU{'s' if n > 1 else ''} per replica")
    ex.formula("replicas = ceil(peak output tokens/s / (measured tokens/s per replica × target utilization)) "
               "+ redundancy")
    ex.formula("$/M tokens = GPUs × $/GPU-hour × 730 h / (average tokens/s × 3600 × 730) × 10^6")
    ex.input("1. peak requests/s", _n(peak_rps), GIVEN)
    ex.input("1. mean input / output tokens per request", f"{_n(input_tokens)} / {_n(output_tokens)}", GIVEN)
    ex.input("1. month's average load / peak", _bits(average_to_peak), "from the traffic history")
    ex.input("3. end-to-end seconds per request at peak", U.fmt_seconds(latency_s), "TTFT + output × TPOT")
    ex.input("4. output tokens/s per replica at the SLO", _n(per_replica_tps), "load test (measured)")
    ex.input("5. target utilization / redundancy", f"{_bits(target_util)} / {redundancy}", "assumption")
    ex.input("6. price per GPU-hour", U.fmt_usd(p.usd_per_hour), _price_src(p))
    ex.step(f"2. peak demand: {_n(peak_rps)} × {_n(input_tokens)} = {_n(plan.peak_input_tps)} input tokens/s; "
            f"{_n(peak_rps)} × {_n(output_tokens)} = {_n(plan.peak_output_tps)} output tokens/s")
    ex.step(f"3. in flight at peak: {_n(peak_rps)} /s × {_n(latency_s)} s = {_n(plan.concurrency)} requests "
            f"(check against the KV pool of the replicas)")
    ex.step(f"5. ceil({_n(plan.peak_output_tps)} / ({_n(per_replica_tps)} × {_bits(target_util)})) = "
            f"{plan.base_replicas}; + {redundancy} = {plan.replicas} replicas × {n} = {plan.gpus} GPUs")
    ex.step(f"6. monthly: {plan.gpus} × {U.fmt_usd(p.usd_per_hour)} × 730 = {U.fmt_usd(plan.monthly_usd)}")
    ex.step(f"6. tokens served: ({_n(plan.peak_input_tps)} + {_n(plan.peak_output_tps)}) × "
            f"{_bits(average_to_peak)} × 3600 × 730 = {_n(plan.monthly_tokens / 1e9)} billion a month")
    ex.step(f"6. {U.fmt_usd(plan.monthly_usd)} / {_n(plan.monthly_tokens / 1e6)} M = "
            f"{U.fmt_usd(plan.usd_per_million)} per million tokens (input + output)")
    ex.result(f"{plan.replicas} replicas, {plan.gpus} GPUs, {U.fmt_usd(plan.monthly_usd)} a month")
    ex.result(f"{U.fmt_usd(plan.usd_per_million)} per million tokens at a fleet utilization of "
              f"{U.fmt_pct(plan.fleet_utilization)} (average output tokens/s over the fleet's measured capacity)")
    ex.result(f"the same fleet at full measured capacity all month: {U.fmt_usd(plan.busy_usd_per_million)} "
              f"per million; the gap is the utilization term")
    ex.note("Input and output tokens are counted together at the traffic's mix; the measured replica rate "
            "already includes the prefill of the inputs. 730 h = 8,760 h / 12. "
            + _esc(inputs.cat().prices.disclaimer))
    return ex.render()


# --- the cost curve chart ---------------------------------------------------------------------------

@macro("block", example='adapter_budget("llama-3.1-8b", "h100-sxm", rank=16, max_loras=8, context="8K")',
       args={"max_loras": COUNT})
def adapter_budget(model: Model, gpu: Gpu, fmt: Format = "bf16", rank: int = 16, max_loras: int = 4,
                   context: int = 8192, kv_dtype: Format = "bf16", dtype: Format = "bf16",
                   gpu_util: float = F.DEFAULT_GPU_UTILIZATION, activation_gib: float = 2.0,
                   reserve_gib: float = 1.0) -> str:
    """Worked example: GPU memory vLLM reserves for `max_loras` LoRA slots at `max_lora_rank`, and the KV it costs.

    One GPU, dense model. Each slot covers every linear layer of the transformer blocks at `rank`
    (vLLM 0.11 `create_lora_weights`), whatever the adapters target; embedding and LM-head slots are
    extra (not counted). The slots come out of the KV pool.
    """
    m, g, f = model, gpu, fmt
    if rank not in (8, 16, 32, 64, 128, 256, 320, 512):
        raise MacroInputError(f"rank (vLLM --max-lora-rank) must be one of 8, 16, 32, 64, 128, 256, 320, 512; "
                              f"got {rank}")
    slot_params = F.lora_slot_params(m, rank)
    eb = dtype.bits_per_weight / 8
    slot_bytes = F.lora_adapter_bytes(slot_params, eb)
    total = slot_bytes * max_loras
    weights = F.weight_bytes(m, f)
    budget = F.kv_budget_bytes(g.engine_memory_bytes, weights, gpu_util, activation_gib * U.GiB, reserve_gib * U.GiB)
    if budget <= 0:
        raise MacroInputError(f"{m.key} in {f.key} leaves no KV budget on one {g.key}")
    per_seq = F.kv_bytes_per_sequence_paged(m, context, kv_dtype)
    seqs_before = F.max_concurrent_sequences(budget, per_seq)
    seqs_after = F.max_concurrent_sequences(budget - total, per_seq)
    ex = Example(f"{max_loras} LoRA slots at rank {rank} on {m.name}, one {g.name}")
    ex.formula("slot params = layers × Σ over q, k, v, o, gate, up, down of max_lora_rank × (d_in + d_out)")
    ex.formula("KV budget = memory × gpu_util − weights − activations − reserve − max_loras × slot bytes")
    ex.input("`--max-lora-rank` / `--max-loras`", f"{rank} / {max_loras}", GIVEN)
    ex.input("model shapes, `num_hidden_layers`", _i(m.num_hidden_layers), _mlink(m))
    ex.input(f"bytes per adapter element ({dtype.key})", _n(eb), _flink(dtype))
    ex.input("base weights", f"{U.fmt_gb(F.weight_bytes(m, f))} in {f.key}", f"{_mlink(m)}, {_flink(f)}")
    ex.input("GPU memory (CUDA total), `--gpu-memory-utilization`",
             f"{U.fmt_gb(g.engine_memory_bytes)}, {_bits(gpu_util)}", _glink(g))
    ex.step(f"one slot: {_i(slot_params)} parameters × {_n(eb)} bytes = {U.fmt_bytes(slot_bytes)}")
    ex.step(f"{max_loras} slots: {U.fmt_bytes(total)}, against {U.fmt_gb(weights)} of base weights "
            f"({U.fmt_pct(total / weights)})")
    if budget - total <= 0:
        ex.step(f"KV budget {U.fmt_gb(budget)} − {U.fmt_gb(total)} ≤ 0: no room left for the KV cache")
        ex.result("the slots do not fit: the engine has no memory for KV blocks and refuses to start; "
                  "lower `--max-loras` or `--max-lora-rank`")
        return ex.render()
    ex.step(f"KV budget {U.fmt_gb(budget)} → {U.fmt_gb(budget - total)}; sequences of {_i(context)} tokens: "
            f"{seqs_before} → {seqs_after}")
    ex.result(f"{U.fmt_bytes(total)} of slots for {max_loras} adapters in one batch; "
              f"{seqs_before - seqs_after} fewer concurrent {_i(context)}-token sequences")
    ex.note("Adapters beyond `--max-loras` wait in host memory (`--max-cpu-loras`) or on disk; a lower bound: "
            "embedding and LM-head slots are not counted.")
    return ex.render()


# --- resident or on demand -------------------------------------------------------------------------

def _share(x: float) -> str:
    return "< 0.01%" if x < 1e-4 else ("> 99.99%" if x > 1 - 1e-4 else U.fmt_pct(x))


def _gpus_for(weights: float, g: Gpu, weight_share: float) -> int:
    """GPUs (1, 2, 4 or 8) so that the weights take at most ``weight_share`` of each GPU's memory."""
    for n in (1, 2, 4, 8):
        if weights / n <= g.engine_memory_bytes * weight_share:
            return n
    raise MacroInputError(f"weights of {U.fmt_gb(weights)} need more than 8 × {g.key} at weight_share "
                          f"{weight_share}")


@macro("block", example='residency_table("h100-sxm", models=["llama-3.1-8b", "llama-3.1-70b"], '
                        'fmts=["bf16", "fp8"], rates_per_hour=[600, 4], storage_gb_per_s=2, keep_warm_s=900)',
       args={"rates_per_hour": Arg(lambda _n, v: [inputs.number("rates_per_hour", x, positive=False) for x in v],
                                   "list of request rates per hour", ">= 0 each"),
             "storage_gb_per_s": _POSITIVE, "keep_warm_s": _POSITIVE})
def residency_table(gpu: Gpu, models: list, fmts: list, rates_per_hour: list, storage_gb_per_s: float,
                    keep_warm_s: float = 900.0, weight_share: float = 0.6, pin_above: float = 0.9) -> str:
    """Worked example: which models stay resident and which load on demand, from traffic and load time.

    Per model: weights, GPUs (weights at most `weight_share` of each GPU), load time = weights /
    `storage_gb_per_s`, and with Poisson arrivals and an idle timeout of `keep_warm_s`, the share of
    requests that hit a cold start (`e^(−λT)`) and the share of time the model would be loaded anyway
    (`1 − e^(−λT)`). Pinned resident when that share is at least `pin_above`.
    """
    if not (len(models) == len(fmts) == len(rates_per_hour)) or not models:
        raise MacroInputError("residency_table needs models, fmts and rates_per_hour of the same non-zero length")
    if not 0 < weight_share <= 1 or not 0 < pin_above <= 1:
        raise MacroInputError("weight_share and pin_above must be in (0, 1]")
    g, bw = gpu, storage_gb_per_s * 1e9
    ex = Example(f"resident or on demand on {g.name}, idle timeout {U.fmt_seconds(keep_warm_s)}")
    ex.formula("load time = weight bytes / storage bandwidth")
    ex.formula("cold-start share of requests = e^(−λT); share of time loaded = 1 − e^(−λT)  (λ: requests/s, "
               "T: idle timeout)")
    ex.input("storage → GPU bandwidth", U.fmt_bandwidth(bw), GIVEN)
    ex.input("idle timeout T", U.fmt_seconds(keep_warm_s), "assumption")
    ex.input("GPU memory (CUDA total); weights at most",
             f"{U.fmt_gb(g.engine_memory_bytes)}; {_bits(weight_share)} of it", _glink(g))
    rows = ["| Model | Weights | GPUs | Load time | Requests/h | Cold starts | Loaded | Decision |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    resident_gpus = 0
    for m, f, rate in zip(models, fmts, rates_per_hour):
        w = F.weight_bytes(m, f)
        n = _gpus_for(w, g, weight_share)
        t = F.model_load_time(w, bw)
        cold, loaded = F.keep_warm_tradeoff(rate, keep_warm_s)
        pin = loaded >= pin_above
        resident_gpus += n if pin else 0
        rows.append(f"| {_mlink(m)} ({f.key}) | {U.fmt_gb(w)} | {n} | {U.fmt_seconds(t)} | {_n(rate)} | "
                    f"{_share(cold)} | {_share(loaded)} | "
                    f"{'resident' if pin else 'on demand'} |")
    ex.table("\n".join(rows))
    ex.result(f"resident models hold {resident_gpus} GPUs around the clock; the rest share a pool and pay "
              f"their load time on the cold-start share of their requests")
    ex.note(f"Poisson arrivals; a model is pinned when it would be loaded at least {U.fmt_pct(pin_above)} of "
            "the time anyway. Load time covers the weight stream only (no engine start, compilation or "
            "CUDA graphs).")
    return ex.render()


# --- routing cascade -------------------------------------------------------------------------------

_API_ARG = Arg(lambda _n, v: inputs.api(v), "hosted-API price key", "an `api` entry of prices.yaml")


@macro("block", example='cascade("llama-3.1-8b-hosted", "deepseek-v3-hosted", input_tokens=1500, output_tokens=300, '
                        'escalation_rate=0.3, kept_accuracy=0.9, escalated_accuracy=0.85, quality_floor=0.87)',
       args={"small": _API_ARG, "large": _API_ARG, "input_tokens": _POSITIVE, "output_tokens": _POSITIVE})
def cascade(small: ApiPrice, large: ApiPrice, input_tokens: float, output_tokens: float, escalation_rate: float,
            kept_accuracy: float, escalated_accuracy: float, quality_floor: float, router_usd: float = 0.0) -> str:
    """Worked example: blended cost and accuracy of a small-then-large cascade against a quality floor.

    Per request: small = in × in price + out × out price (catalog API prices), the same for large;
    cascade = small + escalation rate × large (+ router); accuracy = (1 − d) × kept + d × escalated;
    the escalation rate above which the cascade stops saving.
    """
    for name, v in (("escalation_rate", escalation_rate), ("kept_accuracy", kept_accuracy),
                    ("escalated_accuracy", escalated_accuracy), ("quality_floor", quality_floor)):
        if not 0 <= v <= 1:
            raise MacroInputError(f"{name} must be in [0, 1], got {v}")

    def per_request(a: ApiPrice) -> float:
        return (input_tokens * a.usd_per_m_input + output_tokens * a.usd_per_m_output) / 1e6

    cs, cl = per_request(small), per_request(large)
    d = escalation_rate
    cost = F.cascade_cost(cs, cl, d, router_usd)
    q = F.cascade_quality(kept_accuracy, escalated_accuracy, d)
    d_max = F.cascade_breakeven_escalation(cs, cl, router_usd)
    ex = Example("cascade: small model first, escalate a share to the large model")
    ex.formula("cost per request = small + escalation rate × large + router")
    ex.formula("accuracy = (1 − escalation rate) × accuracy of kept answers + escalation rate × accuracy "
               "of the large model on escalated requests")
    for a, role in ((small, "small"), (large, "large")):
        ex.input(f"{role} ({_esc(a.name, cell=True)}): input / output $/M",
                 f"{U.fmt_usd(a.usd_per_m_input)} / {U.fmt_usd(a.usd_per_m_output)}",
                 catalog_link("api", a.key, f"{a.key}, as of {inputs.cat().prices.as_of} (illustrative)"))
    ex.input("tokens per request, input / output", f"{_n(input_tokens)} / {_n(output_tokens)}", GIVEN)
    ex.input("escalation rate", _bits(d), "measured on a labelled sample")
    ex.input("accuracy of kept / escalated answers", f"{_bits(kept_accuracy)} / {_bits(escalated_accuracy)}",
             "measured on a labelled sample")
    ex.input("quality floor", _bits(quality_floor), "product requirement")
    per_k = 1000
    ex.step(f"small: ({_n(input_tokens)} × {U.fmt_usd(small.usd_per_m_input)} + {_n(output_tokens)} × "
            f"{U.fmt_usd(small.usd_per_m_output)}) / 10^6 × {per_k:,} = {U.fmt_usd(cs * per_k)} per 1,000 requests")
    ex.step(f"large: ({_n(input_tokens)} × {U.fmt_usd(large.usd_per_m_input)} + {_n(output_tokens)} × "
            f"{U.fmt_usd(large.usd_per_m_output)}) / 10^6 × {per_k:,} = {U.fmt_usd(cl * per_k)} per 1,000 requests")
    router = f" + {U.fmt_usd(router_usd * per_k)}" if router_usd else ""
    ex.step(f"cascade: {U.fmt_usd(cs * per_k)} + {_bits(d)} × {U.fmt_usd(cl * per_k)}{router} = "
            f"{U.fmt_usd(cost * per_k)} per 1,000 requests")
    ex.step(f"accuracy: {_bits(1 - d)} × {_bits(kept_accuracy)} + {_bits(d)} × {_bits(escalated_accuracy)} = "
            f"{_n(q)}")
    change = (f"{U.fmt_pct(1 - cost / cl)} saved" if cost <= cl
              else f"{U.fmt_pct(cost / cl - 1)} more than sending everything to the large model")
    ex.result(f"{U.fmt_usd(cost * per_k)} per 1,000 requests against {U.fmt_usd(cl * per_k)} all-large: {change}")
    verdict = "meets" if q >= quality_floor - 1e-12 else "misses"
    ex.result(f"accuracy {_n(q)} {verdict} the floor of {_bits(quality_floor)}")
    ex.result(f"the cascade saves money only while the escalation rate stays below {U.fmt_pct(d_max)}")
    ex.note("Escalated requests pay both models and wait for both; accuracies are per traffic category in "
            "practice, and a blended figure can hide a category that falls below the floor. "
            + _esc(inputs.cat().prices.disclaimer))
    return ex.render()


# --- tenant limits ---------------------------------------------------------------------------------

def _numbers(name: str) -> Arg:
    return Arg(lambda _n, v: [inputs.number(name, x, positive=False) for x in v], f"list of {name}", ">= 0 each")


@macro("block", example='tenant_limits(names=["chat", "rag", "summarize"], input_tokens=[800, 6000, 20000], '
                        'output_tokens=[200, 300, 1000], request_limit=10, capacity_tps=150000)',
       args={"input_tokens": _numbers("input_tokens"), "output_tokens": _numbers("output_tokens"),
             "request_limit": _POSITIVE, "capacity_tps": _POSITIVE})
def tenant_limits(names: list, input_tokens: list, output_tokens: list, request_limit: float, capacity_tps: float,
                  input_weight: float = 1.0) -> str:
    """Worked example: the same request limit for every tenant against a token budget per tenant.

    Per tenant: weighted tokens per request (`input_weight` × input + output), the token load it may send at
    the request limit and its share of the deployment's capacity; then the equal token budget
    (capacity / tenants) and the requests/s it allows each tenant.
    """
    n = len(names)
    if not n or not (n == len(input_tokens) == len(output_tokens)):
        raise MacroInputError("tenant_limits needs names, input_tokens and output_tokens of the same non-zero length")
    budget = capacity_tps / n
    ex = Example(f"{n} tenants under a request limit and under a token budget")
    ex.formula("token load at the request limit = requests/s limit × (input weight × input + output tokens)")
    ex.formula("token budget per tenant = capacity / tenants; requests/s it allows = budget / tokens per request")
    ex.input("request limit per tenant", f"{_n(request_limit)} requests/s", GIVEN)
    ex.input("deployment capacity at the SLO", U.fmt_rate(capacity_tps, "weighted tokens/s"), "load test (measured)")
    ex.input("input-token weight", _bits(input_weight), "assumption (1 = plain tokens)")
    rows = ["| Tenant | Input / output tokens | Tokens per request | Load at the request limit | Share of capacity "
            "| Requests/s within the token budget |", "| --- | --- | --- | --- | --- | --- |"]
    worst = (0.0, "")
    for name, i, o in zip(names, input_tokens, output_tokens):
        w = F.weighted_tokens(i, o, input_weight)
        load = request_limit * w
        share = load / capacity_tps
        worst = max(worst, (share, str(name)))
        rows.append(f"| {_esc(str(name), cell=True)} | {_n(i)} / {_n(o)} | {_n(w)} | {U.fmt_rate(load)} | "
                    f"{U.fmt_pct(share)} | {_n(budget / w)} |")
    ex.step(f"token budget: {_n(capacity_tps)} / {n} = {U.fmt_rate(budget)} per tenant")
    ex.table("\n".join(rows))
    ex.result(f"within the same request limit, {_esc(worst[1])} alone may send {U.fmt_pct(worst[0])} of the "
              f"deployment's capacity")
    ex.result("under the token budget every tenant gets the same share, and the request rate it buys depends on "
              "its request size")
    ex.note("Charge a token budget at admission: the input length is known, count the output at `max_tokens` and "
            "refund the difference when the request finishes; a limiter that counts usage only after completion "
            "admits a burst of long requests before it reacts.")
    return ex.render()
