"""Kubernetes: probe timings from a measured load time, requests and limits from measured usage
(formulas: :mod:`macros.formulas.kubernetes`)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from .blocks import GIVEN, Example, _n
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
