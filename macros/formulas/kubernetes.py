"""Kubernetes arithmetic for model servers: probe timings from a measured load time, requests and
limits from measured usage, and the CFS quota a CPU limit becomes.

Probe semantics are those of the kubelet (Kubernetes 1.35): a probe runs every ``periodSeconds``; a
probe that gets no answer within ``timeoutSeconds`` counts as a failure; after ``failureThreshold``
consecutive failures the startup or liveness probe has the container killed, the readiness probe has
the Pod marked not ready. The CFS quota follows the kubelet's ``MilliCPUToQuota``
(pkg/kubelet/cm/helpers_linux.go): ``quota = milliCPU × period / 1000`` µs, period 100 ms, at least 1 ms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from . import _checks as chk

__all__ = ["CFS_PERIOD_S", "startup_failure_threshold", "probe_detection_window", "cfs_quota_s",
           "throttled_share", "round_up", "ResourcePlan", "resource_plan", "CRASHLOOP_INITIAL_S",
           "CRASHLOOP_MAX_S", "crashloop_delays", "crashloop_reset_s", "termination_grace_s",
           "drain_timeout_s"]

#: The kubelet's CFS period (``--cpu-cfs-quota-period`` default, 100 ms).
CFS_PERIOD_S = 0.1
_MIN_QUOTA_S = 0.001


def startup_failure_threshold(load_s: float, period_s: float, margin: float = 1.0,
                              initial_delay_s: float = 0.0) -> int:
    """Smallest ``failureThreshold`` whose budget ``initialDelaySeconds + failureThreshold × periodSeconds``
    covers ``load_s × margin`` (the measured worst-case start, with a safety margin >= 1)."""
    chk.positive("load_s", load_s)
    chk.positive("period_s", period_s)
    chk.non_negative("initial_delay_s", initial_delay_s)
    if chk.positive("margin", margin) < 1:
        raise ValueError(f"margin must be >= 1 (a budget shorter than the measured load kills it), got {margin!r}")
    need = load_s * margin - initial_delay_s
    # round() first so that 300 / 10 is 30, not 30.000000000000004 rounded up to 31
    return max(1, math.ceil(round(need / period_s, 9)))


def probe_detection_window(period_s: float, failure_threshold: int, timeout_s: float) -> tuple[float, float]:
    """(earliest, latest) seconds from a hang to the ``failureThreshold``-th failed probe.

    A hang just before a probe: ``(F − 1) × period + timeout``; just after a successful probe:
    ``F × period + timeout``. Assumes each failing probe waits out its full timeout.
    """
    chk.positive("period_s", period_s)
    f = chk.positive_int("failure_threshold", failure_threshold)
    chk.positive("timeout_s", timeout_s)
    return (f - 1) * period_s + timeout_s, f * period_s + timeout_s


def cfs_quota_s(limit_cores: float, period_s: float = CFS_PERIOD_S) -> float:
    """CPU seconds a container may use per CFS period under a CPU limit of ``limit_cores``."""
    chk.positive("limit_cores", limit_cores)
    chk.positive("period_s", period_s)
    return max(limit_cores * period_s, _MIN_QUOTA_S)


def throttled_share(limit_cores: float, busy_threads: int, period_s: float = CFS_PERIOD_S) -> float:
    """Share of each period the container sits throttled when ``busy_threads`` run flat out.

    The threads burn the quota in ``quota / busy_threads`` seconds of wall time, then wait for the next
    period; 0 when the quota lasts the whole period.
    """
    n = chk.positive_int("busy_threads", busy_threads)
    quota = cfs_quota_s(limit_cores, period_s)
    run = min(period_s, quota / n)
    return (period_s - run) / period_s


def round_up(value: float, step: float) -> float:
    """``value`` rounded up to a multiple of ``step`` (tolerant of float noise)."""
    chk.non_negative("value", value)
    chk.positive("step", step)
    return math.ceil(round(value / step, 9)) * step


@dataclass(frozen=True)
class ResourcePlan:
    cpu_request_cores: float
    memory_bytes: int          # request = limit
    gpus: int                  # request = limit (extended resources cannot be overcommitted)
    qos_class: str


def resource_plan(cpu_p95_cores: float, memory_peak_bytes: float, headroom: float, gpus: int = 1,
                  cpu_step: float = 0.1, memory_step_bytes: float = 2**30) -> ResourcePlan:
    """Requests and limits for a model-server container from measured usage.

    CPU request = p95 CPU × (1 + headroom), rounded up to ``cpu_step`` cores; no CPU limit. Memory request
    = limit = peak RSS × (1 + headroom), rounded up to ``memory_step_bytes``. GPUs: request = limit. With no
    CPU limit the Pod's QoS class is Burstable (Guaranteed needs CPU and memory limits equal to requests).
    """
    chk.positive("cpu_p95_cores", cpu_p95_cores)
    chk.positive("memory_peak_bytes", memory_peak_bytes)
    chk.non_negative("headroom", headroom)
    g = chk.positive_int("gpus", gpus)
    cpu = round_up(cpu_p95_cores * (1 + headroom), cpu_step)
    mem = int(round_up(memory_peak_bytes * (1 + headroom), memory_step_bytes))
    return ResourcePlan(cpu, mem, g, "Burstable")


#: kubelet container restart back-off in Kubernetes 1.35 (``initialCrashLoopBackOff`` and
#: ``MaxCrashLoopBackOff`` in pkg/kubelet/kubelet.go; the cap is the default of the kubelet's
#: ``crashLoopBackOff.maxContainerRestartPeriod``, gate KubeletCrashLoopBackOffMax, beta in 1.35).
CRASHLOOP_INITIAL_S = 10.0
CRASHLOOP_MAX_S = 300.0


def crashloop_delays(restarts: int, run_s: float = 0.0, initial_s: float = CRASHLOOP_INITIAL_S,
                     max_s: float = CRASHLOOP_MAX_S) -> list[float]:
    """Back-off the kubelet waits before each of the first ``restarts`` restarts of a container that
    exits ``run_s`` seconds after every start.

    Follows client-go's ``flowcontrol.Backoff`` as the kubelet uses it (``doBackOff`` in
    pkg/kubelet/kuberuntime): the first exit restarts at once and creates the entry at ``initial_s``;
    each later exit waits the entry's delay, which then doubles up to ``max_s``. An entry whose last
    restart is more than ``2 × max_s`` before the exit has expired: the restart is immediate and the
    entry starts again at ``initial_s``. A cap below the initial delay replaces it
    (``newCrashLoopBackOff``). No jitter: the kubelet builds its back-off without it.
    """
    n = chk.positive_int("restarts", restarts)
    chk.non_negative("run_s", run_s)
    chk.positive("initial_s", initial_s)
    chk.positive("max_s", max_s)
    first = min(initial_s, max_s)
    delays: list[float] = []
    backoff = None
    for _ in range(n):
        if backoff is None or run_s > 2 * max_s:
            delays.append(0.0)
            backoff = first
        else:
            delays.append(backoff)
            backoff = min(backoff * 2, max_s)
    return delays


def crashloop_reset_s(max_s: float = CRASHLOOP_MAX_S) -> float:
    """Uptime after which the kubelet forgets a container's back-off (twice the cap: 10 min by default)."""
    return 2 * chk.positive("max_s", max_s)


def termination_grace_s(prestop_s: float, drain_s: float, exit_s: float, step_s: float = 10) -> int:
    """``terminationGracePeriodSeconds`` that covers a preStop wait, the server's shutdown timeout after
    SIGTERM (``drain_s``: for vLLM its ``--shutdown-timeout``, which already holds the engine's
    teardown) and what the front process does after it (``exit_s``), rounded up to ``step_s``.

    The grace period counts from the deletion, before the preStop hook runs, so the hook's time is
    spent out of it (Kubernetes API: Lifecycle.preStop).
    """
    chk.non_negative("prestop_s", prestop_s)
    chk.non_negative("drain_s", drain_s)
    chk.non_negative("exit_s", exit_s)
    chk.positive("step_s", step_s)
    total = prestop_s + drain_s + exit_s
    if total <= 0:
        raise ValueError("prestop_s + drain_s + exit_s must be > 0")
    return int(round_up(total, step_s))


def drain_timeout_s(longest_request_s: float, teardown_s: float = 0.0) -> int:
    """Whole seconds a server must be given after SIGTERM so that the longest request still running
    finishes and the engine then tears down: the value for vLLM's ``--shutdown-timeout`` (an integer,
    seconds; 0 aborts in-flight requests at SIGTERM).

    In vLLM the same number is the process manager's whole wait for the EngineCore processes: they
    must finish draining *and* release the GPU within it, or they are SIGKILLed (``shutdown`` in
    vllm/v1/utils.py at 0.33.0), so the engine's teardown counts inside it.
    """
    chk.positive("longest_request_s", longest_request_s)
    chk.non_negative("teardown_s", teardown_s)
    return math.ceil(longest_request_s + teardown_s)
