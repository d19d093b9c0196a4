from dataclasses import field
from typing import ClassVar, Literal

from pydantic import Field

CacheDType = Literal["auto", "fp8", "fp8_e4m3"]
Policy = Literal["lru", "fifo"]


class CacheConfig:
    DEFAULT_BLOCK_SIZE: ClassVar[int] = 16
    block_size: int = Field(default=None, gt=0)
    gpu_memory_utilization: float = Field(default=0.92, gt=0, le=1)
    cache_dtype: CacheDType | str = "auto"
    eviction: Policy = "lru"
    enable_prefix_caching: bool = True
    swap_space: float = 4
    extra: dict = field(default_factory=dict)
    _private: int = 3
