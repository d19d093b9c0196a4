import os

from prometheus_client import Counter, Gauge, Histogram


class PrometheusStatLogger:
    _gauge_cls = Gauge
    _counter_cls = Counter

    def __init__(self, show_hidden):
        self.g = self._gauge_cls(name="vllm:num_requests_running", documentation="Running requests.")
        self.c = self._counter_cls(name="vllm:prompt_tokens", documentation="Prompt tokens.")
        self.h = Histogram(name="vllm:time_to_first_token_seconds", documentation="TTFT.")
        if show_hidden:
            self.old = self._gauge_cls(name="vllm:gpu_cache_usage_perc", documentation="Old name.")
        self.op = "vllm::unified_attention"
        self.port = os.environ.get("VLLM_METRICS_PORT", "9000")


class SpecDecodingProm:
    _counter_cls = Counter

    def __init__(self):
        counter_specs = [
            ("vllm:spec_decode_num_drafts", "Number of drafts."),
            ("vllm:spec_decode_num_accepted_tokens", "Accepted tokens."),
        ]
        self.counters = [self._counter_cls(name=n, documentation=d) for n, d in counter_specs]

    def info(self, kind):
        name = None
        if kind == "cache_config":
            name = "vllm:cache_config_info"
        return self._gauge_cls(name=name, documentation="Info.")
