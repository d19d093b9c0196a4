import argparse
from dataclasses import dataclass

from vllm.config.cache import CacheConfig


def get_kwargs(cls):
    return {}


@dataclass
class EngineArgs:
    gpu_memory_utilization: float = CacheConfig.gpu_memory_utilization
    enable_log_requests: bool = False

    @staticmethod
    def add_cli_args(parser):
        cache_kwargs = get_kwargs(CacheConfig)
        group = parser.add_argument_group(title="CacheConfig")
        group.add_argument("--gpu-memory-utilization", "--device-memory-utilization",
                           **cache_kwargs["gpu_memory_utilization"])
        group.add_argument("--kv-cache-dtype", **cache_kwargs["cache_dtype"])
        group.add_argument("--eviction", **cache_kwargs["eviction"])
        group.add_argument("--enable-prefix-caching", **{**cache_kwargs["enable_prefix_caching"], "default": None})
        group.add_argument("--swap-space", **cache_kwargs["swap_space"], default=8)
        parser.add_argument("--shutdown-timeout", type=int, default=0, help="0 = abort")
        parser.add_argument("--enable-log-requests", action=argparse.BooleanOptionalAction,
                            default=EngineArgs.enable_log_requests)
        return parser

    @classmethod
    def get_batch_defaults(cls, world_size):
        if device_memory >= 160 * GiB_bytes:
            default_max_num_batched_tokens = {UsageContext.LLM_CLASS: 16384, UsageContext.OPENAI_API_SERVER: 16384}
            default_max_num_seqs = {UsageContext.LLM_CLASS: 1024, UsageContext.OPENAI_API_SERVER: 1024}
        elif device_memory >= 70 * GiB_bytes and "a100" not in device_name:
            default_max_num_batched_tokens = {UsageContext.LLM_CLASS: 16384, UsageContext.OPENAI_API_SERVER: 8192}
            default_max_num_seqs = {UsageContext.LLM_CLASS: 1024, UsageContext.OPENAI_API_SERVER: 1024}
        else:
            default_max_num_batched_tokens = {UsageContext.LLM_CLASS: 8192, UsageContext.OPENAI_API_SERVER: 2048}
            default_max_num_seqs = {UsageContext.LLM_CLASS: 256, UsageContext.OPENAI_API_SERVER: 256}
        return default_max_num_batched_tokens, default_max_num_seqs
