"""KV caches below FP8 (Q156): effective bits per cached element once the scales are counted, bytes per
token and tokens per GB, for the schemes the reference engines ship and the research schemes interviews
quote.

Effective bits of one side (K or V): ``element bits + overhead bits / group``, where the overhead is what
each group of ``group`` elements stores besides its codes (a scale, a zero point, a vector norm). A
scheme that treats K and V differently averages the two sides (they have the same element count).
A group of ``None`` means "one group per head vector" (the per-token-head schemes): the group is the
model's ``head_dim``. Bytes per token = KV elements per token x effective bits / 8, with
``KV elements per token = 2 x layers x kv_heads x head_dim`` (grouped-query attention).

What the table leaves out: per-layer or per-tensor scales (a few bytes per layer), byte alignment of a
packed slot, KIVI's full-precision residual window of recent tokens, and layers an engine keeps
unquantized (vLLM 0.33.0 keeps the first and last two attention layers of a dense model at the model
dtype for TurboQuant; ``KvScheme.note`` says so where it applies).

Sources: vLLM 0.33.0 ``vllm/v1/attention/backends/triton_attn.py`` (per-token-head: one FP32 scale per
K and per V head vector), ``vllm/utils/torch_utils.py`` (NVFP4: ``head/2 + head/16`` bytes per head
vector), ``vllm/model_executor/layers/quantization/turboquant/config.py`` (TurboQuant: MSE key codes + an
FP16 norm per key vector; value codes + FP16 scale and FP16 zero per value vector); KIVI
(Liu et al., ICML 2024, arXiv 2402.02750: asymmetric 2- or 4-bit with an FP16 scale and zero point per
group of 32).

Units: bits, bytes, tokens; GB = 10^9 bytes.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk

__all__ = ["KvSide", "KvScheme", "KV_SCHEMES", "kv_scheme", "side_bits", "scheme_bits", "kv_elements_per_token",
           "lowbit_bytes_per_token", "tokens_per_gb"]


@dataclass(frozen=True)
class KvSide:
    """How one of K or V is stored: code bits per element, group size (None = head_dim), overhead bits."""

    element_bits: float
    group: int | None
    overhead_bits: float


@dataclass(frozen=True)
class KvScheme:
    key: str
    label: str
    where: str           # engine value or paper name as a reader meets it
    k: KvSide
    v: KvSide
    source: str
    note: str = ""


def _same(bits: float, group: int | None, overhead: float) -> tuple[KvSide, KvSide]:
    s = KvSide(bits, group, overhead)
    return s, s


KV_SCHEMES: dict[str, KvScheme] = {s.key: s for s in [
    KvScheme("bf16", "BF16", "vLLM `auto` / `bfloat16`", *_same(16, None, 0),
             "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/config/cache.py"),
    KvScheme("fp8", "FP8 E4M3, per-tensor scale", "vLLM `fp8`, SGLang `fp8_e4m3`", *_same(8, None, 0),
             "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/config/cache.py",
             "one scale per layer for K and one for V, a few bytes per layer"),
    KvScheme("fp8-pth", "FP8, FP32 scale per token and head", "vLLM `fp8_per_token_head`", *_same(8, None, 32),
             "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/attention/backends/triton_attn.py"),
    KvScheme("int4-pth", "INT4, FP32 scale per token and head", "vLLM `int4_per_token_head`",
             *_same(4, None, 32),
             "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/attention/backends/triton_attn.py"),
    KvScheme("nvfp4", "NVFP4 (E2M1, E4M3 scale per 16)", "vLLM `nvfp4`, SGLang `nvfp4`", *_same(4, 16, 8),
             "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/utils/torch_utils.py",
             "plus one FP32 scale per tensor"),
    KvScheme("kivi-4", "KIVI 4-bit (group 32, FP16 scale + zero)", "KIVI paper; no engine flag",
             *_same(4, 32, 32), "https://arxiv.org/abs/2402.02750",
             "plus a full-precision window of the most recent tokens"),
    KvScheme("tq-4", "TurboQuant 4-bit K and V", "vLLM `turboquant_4bit_nc`",
             KvSide(4, None, 16), KvSide(4, None, 32),
             "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/model_executor/layers/quantization/"
             "turboquant/config.py", "first and last two attention layers kept at the model dtype"),
    KvScheme("tq-k3v4", "TurboQuant 3-bit K, 4-bit V", "vLLM `turboquant_k3v4_nc`",
             KvSide(3, None, 16), KvSide(4, None, 32),
             "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/model_executor/layers/quantization/"
             "turboquant/config.py", "first and last two attention layers kept at the model dtype"),
    KvScheme("tq-3", "TurboQuant 3-bit K and V", "vLLM `turboquant_3bit_nc`",
             KvSide(3, None, 16), KvSide(3, None, 32),
             "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/model_executor/layers/quantization/"
             "turboquant/config.py", "first and last two attention layers kept at the model dtype"),
    KvScheme("kivi-2", "KIVI 2-bit (group 32, FP16 scale + zero)", "KIVI paper; no engine flag",
             *_same(2, 32, 32), "https://arxiv.org/abs/2402.02750",
             "plus a full-precision window of the most recent tokens"),
    KvScheme("int2-g128", "INT2, group 128, FP16 scale + zero", "illustration; no engine flag",
             *_same(2, 128, 32), "https://arxiv.org/abs/2402.02750",
             "larger groups cut the overhead and cost accuracy"),
]}


def kv_scheme(key: str) -> KvScheme:
    try:
        return KV_SCHEMES[key]
    except KeyError:
        raise ValueError(f"unknown KV scheme {key!r}; valid: {', '.join(KV_SCHEMES)}") from None


def side_bits(side: KvSide, head_dim: int) -> float:
    """Effective bits per element of one side: ``element bits + overhead / group`` (group None = head_dim)."""
    chk.positive("element_bits", side.element_bits)
    chk.non_negative("overhead_bits", side.overhead_bits)
    g = chk.positive_int("head_dim", head_dim) if side.group is None else chk.positive_int("group", side.group)
    return side.element_bits + side.overhead_bits / g


def scheme_bits(scheme: KvScheme, head_dim: int) -> float:
    """Effective bits per cached element, K and V averaged (equal element counts)."""
    return (side_bits(scheme.k, head_dim) + side_bits(scheme.v, head_dim)) / 2


def kv_elements_per_token(num_layers: int, num_kv_heads: int, head_dim: int) -> int:
    """Cached K and V elements per token: ``2 x layers x kv_heads x head_dim``."""
    return 2 * chk.positive_int("num_layers", num_layers) * chk.positive_int("num_kv_heads", num_kv_heads) \
        * chk.positive_int("head_dim", head_dim)


def lowbit_bytes_per_token(elements: int, bits: float) -> float:
    """Bytes per token at ``bits`` effective bits per element."""
    return chk.positive_int("elements", elements) * chk.positive("bits", bits) / 8


def tokens_per_gb(bytes_per_token: float) -> float:
    """Tokens of KV one GB (10^9 bytes) holds, not rounded."""
    return 1e9 / chk.positive("bytes_per_token", bytes_per_token)
