"""Sparse attention with a lightning indexer and top-k selection (DeepSeek Sparse Attention, Q155): the
bytes each token keeps in the two caches, what one decode step reads and computes against full
attention, and the host-to-GPU traffic per step when the main cache lives off the GPU.

The mechanism (DeepSeek-V3.2-Exp and V3.2): in every layer a small indexer (``index_n_heads`` heads of
width ``index_head_dim``, one shared key per token) scores every earlier token; the main MLA attention
then attends only to the ``index_topk`` best. So the main cache must still hold every token (any of them
can be selected at a later step), the indexer adds its own key per token and layer, and one decode step
reads the whole indexer cache but only ``top-k`` rows of the main cache.

Byte layouts per token and layer, as the reference engines store them (vLLM 0.33.0
``vllm/v1/attention/backends/mla/flashmla_sparse.py``, ``vllm/models/deepseek_v32/attention.py``; SGLang
0.5.23 ``sglang/srt/mem_cache/kv_cache_configurator.py``, ``index_key_cache.py``), with ``r`` the MLA
latent width (``kv_lora_rank``) and ``p`` the RoPE key width (``qk_rope_head_dim``):

- ``bf16``: ``(r + p) x 2``.
- ``fp8_raw``: ``(r + p) x 1``, no scales (the TRT-LLM and TileLang layouts in SGLang).
- ``fp8_ds_mla``: ``r`` FP8 bytes + one FP32 scale per 128 values (``r / 128 x 4``) + the RoPE part in
  BF16 (``p x 2``): 656 bytes for DeepSeek-V3.2.
- ``nvfp4_ds_mla``: ``r / 2`` bytes of E2M1 + ``p`` FP8 bytes + one E4M3 scale per 16 values
  (``r / 16``): 352 bytes (vLLM, Blackwell SM100 only).
- indexer key, FP8: ``d`` bytes + one FP32 scale per 128 values (``d / 128 x 4``); BF16: ``2 d``.

Per decode step and layer, one query token: full attention reads ``context`` main rows; DSA reads
``context`` indexer rows and ``min(top-k, context)`` main rows. FLOPs: the indexer's scores cost
``2 x index_heads x index_dim`` per earlier token; MLA in its absorbed (MQA) form costs
``2 x heads x ((r + p) + r)`` per attended token (scores over ``r + p``, the value sum over ``r``).

Units: bytes, tokens, FLOPs. Nothing here reads the catalog; the render module passes the fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk

__all__ = ["DsaIndexer", "DSA_INDEXERS", "MLA_LAYOUTS", "mla_row_bytes", "indexer_row_bytes",
           "DsaStep", "dsa_step", "reload_bytes_per_step"]

#: Scale group of the FP8 layouts (one FP32 scale per 128 values), in both engines.
FP8_GROUP = 128
#: Scale group of NVFP4 (one E4M3 scale per 16 values).
NVFP4_GROUP = 16

MLA_LAYOUTS = ("bf16", "fp8_raw", "fp8_ds_mla", "nvfp4_ds_mla")


@dataclass(frozen=True)
class DsaIndexer:
    """A DSA model's indexer fields (config.json) and the catalog model that has its MLA geometry."""

    key: str
    name: str
    base_model: str        # catalog key with the same layers, kv_lora_rank and qk_rope_head_dim
    index_n_heads: int
    index_head_dim: int
    index_topk: int
    source: str


#: Indexer fields of DSA checkpoints. DeepSeek-V3.2(-Exp) keeps DeepSeek-V3's 61 layers, 128 heads and
#: MLA widths (kv_lora_rank 512, qk_rope_head_dim 64) and adds these three fields to config.json; vLLM
#: 0.33.0 reads them as ``config.index_topk``, ``config.index_n_heads``, ``config.index_head_dim``
#: (vllm/models/deepseek_v32/attention.py). Not a models.yaml field: the sizing calculator has no DSA.
DSA_INDEXERS = {
    "deepseek-v3.2": DsaIndexer(
        key="deepseek-v3.2", name="DeepSeek-V3.2", base_model="deepseek-v3",
        index_n_heads=64, index_head_dim=128, index_topk=2048,
        source="https://huggingface.co/deepseek-ai/DeepSeek-V3.2/blob/main/config.json"),
}


def mla_row_bytes(kv_lora_rank: int, rope_dim: int, layout: str) -> int:
    """Bytes one token keeps in one layer's main (MLA) cache in ``layout`` (see the module docstring)."""
    r = chk.positive_int("kv_lora_rank", kv_lora_rank)
    p = chk.non_negative_int("rope_dim", rope_dim)
    if layout == "bf16":
        return (r + p) * 2
    if layout == "fp8_raw":
        return r + p
    if layout == "fp8_ds_mla":
        if r % FP8_GROUP:
            raise ValueError(f"fp8_ds_mla needs kv_lora_rank divisible by {FP8_GROUP}, got {r}")
        return r + r // FP8_GROUP * 4 + p * 2
    if layout == "nvfp4_ds_mla":
        if r % NVFP4_GROUP:
            raise ValueError(f"nvfp4_ds_mla needs kv_lora_rank divisible by {NVFP4_GROUP}, got {r}")
        return r // 2 + p + r // NVFP4_GROUP
    raise ValueError(f"unknown MLA layout {layout!r}; valid: {', '.join(MLA_LAYOUTS)}")


def indexer_row_bytes(index_head_dim: int, dtype: str = "fp8") -> int:
    """Bytes one token keeps in one layer's indexer key cache: FP8 + FP32 scale per 128, or BF16."""
    d = chk.positive_int("index_head_dim", index_head_dim)
    if dtype == "fp8":
        if d % FP8_GROUP:
            raise ValueError(f"an FP8 indexer key needs index_head_dim divisible by {FP8_GROUP}, got {d}")
        return d + d // FP8_GROUP * 4
    if dtype == "bf16":
        return 2 * d
    raise ValueError(f"unknown indexer dtype {dtype!r}; valid: fp8, bf16")


@dataclass(frozen=True)
class DsaStep:
    """One decode step of one sequence, summed over layers: bytes read and FLOPs, full vs DSA."""

    attended: int            # main-cache rows DSA attends to per layer: min(top-k, context)
    full_read: float         # full attention: context x main row x layers
    index_read: float        # DSA: context x indexer row x layers
    topk_read: float         # DSA: attended x main row x layers
    full_flops: float        # full attention, absorbed MLA, all layers
    index_flops: float       # indexer scores, all layers
    topk_flops: float        # main attention over the selected rows, all layers

    @property
    def dsa_read(self) -> float:
        return self.index_read + self.topk_read

    @property
    def dsa_flops(self) -> float:
        return self.index_flops + self.topk_flops


def dsa_step(context: int, topk: int, layers: int, main_row: float, index_row: float, num_heads: int,
             kv_lora_rank: int, rope_dim: int, index_n_heads: int, index_head_dim: int) -> DsaStep:
    """Bytes read and FLOPs of one decode step (one query token) at ``context`` earlier tokens.

    Full: every layer reads ``context`` main rows and attends to all. DSA: every layer reads
    ``context`` indexer rows (scores them) and ``min(topk, context)`` main rows (attends to those).
    """
    n = chk.positive_int("context", context)
    k = chk.positive_int("topk", topk)
    L = chk.positive_int("layers", layers)
    chk.positive("main_row", main_row)
    chk.positive("index_row", index_row)
    h = chk.positive_int("num_heads", num_heads)
    r = chk.positive_int("kv_lora_rank", kv_lora_rank)
    p = chk.non_negative_int("rope_dim", rope_dim)
    ih = chk.positive_int("index_n_heads", index_n_heads)
    idim = chk.positive_int("index_head_dim", index_head_dim)
    a = min(k, n)
    per_token_attn = 2 * h * ((r + p) + r)
    return DsaStep(attended=a, full_read=L * n * main_row, index_read=L * n * index_row,
                   topk_read=L * a * main_row, full_flops=L * n * per_token_attn,
                   index_flops=L * n * 2 * ih * idim, topk_flops=L * a * per_token_attn)


def reload_bytes_per_step(topk: int, main_row: float, layers: int, miss_fraction: float) -> float:
    """Host-to-GPU bytes per decode step and sequence when the main cache lives in host memory and a GPU
    buffer keeps recently selected rows: ``layers x top-k x main row x miss fraction`` (the share of the
    selected rows not already in the buffer; 1 = nothing reused from the previous step)."""
    k = chk.positive_int("topk", topk)
    chk.positive("main_row", main_row)
    L = chk.positive_int("layers", layers)
    chk.non_negative("miss_fraction", miss_fraction)
    if miss_fraction > 1:
        raise ValueError(f"miss_fraction must be at most 1, got {miss_fraction!r}")
    return L * k * main_row * miss_fraction
