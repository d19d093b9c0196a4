"""Q120: attribute a throughput regression after an engine upgrade.

``bisect_versions`` finds the first release that is slower than the pre-upgrade baseline by more than a
tolerance, measuring about log2(n) releases instead of n. ``measure`` is whatever runs the fixed
benchmark against one installed release and returns its throughput; the tests pass a table.

``classify_diff`` sorts the differences between two configuration snapshots (the resolved engine
settings, the environment variables that select kernels, and the library versions) into the four
categories a regression is attributed to. The key lists name settings and variables of vLLM 0.11 and of the
reference release, so a snapshot from either side files correctly (``VLLM_ATTENTION_BACKEND`` is read by 0.11
only; the reference release selects the backend with ``--attention-backend`` and sets the CUDA graph mode from
``optimization_level``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

CATEGORIES: dict[str, set[str]] = {
    "scheduling": {"max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill", "enable_prefix_caching",
                   "async_scheduling", "scheduling_policy", "long_prefill_token_threshold"},
    "kernels": {"attention_backend", "VLLM_ATTENTION_BACKEND", "cudagraph_mode", "compilation_level",
                "optimization_level",
                "VLLM_USE_DEEP_GEMM", "VLLM_USE_FLASHINFER_SAMPLER", "quantization_kernel", "enforce_eager"},
    "dependencies": {"torch", "cuda", "nccl", "triton", "transformers", "flashinfer", "driver", "xformers"},
}


# --8<-- [start:bisect]
def bisect_versions(versions: Sequence[str], measure: Callable[[str], float], baseline: float,
                    tolerance: float = 0.05) -> tuple[str, str, dict[str, float]]:
    """(last good, first bad, measurements). versions[0] must be good and versions[-1] bad."""
    floor = baseline * (1 - tolerance)
    seen: dict[str, float] = {}

    def good(i: int) -> bool:
        seen.setdefault(versions[i], measure(versions[i]))
        return seen[versions[i]] >= floor

    lo, hi = 0, len(versions) - 1
    if not good(lo) or good(hi):
        raise ValueError(f"need a good first version and a bad last one against {floor:.1f}: "
                         f"{versions[lo]}={seen[versions[lo]]:.1f}, {versions[hi]}={seen.get(versions[hi], 0):.1f}")
    while hi - lo > 1:                       # invariant: versions[lo] good, versions[hi] bad
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if good(mid) else (lo, mid)
    return versions[lo], versions[hi], seen
# --8<-- [end:bisect]


# --8<-- [start:classify]
def classify_diff(before: dict[str, object], after: dict[str, object]) -> dict[str, list[str]]:
    """Every changed key, filed under scheduling, kernels, dependencies or (otherwise) defaults."""
    out: dict[str, list[str]] = {"defaults": [], "scheduling": [], "kernels": [], "dependencies": []}
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key, "<unset>"), after.get(key, "<unset>")
        if a != b:
            cat = next((c for c, keys in CATEGORIES.items() if key in keys), "defaults")
            out[cat].append(f"{key}: {a} -> {b}")
    return out
# --8<-- [end:classify]
