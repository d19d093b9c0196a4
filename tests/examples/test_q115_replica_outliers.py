"""Q115: examples/operations/replica_outliers.py on a five-replica fleet; medians worked by hand."""

from __future__ import annotations

import pytest

from examples.operations.replica_outliers import classify


def row(itl: float, prompt: float = 1000, running: float = 20, hit: float = 0.5) -> dict[str, float]:
    return {"itl_s": itl, "prompt_tokens": prompt, "running": running, "cache_hit_rate": hit}


def test_identical_fleet_has_no_outlier() -> None:
    assert classify({f"r{i}": row(0.020) for i in range(5)}) == {}


def test_slow_replica_with_median_traffic_is_the_replica() -> None:
    fleet = {"r0": row(0.020), "r1": row(0.021), "r2": row(0.019), "r3": row(0.020), "r4": row(0.030)}
    # Median inter-token latency is 0.020; r4 is 0.030 / 0.020 = 1.5 times it, with every workload column at the median.
    assert classify(fleet) == {"r4": "latency x1.50 of median with median traffic: the replica itself"}


def test_slow_replica_sent_longer_prompts_and_fewer_cache_hits_is_the_traffic() -> None:
    fleet = {"r0": row(0.020), "r1": row(0.020), "r2": row(0.020), "r3": row(0.020),
             "r4": row(0.026, prompt=2000, hit=0.1)}
    # Medians: prompt 1000, hit rate 0.5. r4: 2000/1000 = 2.00, 0.1/0.5 = 0.20, running 20/20 = 1.00.
    assert classify(fleet) == {"r4": "latency x1.30 of median; traffic differs: "
                                     "mean prompt length (vllm:request_prompt_tokens) x2.00; "
                                     "prefix-cache hit rate (vllm:prefix_cache_hits / vllm:prefix_cache_queries) x0.20"}


def test_thresholds_are_honoured() -> None:
    fleet = {"r0": row(0.020), "r1": row(0.020), "r2": row(0.020), "r3": row(0.023)}   # median 0.020, r3 x1.15
    assert classify(fleet) == {}
    assert classify(fleet, slow=1.1) == {"r3": "latency x1.15 of median with median traffic: the replica itself"}


def test_bad_input_is_named() -> None:
    with pytest.raises(ValueError, match="at least three replicas"):
        classify({"a": row(0.02), "b": row(0.03)})
    with pytest.raises(ValueError, match=r"replica 'c': missing \['cache_hit_rate'\]"):
        classify({"a": row(0.02), "b": row(0.02), "c": {"itl_s": 0.02, "prompt_tokens": 1, "running": 1}})
