"""Every metric name a monitoring page or rule file may use, with the engine release that exposes it.

The PromQL test (tests/test_promql.py) fails on a metric name that is not here, so a page cannot show
a query on a metric that does not exist. Names are as Prometheus stores them: counters with their
``_total`` suffix, histograms expanded to ``_bucket``/``_sum``/``_count`` by :func:`known_names`.
"""

from __future__ import annotations

VLLM = ("vLLM 0.11.0", "https://github.com/vllm-project/vllm/blob/v0.11.0/vllm/v1/metrics/loggers.py")
VLLM_HTTP = ("vLLM 0.11.0 API server (prometheus-fastapi-instrumentator 7.x, default metrics)",
             "https://github.com/vllm-project/vllm/blob/v0.11.0/vllm/entrypoints/openai/api_server.py")
PROMETHEUS = ("Prometheus 2.42.0, synthetic series written for every scrape target",
              "https://github.com/prometheus/prometheus/blob/v2.42.0/docs/concepts/jobs_instances.md")
DCGM = ("dcgm-exporter 4.5.3-4.8.2, etc/default-counters.csv",
        "https://github.com/NVIDIA/dcgm-exporter/blob/4.5.3-4.8.2/etc/default-counters.csv")

#: name -> (kind, (source, url)). kind is counter, gauge or histogram.
METRICS: dict[str, tuple[str, tuple[str, str]]] = {
    # vLLM 0.11, V1 engine: scheduler state and KV cache
    "vllm:num_requests_running": ("gauge", VLLM),
    "vllm:num_requests_waiting": ("gauge", VLLM),
    "vllm:kv_cache_usage_perc": ("gauge", VLLM),
    "vllm:num_preemptions_total": ("counter", VLLM),
    "vllm:prefix_cache_queries_total": ("counter", VLLM),
    "vllm:prefix_cache_hits_total": ("counter", VLLM),
    "vllm:prompt_tokens_total": ("counter", VLLM),
    "vllm:generation_tokens_total": ("counter", VLLM),
    "vllm:request_success_total": ("counter", VLLM),
    # vLLM 0.11 histograms
    "vllm:time_to_first_token_seconds": ("histogram", VLLM),
    "vllm:inter_token_latency_seconds": ("histogram", VLLM),
    "vllm:request_time_per_output_token_seconds": ("histogram", VLLM),
    "vllm:e2e_request_latency_seconds": ("histogram", VLLM),
    "vllm:request_queue_time_seconds": ("histogram", VLLM),
    "vllm:request_prefill_time_seconds": ("histogram", VLLM),
    "vllm:request_decode_time_seconds": ("histogram", VLLM),
    "vllm:request_prompt_tokens": ("histogram", VLLM),
    "vllm:request_generation_tokens": ("histogram", VLLM),
    # vLLM 0.11 OpenAI-compatible server, HTTP layer
    "http_requests_total": ("counter", VLLM_HTTP),
    "http_request_duration_seconds": ("histogram", VLLM_HTTP),
    # Prometheus itself: 1 if the target's last scrape succeeded, 0 if it failed
    "up": ("gauge", PROMETHEUS),
    # NVIDIA DCGM exporter, default counters
    "DCGM_FI_DEV_GPU_UTIL": ("gauge", DCGM),
    "DCGM_FI_DEV_FB_USED": ("gauge", DCGM),
    "DCGM_FI_DEV_FB_FREE": ("gauge", DCGM),
    "DCGM_FI_DEV_XID_ERRORS": ("gauge", DCGM),
    "DCGM_FI_PROF_GR_ENGINE_ACTIVE": ("gauge", DCGM),
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": ("gauge", DCGM),
    "DCGM_FI_PROF_DRAM_ACTIVE": ("gauge", DCGM),
}

_SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "counter": ("",), "gauge": ("",)}


def known_names() -> dict[str, str]:
    """Every series name a query may select, mapped to the source that documents it."""
    out = {}
    for name, (kind, (source, _url)) in METRICS.items():
        for suffix in _SUFFIXES[kind]:
            out[name + suffix] = source
    return out
