"""Kubernetes arithmetic: probe budgets, detection windows, CFS quota, requests with headroom."""

from __future__ import annotations

import pytest

from macros import formulas as F

from macros.formulas import (cfs_quota_s, probe_detection_window, resource_plan, round_up,
                             startup_failure_threshold, throttled_share)


def test_startup_threshold_matches_kubernetes_docs_example():
    # kubernetes.io, "Configure Liveness, Readiness and Startup Probes": failureThreshold 30 with
    # periodSeconds 10 gives the application at most 5 minutes (30 * 10 = 300 s) to finish starting.
    assert startup_failure_threshold(300, 10) == 30
    assert startup_failure_threshold(301, 10) == 31          # one second more needs one more probe
    assert startup_failure_threshold(200, 10, margin=1.5) == 30
    # initialDelaySeconds counts towards the budget (docs: initialDelaySeconds + failureThreshold x period)
    assert startup_failure_threshold(300, 10, initial_delay_s=100) == 20


def test_startup_threshold_rejects_bad_input():
    with pytest.raises(ValueError, match="margin must be >= 1"):
        startup_failure_threshold(300, 10, margin=0.9)
    with pytest.raises(ValueError, match="load_s"):
        startup_failure_threshold(0, 10)


def test_detection_window_by_hand():
    # defaults (period 10 s, failureThreshold 3, timeout 1 s): 2 x 10 + 1 = 21 s to 3 x 10 + 1 = 31 s
    assert probe_detection_window(10, 3, 1) == (21, 31)
    assert probe_detection_window(5, 1, 2) == (2, 7)


def test_cfs_quota_matches_kubelet_milli_cpu_to_quota():
    # pkg/kubelet/cm/helpers_linux.go: quota = milliCPU * period / 1000 us, period 100000 us, minimum 1000 us.
    # Its comment: 20 ms of quota per 100 ms is 20% of one CPU.
    assert cfs_quota_s(0.2) == pytest.approx(0.020)
    assert cfs_quota_s(1.5) == pytest.approx(0.150)
    assert cfs_quota_s(0.005) == pytest.approx(0.001)        # 5m would be 0.5 ms: raised to the 1 ms floor


def test_throttling_by_hand():
    # limit 2 cores, 8 threads busy: 200 ms of CPU per period is spent in 25 ms, then 75 ms throttled.
    assert throttled_share(2, 8) == pytest.approx(0.75)
    assert throttled_share(2, 2) == pytest.approx(0.0)
    assert throttled_share(4, 2) == pytest.approx(0.0)       # fewer threads than the limit: never throttled


def test_resource_plan_by_hand():
    gib = 2**30
    plan = resource_plan(3.2, 37 * gib, 0.2)
    assert plan.cpu_request_cores == pytest.approx(3.9)        # 3.84 rounded up to 100m
    assert plan.memory_bytes == 45 * gib                       # 44.4 GiB rounded up to 1 GiB
    assert plan.gpus == 1 and plan.qos_class == "Burstable"
    assert resource_plan(2, 10 * gib, 0).memory_bytes == 10 * gib   # exact values are not bumped
    assert round_up(0.3, 0.1) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="headroom"):
        resource_plan(1, gib, -0.1)


def test_crashloop_delays_match_kubernetes_docs():
    # Pod lifecycle docs (release 1.35): after the first crash an immediate restart, then "10s, 20s, 40s, ...
    # capped at 300 seconds".
    assert F.crashloop_delays(8, run_s=30) == [0, 10, 20, 40, 80, 160, 300, 300]


def test_crashloop_delays_with_a_lower_node_cap():
    # Docs, KubeletCrashLoopBackOffMax examples: a 100s cap gives 10s, 20s, ... up to 100s; a cap below the
    # initial delay replaces it ("delays between container restarts will always be 2s").
    assert F.crashloop_delays(6, run_s=1, max_s=100) == [0, 10, 20, 40, 80, 100]
    assert F.crashloop_delays(4, run_s=1, max_s=2) == [0, 2, 2, 2]
    # ReduceDefaultCrashLoopBackOffDecay (alpha): 1 s doubling to 60 s.
    assert F.crashloop_delays(9, run_s=1, initial_s=1, max_s=60) == [0, 1, 2, 4, 8, 16, 32, 60, 60]


def test_crashloop_resets_after_twice_the_cap():
    # client-go Backoff.hasExpired: eventTime - lastUpdate > 2 x maxDuration; the docs' "10 minutes".
    assert F.crashloop_reset_s() == 600
    assert F.crashloop_delays(3, run_s=601) == [0, 0, 0]
    assert F.crashloop_delays(3, run_s=600) == [0, 10, 20]


def test_crashloop_rejects_bad_input():
    with pytest.raises(ValueError, match="restarts"):
        F.crashloop_delays(0)
    with pytest.raises(ValueError, match="run_s"):
        F.crashloop_delays(3, run_s=-1)


def test_termination_grace_by_hand():
    # 2048 tokens x 45 ms = 92.16 s of stream + 10 s engine teardown = 102.16 s -> 103 whole seconds of
    # --shutdown-timeout; 15 s preStop + 103 s + 5 s API-server exit = 123 s -> 130 s.
    assert F.drain_timeout_s(2048 * 0.045, 10) == 103
    assert F.termination_grace_s(15, 103, 5) == 130
    # Without a teardown term the timeout is the stream alone: 92.16 s -> 93; an exact 30.0 s stays 30.
    assert F.drain_timeout_s(2048 * 0.045) == 93 and F.drain_timeout_s(30.0) == 30
    assert F.drain_timeout_s(20, 10.5) == 31
    assert F.termination_grace_s(10, 20, 0, step_s=10) == 30
    with pytest.raises(ValueError, match="must be > 0"):
        F.termination_grace_s(0, 0, 0)
    with pytest.raises(ValueError, match="longest_request_s"):
        F.drain_timeout_s(0)
    with pytest.raises(ValueError, match="teardown_s"):
        F.drain_timeout_s(30, -1)
