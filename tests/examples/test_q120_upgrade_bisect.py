"""Q120: examples/operations/upgrade_bisect.py with a throughput table in place of real benchmark runs."""

from __future__ import annotations

import pytest

from examples.operations.upgrade_bisect import bisect_versions, classify_diff

VERSIONS = ["0.9.2", "0.10.0", "0.10.1", "0.10.1.1", "0.10.2", "0.11.0"]
# Made-up throughputs (requests/s) with the drop arriving in 0.10.2.
TABLE = {"0.9.2": 10.0, "0.10.0": 10.1, "0.10.1": 9.9, "0.10.1.1": 10.0, "0.10.2": 8.0, "0.11.0": 8.1}


def test_bisection_finds_the_first_slow_release_in_few_measurements() -> None:
    calls: list[str] = []

    def measure(v: str) -> float:
        calls.append(v)
        return TABLE[v]

    good, bad, seen = bisect_versions(VERSIONS, measure, baseline=10.0, tolerance=0.05)   # floor 9.5
    assert (good, bad) == ("0.10.1.1", "0.10.2")
    # Ends 0 and 5 first, then midpoints 2 (good), 3 (good), 4 (bad): five of six releases measured once each.
    assert calls == ["0.9.2", "0.11.0", "0.10.1", "0.10.1.1", "0.10.2"]
    assert len(set(calls)) == len(calls) == len(seen)


def test_bisection_refuses_a_range_without_a_regression() -> None:
    with pytest.raises(ValueError, match="need a good first version and a bad last one"):
        bisect_versions(VERSIONS, lambda v: 10.0, baseline=10.0)


def test_classify_diff_files_each_change_under_its_category() -> None:
    before = {"cudagraph_mode": "PIECEWISE", "max_num_batched_tokens": 8192, "torch": "2.7.1",
              "gpu_memory_utilization": 0.9, "VLLM_ATTENTION_BACKEND": "FLASH_ATTN"}
    after = {"cudagraph_mode": "FULL_AND_PIECEWISE", "max_num_batched_tokens": 8192, "torch": "2.8.0",
             "gpu_memory_utilization": 0.9, "kv_cache_dtype": "fp8"}
    assert classify_diff(before, after) == {
        "defaults": ["kv_cache_dtype: <unset> -> fp8"],
        "scheduling": [],
        "kernels": ["VLLM_ATTENTION_BACKEND: FLASH_ATTN -> <unset>", "cudagraph_mode: PIECEWISE -> FULL_AND_PIECEWISE"],
        "dependencies": ["torch: 2.7.1 -> 2.8.0"],
    }
