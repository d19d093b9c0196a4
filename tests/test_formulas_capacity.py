"""Little's law, replica counts, the Kubernetes HPA rule and self-hosted cost."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from macros.formulas import (blended_api_price, cost_per_million_tokens, crossover_tokens_per_s, fixed_cost_floor,
                             hpa_desired_replicas, littles_law, replicas_needed, zone_replicas)


def test_littles_law_by_hand():
    # 10 requests/s each spending 2 s in the system -> 20 in flight; and back.
    assert littles_law(arrival_rate=10, time_in_system=2) == 20
    assert littles_law(concurrency=20, time_in_system=2) == 10
    assert littles_law(concurrency=20, arrival_rate=10) == 2
    with pytest.raises(ValueError, match="exactly two"):
        littles_law(concurrency=20)
    with pytest.raises(ValueError, match="exactly two"):
        littles_law(concurrency=1, arrival_rate=1, time_in_system=1)
    with pytest.raises(ValueError):
        littles_law(arrival_rate=-1, time_in_system=2)


@given(st.floats(min_value=1e-3, max_value=1e6), st.floats(min_value=1e-3, max_value=1e4))
def test_littles_law_round_trip(lam, w):
    L = littles_law(arrival_rate=lam, time_in_system=w)
    assert littles_law(concurrency=L, time_in_system=w) == pytest.approx(lam)
    assert littles_law(concurrency=L, arrival_rate=lam) == pytest.approx(w)


def test_replicas_by_hand():
    # 900 req/s peak, 100 req/s per replica at the SLO, 75% target: ceil(900 / 75) = 12, + 1 (N+1) = 13.
    assert replicas_needed(900, 100, 0.75, 1) == 13
    # exactly divisible must not round up from float noise: 300 / (100 x 0.6) = 5
    assert replicas_needed(300, 100, 0.6, 0) == 5
    assert replicas_needed(0, 100, 0.5, 2) == 2
    with pytest.raises(ValueError):
        replicas_needed(100, 0, 0.5)


def test_hpa_kubernetes_docs_examples():
    # kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale (algorithm details):
    # current 200m vs desired 100m doubles the replicas; 50m vs 100m halves them.
    assert hpa_desired_replicas(4, 200, 100) == 8
    assert hpa_desired_replicas(4, 50, 100) == 2
    # Kubernetes blog "v1.33: HPA configurable tolerance": 50 replicas at 90% CPU, target 75% -> 60.
    assert hpa_desired_replicas(50, 90, 75) == 60


def test_hpa_tolerance_band():
    # Default --horizontal-pod-autoscaler-tolerance 0.1: a ratio within 10% of 1.0 changes nothing.
    assert hpa_desired_replicas(10, 105, 100) == 10
    assert hpa_desired_replicas(10, 91, 100) == 10
    assert hpa_desired_replicas(10, 111, 100) == 12          # ceil(11.1)
    assert hpa_desired_replicas(10, 105, 100, tolerance=0) == 11  # ceil(10.5)
    # the 50-replica example above: 90/75 = 1.2 is outside the band
    assert hpa_desired_replicas(50, 80, 75) == 50            # 1.067 is inside


def test_cost_per_million_by_hand():
    # $2.95/GPU-hour x 8 GPUs, 10,000 tokens/s when busy, busy half the time:
    # 23.60 / (10,000 x 3,600 x 0.5) x 1e6 = $1.3111 per million tokens.
    assert cost_per_million_tokens(2.95, 8, 10_000, 0.5) == pytest.approx(23.6 / 18e6 * 1e6)


def test_crossover_and_floor_by_hand():
    # One $2.95 GPU vs an API at $0.60 per million: 2.95 / 3600 / 0.6e-6 = 1,365.7 tokens/s.
    assert crossover_tokens_per_s(2.95, 1, 0.60) == pytest.approx(2.95 / 3600 / 0.6e-6)
    # At the crossover rate both cost the same per million tokens.
    rate = crossover_tokens_per_s(2.95, 1, 0.60)
    assert cost_per_million_tokens(2.95, 1, rate) == pytest.approx(0.60)
    # 8 GPUs x $2.95 x 730 h = $17,228 a month; 2 replicas double it.
    assert fixed_cost_floor(2.95, 8) == pytest.approx(17_228)
    assert fixed_cost_floor(2.95, 8, min_replicas=2) == pytest.approx(34_456)


def test_blended_price():
    assert blended_api_price(0.15, 0.60, 0.75) == pytest.approx(0.2625)
    with pytest.raises(ValueError):
        blended_api_price(0.15, 0.60, 1.5)


@given(st.floats(min_value=0.1, max_value=100), st.floats(min_value=1, max_value=1e6),
       st.floats(min_value=1, max_value=1e6))
def test_cost_falls_as_throughput_rises(price, a, b):
    lo, hi = sorted((a, b))
    assert cost_per_million_tokens(price, 1, hi) <= cost_per_million_tokens(price, 1, lo)


def test_zone_replicas_by_hand():
    # 3 zones, one lost: the other two carry 9,000 req/s, 4,500 each; ceil(4500 / (100 x 0.75)) = 60
    # per zone, 180 in total (N+1 without zone loss would be ceil(9000 / 75) + 1 = 121).
    assert zone_replicas(9000, 100, 3, 0.75) == (60, 180)
    # 2 zones: each must carry the whole peak: ceil(9000 / 75) = 120 per zone, 240 in total.
    assert zone_replicas(9000, 100, 2, 0.75) == (120, 240)
    # 4 zones: ceil(3000 / 75) = 40 per zone, 160 in total.
    assert zone_replicas(9000, 100, 4, 0.75) == (40, 160)
    with pytest.raises(ValueError, match="zones"):
        zone_replicas(9000, 100, 1, 0.75)


@given(st.floats(min_value=1, max_value=1e6), st.floats(min_value=1, max_value=1e4),
       st.integers(min_value=2, max_value=8), st.floats(min_value=0.1, max_value=1.0))
def test_zone_loss_leaves_enough_capacity(peak, cap, zones, util):
    per_zone, total = zone_replicas(peak, cap, zones, util)
    assert total == per_zone * zones
    # with any one zone down, the survivors still hold the peak at the target utilization
    assert per_zone * (zones - 1) * cap * util >= peak * (1 - 1e-9)
