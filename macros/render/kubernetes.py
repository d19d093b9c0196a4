"""Kubernetes: probe timings from a measured load time, requests and limits from measured usage
(formulas: :mod:`macros.formulas.kubernetes`)."""

from __future__ import annotations

from .. import formulas as F
from ..formulas import _checks as chk
from .. import units as U
from .blocks import GIVEN, Example, _n
from .facts import engine_src, flag as facts_flag, flag_default, release
from .registry import macro

_PROBE_SRC = "Kubernetes 1.35 default"


@macro("block", example="probe_timings(load_s=420, margin=1.5)")
def probe_timings(load_s: float, margin: float = 1.5, period_s: float = 10, timeout_s: float = 5,
                  liveness_failures: int = 3, readiness_period_s: float = 5, readiness_failures: int = 2) -> str:
    """Worked example: startup-probe failureThreshold from a measured load time, and how fast liveness
    and readiness react.

    `load_s` is the slowest measured start (pull excluded: probes start when the container starts);
    `margin` (>= 1) multiplies it. Startup and liveness share `period_s` and `timeout_s`.
    """
    f_start = F.startup_failure_threshold(load_s, period_s, margin)
    budget = f_start * period_s
    live_lo, live_hi = F.probe_detection_window(period_s, liveness_failures, timeout_s)
    ready_lo, ready_hi = F.probe_detection_window(readiness_period_s, readiness_failures, timeout_s)
    ex = Example("probe timings for a model server that loads slowly")
    ex.formula("startup failureThreshold = ceil(load time × margin / periodSeconds)")
    ex.formula("hang to action = (failureThreshold − 1) × periodSeconds + timeoutSeconds ... "
               "failureThreshold × periodSeconds + timeoutSeconds")
    ex.input("slowest measured start (container start to first healthy answer)", U.fmt_seconds(load_s), GIVEN)
    ex.input("safety margin", f"× {_n(margin)}", GIVEN)
    ex.input("startup and liveness periodSeconds", U.fmt_seconds(period_s), f"{GIVEN} ({_PROBE_SRC}: 10 s)")
    ex.input("timeoutSeconds", U.fmt_seconds(timeout_s), f"{GIVEN} ({_PROBE_SRC}: 1 s)")
    ex.input("liveness failureThreshold", str(liveness_failures), f"{GIVEN} ({_PROBE_SRC}: 3)")
    ex.input("readiness periodSeconds / failureThreshold",
             f"{U.fmt_seconds(readiness_period_s)} / {readiness_failures}", GIVEN)
    ex.step(f"startup: ceil({_n(load_s)} s × {_n(margin)} / {_n(period_s)} s) = {f_start} probes")
    ex.step(f"startup budget: {f_start} × {_n(period_s)} s = {U.fmt_seconds(budget)} before the kubelet kills "
            "a container that never became healthy")
    ex.step(f"liveness: {liveness_failures} failures at {_n(period_s)} s, each timing out after {_n(timeout_s)} s: "
            f"{U.fmt_seconds(live_lo)} to {U.fmt_seconds(live_hi)} from a hang to the kill")
    ex.step(f"readiness: {readiness_failures} failures at {_n(readiness_period_s)} s: "
            f"{U.fmt_seconds(ready_lo)} to {U.fmt_seconds(ready_hi)} until the Pod leaves the Service's endpoints")
    ex.result(f"startupProbe periodSeconds {_n(period_s)}, failureThreshold {f_start}; a hung server is out of "
              f"rotation within {U.fmt_seconds(ready_hi)} and restarted within {U.fmt_seconds(live_hi)}")
    ex.note("Readiness reacts before liveness on purpose: a briefly overloaded server is taken out of rotation, "
            "not restarted. A probe refused outright fails at once, without the timeout. "
            "The startup budget counts from container start; image pull and scheduling come "
            "before it and are not covered by it.")
    return ex.render()


def _milli(cores: float) -> str:
    return f"{round(cores * 1000):d}m"


def _gi(n_bytes: float) -> str:
    return f"{_n(n_bytes / 2**30)}Gi"


@macro("block", example="resource_requests(cpu_p95_cores=3.2, memory_peak_gib=37, headroom=0.2, busy_threads=16)")
def resource_requests(cpu_p95_cores: float, memory_peak_gib: float, headroom: float = 0.2, gpu_count: int = 1,
                      busy_threads: int = 8) -> str:
    """Worked example: requests and limits from measured usage with headroom, and the CFS throttling a CPU
    limit equal to the request would cause.

    CPU request rounded up to 100m with no CPU limit; memory request = limit rounded up to 1 Gi; GPUs request
    = limit. `busy_threads` is how many threads run at once in a burst (tokenizer workers, detokenizer,
    the engine's Python loop) for the throttling illustration.
    """
    plan = F.resource_plan(cpu_p95_cores, memory_peak_gib * 2**30, headroom, gpu_count)
    quota = F.cfs_quota_s(plan.cpu_request_cores)
    throttled = F.throttled_share(plan.cpu_request_cores, busy_threads)
    ex = Example("requests and limits for a GPU model-server container")
    ex.formula("request = measured usage × (1 + headroom), rounded up (CPU to 100m, memory to 1Gi)")
    ex.formula("CFS quota per 100 ms period = CPU limit × 100 ms (kubelet MilliCPUToQuota)")
    ex.input("CPU, p95 of the busiest hour", f"{_n(cpu_p95_cores)} cores", GIVEN)
    ex.input("memory, peak working set", f"{_n(memory_peak_gib)} GiB", GIVEN)
    ex.input("headroom", f"{_n(headroom * 100)}%", GIVEN)
    ex.input("GPUs", str(plan.gpus), GIVEN)
    ex.step(f"CPU request: {_n(cpu_p95_cores)} × {_n(1 + headroom)} = {_n(cpu_p95_cores * (1 + headroom))} cores "
            f"→ `{_milli(plan.cpu_request_cores)}`; no CPU limit")
    ex.step(f"memory: {_n(memory_peak_gib)} GiB × {_n(1 + headroom)} = {_n(memory_peak_gib * (1 + headroom))} GiB "
            f"→ request = limit = `{_gi(plan.memory_bytes)}`")
    ex.step(f"GPU: `nvidia.com/gpu: {plan.gpus}` in limits (the request defaults to the limit and may not differ)")
    ex.step(f"if the CPU limit were set to the request: quota {U.fmt_seconds(quota)} per 100 ms; "
            f"{busy_threads} busy threads spend it in {U.fmt_seconds(quota / busy_threads)} and wait "
            f"{_n(throttled * 100)}% of each period")
    ex.result(f"requests cpu `{_milli(plan.cpu_request_cores)}`, memory `{_gi(plan.memory_bytes)}`; "
              f"limits memory `{_gi(plan.memory_bytes)}`, `nvidia.com/gpu: {plan.gpus}`; "
              f"QoS class {plan.qos_class}")
    ex.note("Measure the working set (`container_memory_working_set_bytes`, what `kubectl top` shows), not RSS "
            "alone; page cache from reading weight files is charged to the container's memory cgroup too but is "
            "reclaimed before the OOM killer runs. Re-measure after an engine upgrade.")
    return ex.render()


@macro("block", example="crashloop_backoff(crash_after_s=90, restarts=8)")
def crashloop_backoff(crash_after_s: float, restarts: int = 8, initial_s: float = F.CRASHLOOP_INITIAL_S,
                      max_s: float = F.CRASHLOOP_MAX_S) -> str:
    """Worked example: the kubelet's restart back-off for a container that dies `crash_after_s` after
    every start (a model server failing during its load), restart by restart.

    `initial_s` and `max_s` are the kubelet's initial delay and cap (defaults 10 s and 300 s since
    Kubernetes 1.35 and still at the reference release; a node's
    `crashLoopBackOff.maxContainerRestartPeriod` can lower the cap).
    """
    crash_s = chk.positive("crash_after_s", crash_after_s)
    delays = F.crashloop_delays(restarts, crash_s, initial_s, max_s)
    ex = Example("CrashLoopBackOff: restart delays for a server that crashes during its load")
    ex.formula("delay before restart 1 = 0; before restart k ≥ 2 = min(initial × 2^(k−2), cap), "
               "while each run stays under 2 × cap")
    ex.formula("time of restart k = Σ (run time until the crash + delay) over restarts 1..k")
    ex.input("run time from each start to the crash", U.fmt_seconds(crash_s), GIVEN)
    ex.input("initial delay / cap", f"{U.fmt_seconds(initial_s)} / {U.fmt_seconds(max_s)}",
             f"kubelet defaults, {release('kubernetes')}: 10 s / 300 s")
    t = 0.0
    for k, d in enumerate(delays, 1):
        t += crash_s + d
        wait = "at once" if d == 0 else f"after {U.fmt_seconds(d)}"
        ex.step(f"restart {k}: {wait}; {U.fmt_seconds(t)} after the first start")
    reset = F.crashloop_reset_s(max_s)
    cycle = crash_s + delays[-1]
    ex.result(f"{restarts} restarts take {U.fmt_seconds(t)}; from then on one attempt every "
              f"{U.fmt_seconds(cycle)} ({U.fmt_seconds(crash_s)} of loading + {U.fmt_seconds(delays[-1])} "
              "of back-off)")
    if crash_s > reset:
        tail = "here every run is longer than that, so each crash restarts at once"
    else:
        tail = "here no run lasts that long, so the delay stays at the cap for as long as the crash repeats"
    ex.note("kubectl shows `CrashLoopBackOff` only while the container waits out a delay; during each "
            f"{U.fmt_seconds(crash_s)} of loading it shows `Running`. The delay counts from the container's "
            f"finish time; the kubelet forgets it once a restarted container has run for more than "
            f"{U.fmt_seconds(reset)} (twice the cap) before exiting; {tail}.")
    return ex.render()


@macro("block", example="termination_grace(prestop_s=15, max_tokens=2048, tpot_ms=45, teardown_s=10, exit_s=5)")
def termination_grace(prestop_s: float, max_tokens: int, tpot_ms: float, teardown_s: float = 10,
                      exit_s: float = 5, step_s: float = 10) -> str:
    """Worked example: vLLM's `--shutdown-timeout` and `terminationGracePeriodSeconds` for a streaming
    server, from its preStop wait, the longest stream it must finish after SIGTERM (max_tokens × time
    per output token), the engine's teardown and the API server's exit after it.

    The shutdown timeout is the longest stream plus the engine's teardown, in whole seconds: vLLM's
    process manager waits that long in all for the EngineCore processes to drain and exit, then
    SIGKILLs them (its default, read from the facts snapshot, aborts in-flight requests at SIGTERM).
    The grace period is preStop + shutdown timeout + API-server exit, rounded up to `step_s`.
    """
    n = chk.positive_int("max_tokens", max_tokens)
    chk.positive("tpot_ms", tpot_ms)
    drain = n * tpot_ms / 1000
    timeout = F.drain_timeout_s(drain, teardown_s)
    grace = F.termination_grace_s(prestop_s, timeout, exit_s, step_s)
    flag = facts_flag("vllm", "--shutdown-timeout")
    ex = Example("shutdown timeout and termination grace period for a streaming LLM server")
    ex.formula("shutdown timeout (vLLM --shutdown-timeout) ≥ longest in-flight request + engine teardown, "
               "in whole seconds")
    ex.formula("grace ≥ preStop wait + shutdown timeout + API-server exit, rounded up")
    ex.input("preStop sleep (endpoint removal to reach every proxy)", U.fmt_seconds(prestop_s), GIVEN)
    ex.input("longest request: max_tokens", f"{n:,}", GIVEN)
    ex.input("time per output token at full load", f"{_n(tpot_ms)} ms", GIVEN)
    ex.input("engine teardown (free GPU memory, stop workers)", U.fmt_seconds(teardown_s), GIVEN)
    ex.input("API server exit after the engine has stopped", U.fmt_seconds(exit_s), GIVEN)
    ex.input(f"{release('vllm')} {flag} default", flag_default("vllm", "--shutdown-timeout"),
             engine_src("vllm", "vllm/v1/engine/core.py", line=1718) + ": 0 aborts every in-flight request at SIGTERM")
    ex.step(f"longest stream: {n:,} × {_n(tpot_ms)} ms = {U.fmt_seconds(drain)}; "
            f"+ {U.fmt_seconds(teardown_s)} of teardown = {U.fmt_seconds(drain + teardown_s)}, "
            f"so `--shutdown-timeout {timeout}`")
    ex.step(f"{U.fmt_seconds(prestop_s)} + {timeout} s + {U.fmt_seconds(exit_s)} = "
            f"{U.fmt_seconds(prestop_s + timeout + exit_s)}, rounded up to a multiple of {_n(step_s)} s")
    ex.result(f"`--shutdown-timeout {timeout}` on the server: after SIGTERM the engine lets the running requests "
              f"finish, then tears down; whatever of its processes still runs {timeout} s after SIGTERM is "
              "SIGKILLed")
    ex.result(f"`terminationGracePeriodSeconds: {grace}` (the default is 30)")
    ex.note("A request admitted just before the Pod was marked for deletion may have started at any point in "
            "its stream, so budget the whole stream. At the deadline vLLM does not abort what is left cleanly: it "
            "SIGKILLs the engine processes, so a timeout sized to the streams alone leaves the GPU teardown to "
            "a kill. "
            "Without the flag, grace beyond the preStop sleep buys nothing: the server aborts its streams at "
            "SIGTERM and exits. What neither covers, the client must retry.")
    return ex.render()
