"""Named mistakes: the wrong formulas people reach for under interview pressure, as formulas.

Each function is one mistake written out exactly, so that a wrong answer can be recognised ("your
figure is what query heads instead of KV heads gives") rather than only marked wrong. They are tested
like the right formulas (tests/test_formulas_traps.py): by hand arithmetic on catalog models, and
against the right formula where the mistake does not matter (an MHA model has as many KV heads as
query heads, so that mistake gives the right figure there). The napkin-math drills
(:mod:`sitebuild.drills`) compose them; nothing here is used to size anything.

:data:`TRAPS` names every mistake and says in one sentence why it is wrong; the drills show that
text. Units as in the right formulas: bytes, seconds, FLOP/s, US dollars.
"""

from __future__ import annotations

from . import _checks as chk
from .memory import bits_of, kv_element_bytes, kv_layer_counts, weight_bytes, weight_bytes_breakdown
from .params import param_breakdown

__all__ = [
    "TRAPS",
    "element_bits",
    "kv_per_layer_query_heads",
    "kv_per_layer_hidden_size",
    "kv_per_layer_k_or_v_once",
    "kv_per_layer_mla_as_mha",
    "kv_per_layer_bits_as_bytes",
    "kv_per_token_with",
    "kv_per_sequence_with",
    "weight_bytes_bits_as_bytes",
    "weight_bytes_embeddings_quantized",
    "weight_bytes_scale_forgotten",
    "weight_bytes_active_for_total",
    "weight_bytes_read_all_experts",
    "gb_read_as_gib",
    "gib_read_as_gb",
    "sparse_flops_as_dense",
    "bidirectional_as_per_direction",
    "allreduce_time_one_per_layer",
    "allreduce_time_no_latency",
    "allreduce_time_no_ring_factor",
    "valid_tp_kv_capped",
    "valid_tp_heads_only",
    "valid_tp_powers_of_two",
    "effective_bits_scale_per_weight",
]

#: key -> (what the mistake is, why it is wrong). Shown to the reader when a wrong answer matches it.
TRAPS: dict[str, tuple[str, str]] = {
    "query_heads": ("query heads instead of KV heads",
                    "Under grouped-query attention only num_key_value_heads heads are cached; "
                    "num_attention_heads counts the query heads that share them."),
    "hidden_size": ("hidden_size in the KV formula",
                    "2 × layers × hidden_size assumes every query head keeps its own K and V (plain MHA); "
                    "GQA, MQA and MLA cache far less."),
    "k_or_v_once": ("K or V counted once",
                    "Every cached head stores a key vector and a value vector: the factor 2."),
    "mla_as_mha": ("MLA cached as per-head K and V",
                   "MLA caches one compressed latent (kv_lora_rank) and one shared RoPE key per layer, "
                   "not a key and a value for each head."),
    "linear_as_attention": ("constant-state layers counted as KV layers",
                            "Linear-attention layers keep a fixed state per sequence; only the "
                            "full-attention layers grow with every token."),
    "window_ignored": ("sliding window ignored",
                       "A sliding-window layer keeps at most window tokens, however long the context."),
    "bits_as_bytes": ("bits used as bytes",
                      "Bits per element divide by 8 to give bytes."),
    "gb_as_gib": ("GB read as GiB",
                  "A figure worked out in GB (10^9 bytes) was written as GiB (2^30 bytes): 7.4% too large."),
    "gib_as_gb": ("GiB read as GB",
                  "A figure in GiB (2^30 bytes) was taken as GB (10^9 bytes): 7.4% too small."),
    "tp_share_forgotten": ("per-GPU share forgotten under tensor parallelism",
                           "Tensor parallelism splits the weights (and the KV heads) across the GPUs; each "
                           "GPU holds and reads its share."),
    "kv_share_forgotten": ("KV cache not divided across the GPUs",
                           "Under tensor parallelism each GPU caches only its KV heads; an MLA latent is "
                           "the exception (every GPU keeps it whole)."),
    "util_forgotten": ("memory fraction forgotten",
                       "The engine takes only --gpu-memory-utilization of the GPU's memory."),
    "ledger_forgotten": ("activations and runtime reserve forgotten",
                         "The activation peak and the runtime's own pool come off the memory before "
                         "the KV cache gets the rest."),
    "active_for_total": ("active parameters where every parameter is stored",
                         "A mixture of experts keeps every expert in memory; only compute and "
                         "reads per token use the active ones."),
    "total_for_active": ("total parameters where only the active ones compute",
                         "Each token runs through its top-k experts only, so compute scales with the "
                         "active parameters."),
    "embeddings_quantized": ("embedding and lm_head counted at the format's bits",
                             "INT4, NF4, INT8 and FP8 tools quantize the decoder's linear layers; the embedding "
                             "and lm_head stay in 16-bit."),
    "scale_forgotten": ("scale overhead forgotten",
                        "Block formats store a scale per group: the effective bits are element bits + "
                        "scale bits / group size."),
    "scale_per_weight": ("scale counted for every weight",
                         "One scale serves a whole group; it costs scale bits / group size per weight."),
    "bytes_for_bits": ("bytes per weight given as bits",
                       "The figure is bits per weight: 8 times the bytes."),
    "all_experts": ("every expert read each step",
                    "A decode step reads only the experts its tokens are routed to (top-k per token)."),
    "kv_reads_forgotten": ("KV reads forgotten",
                           "Each decode step also reads every sequence's KV cache, which grows with the "
                           "context."),
    "comm_forgotten": ("all-reduce time forgotten",
                       "Under tensor parallelism every layer waits for two all-reduces per step."),
    "weights_per_sequence": ("weights read once per sequence, not once per step",
                             "A batched step reads each weight once for the whole batch; that is why "
                             "batching raises throughput."),
    "per_sequence_rate": ("one sequence's rate instead of the batch's",
                          "The aggregate rate is the batch size times each sequence's rate."),
    "sparse_flops": ("dense FLOPS taken from a sparse figure",
                     "Many datasheets print tensor rates with 2:4 structured sparsity, twice the dense rate an "
                     "ordinary matmul gets."),
    "mfu_forgotten": ("MFU forgotten",
                      "Real kernels reach a fraction of peak; the time divides by peak × MFU."),
    "one_flop_per_param": ("one FLOP per parameter instead of two",
                           "Each weight does a multiply and an add per token: 2 FLOPs."),
    "attention_forgotten": ("attention FLOPs forgotten",
                            "The attention scores grow with the square of the prompt length and "
                            "dominate long prompts."),
    "bf16_rate_for_fp8": ("BF16 rate for FP8 matmuls",
                          "FP8 matmuls run at the GPU's FP8 rate, twice its BF16 rate."),
    "ridge_as_batch": ("ridge point taken as the batch",
                       "The intensity of a decode matmul is 2 × batch / bytes per weight; the batch is "
                       "ridge × bytes per weight / 2."),
    "ttft_only": ("time to first token used as the whole time in the system",
                  "A request stays in the system until its last token: TTFT + output tokens × TPOT."),
    "ttft_forgotten": ("time to first token left out",
                       "A request is in the system from arrival: TTFT comes before the decode time."),
    "ms_as_s": ("milliseconds used as seconds",
                "Little's law needs the rate and the time in the same unit."),
    "gpus_forgotten": ("GPU count forgotten",
                       "The price is per GPU-hour; the deployment pays for every GPU in it."),
    "idle_forgotten": ("idle hours forgotten",
                       "Idle GPU hours cost the same; divide by the share of hours the GPUs are busy."),
    "output_price_only": ("output price instead of the blended price",
                          "Traffic mixes input and output tokens; the API charges each at its own price."),
    "input_price_only": ("input price instead of the blended price",
                         "Traffic mixes input and output tokens; the API charges each at its own price."),
    "bidirectional": ("bidirectional bandwidth used as per direction",
                      "NVLink and PCIe datasheets print both directions added together; a ring "
                      "all-reduce moves its bytes at the one-direction rate."),
    "one_allreduce_per_layer": ("one all-reduce per layer instead of two",
                                "Megatron-style TP all-reduces after attention and again after the MLP."),
    "latency_forgotten": ("per-call latency forgotten",
                          "At decode sizes an all-reduce costs mostly its fixed latency, twice per layer."),
    "ring_factor_forgotten": ("ring factor 2(p − 1)/p forgotten",
                              "A ring all-reduce sends 2(p − 1)/p of the buffer from each GPU: a "
                              "reduce-scatter then an all-gather."),
    "batch_forgotten": ("one token's activations instead of the batch's",
                        "Each all-reduce carries the activations of every token in the step."),
    "kv_capped_tp": ("TP capped at the KV-head count",
                     "Engines replicate KV heads when TP exceeds them, so larger TP degrees that are "
                     "multiples of the KV-head count are valid too."),
    "heads_only_tp": ("only the query heads checked",
                      "The KV heads (split or evenly replicated) and the MLP widths must divide as well."),
    "powers_of_two": ("every power of two assumed valid",
                      "TP must divide the head counts and widths of this model; not every power of two does."),
}


def element_bits(fmt) -> float:
    """A format's bits per element without its scales: ``bits_per_weight - scale_bits / group_size``
    for a block format (INT4-g128: 4.125 - 16/128 = 4), its bits for any other."""
    bits = bits_of(fmt)
    group = getattr(fmt, "group_size", None)
    scale = getattr(fmt, "scale_bits", None)
    if group and scale:
        return bits - scale / group
    return bits


# --------------------------------------------------------------------------------------------------
# KV cache: wrong per-layer figures and wrong layer counts
# --------------------------------------------------------------------------------------------------

def _gqa_only(model, what: str) -> None:
    if model.mla is not None:
        raise ValueError(f"{model.key}: {what} applies to per-head K/V caches, not to MLA")


def kv_per_layer_query_heads(model, kv_dtype) -> float:
    """Per-layer KV bytes per token with the query heads: ``2 x num_attention_heads x head_dim x bytes``."""
    _gqa_only(model, "the query-heads mistake")
    return 2 * model.num_attention_heads * model.head_dim * kv_element_bytes(kv_dtype)


def kv_per_layer_hidden_size(model, kv_dtype) -> float:
    """Per-layer KV bytes per token by the MHA-only formula: ``2 x hidden_size x bytes``."""
    return 2 * model.hidden_size * kv_element_bytes(kv_dtype)


def kv_per_layer_k_or_v_once(model, kv_dtype) -> float:
    """Per-layer KV bytes per token without the factor 2: ``num_key_value_heads x head_dim x bytes``."""
    _gqa_only(model, "the K-or-V-once mistake")
    return model.num_key_value_heads * model.head_dim * kv_element_bytes(kv_dtype)


def kv_per_layer_mla_as_mha(model, kv_dtype) -> float:
    """An MLA layer sized as if it cached per-head K and V, from the config's head fields:
    ``2 x num_key_value_heads x head_dim x bytes`` (DeepSeek-V3: 2 x 128 x 192 x 2 = 98,304 bytes,
    against the right (512 + 64) x 2 = 1,152)."""
    if model.mla is None:
        raise ValueError(f"{model.key}: the MLA-as-MHA mistake applies to MLA models only")
    return 2 * model.num_key_value_heads * model.head_dim * kv_element_bytes(kv_dtype)


def kv_per_layer_bits_as_bytes(model, kv_dtype) -> float:
    """Per-layer KV bytes per token with the element's bits taken as bytes (8 times the right figure)."""
    from .memory import kv_bytes_per_token_per_layer  # the right figure, times 8
    return kv_bytes_per_token_per_layer(model, kv_dtype) * 8


def kv_per_token_with(model, per_layer: float, *, linear_as_attention: bool = False) -> float:
    """KV bytes per token from a per-layer figure, over the layers that cache KV (full and sliding);
    with ``linear_as_attention`` the constant-state layers are counted as caching layers too."""
    chk.positive("per_layer", per_layer)
    full, sliding, linear = kv_layer_counts(model)
    return per_layer * (full + sliding + (linear if linear_as_attention else 0))


def kv_per_sequence_with(model, context: int, per_layer: float, *, window: bool = True,
                         linear_as_attention: bool = False) -> float:
    """KV bytes of one sequence from a per-layer figure, counted as :func:`memory.kv_bytes_per_sequence`
    counts (so the right per-layer figure gives the right answer), or with a counting mistake:
    ``window=False`` keeps every token on the sliding-window layers; ``linear_as_attention`` counts the
    constant-state layers as full-attention layers (and drops their states)."""
    chk.positive("per_layer", per_layer)
    chk.non_negative_int("context", context)
    full, sliding, linear = kv_layer_counts(model)
    size = model.sliding_window.size if model.sliding_window else 0
    kept = min(context, size) if window else context
    if linear_as_attention:
        return per_layer * ((full + linear) * context + sliding * kept)
    state = model.linear_attention.state_bytes_per_layer * linear if model.linear_attention else 0.0
    return per_layer * (full * context + sliding * kept) + state


# --------------------------------------------------------------------------------------------------
# weights
# --------------------------------------------------------------------------------------------------

def weight_bytes_bits_as_bytes(model, fmt, expert_fmt=None) -> float:
    """Weight bytes with bits taken as bytes: ``parameters x bits`` (8 times the right figure)."""
    return weight_bytes(model, fmt, expert_fmt) * 8


def weight_bytes_embeddings_quantized(model, fmt, expert_fmt=None) -> float:
    """Weight bytes with the embedding and lm_head at ``fmt``'s own bits, ignoring a weight-only
    format's rule that keeps them in 16-bit."""
    return weight_bytes(model, fmt, expert_fmt, embed_fmt=bits_of(fmt))


def weight_bytes_scale_forgotten(model, fmt, expert_fmt=None) -> float:
    """Weight bytes at the element bits of every format (:func:`element_bits`): block scales left out.
    Embeddings follow the format's rule as in the right formula."""
    emb = getattr(fmt, "embedding_bits_per_weight", None)
    embed = emb if emb is not None else element_bits(fmt)
    expert = element_bits(expert_fmt) if expert_fmt is not None else None
    return weight_bytes(model, element_bits(fmt), expert, embed_fmt=embed)


def weight_bytes_active_for_total(model, fmt, expert_fmt=None) -> float:
    """The bytes of the parameters one token uses (non-expert weights and its top-k experts), given as
    the model's footprint."""
    return weight_bytes_breakdown(model, fmt, expert_fmt).active


def weight_bytes_read_all_experts(model, fmt, batch: int, expert_fmt=None) -> float:
    """Weight bytes a decode step reads if every routed expert were read whatever the routing: the
    whole model, less the input-embedding rows the step does not look up (as in
    :func:`speed.weight_bytes_read_per_step`)."""
    chk.positive_int("batch", batch)
    b = param_breakdown(model)
    wb = weight_bytes_breakdown(model, fmt, expert_fmt, breakdown=b)
    lookup_only = 0.0
    if b.lm_head:
        lookup_only = (b.embedding - min(batch, model.vocab_size) * model.hidden_size) * (wb.embeddings / b.embeddings)
    return wb.total - lookup_only


# --------------------------------------------------------------------------------------------------
# units and datasheet figures
# --------------------------------------------------------------------------------------------------

GB, GiB = 10**9, 2**30


def gb_read_as_gib(n_bytes: float) -> float:
    """The bytes someone means who works a figure out in GB and writes it as GiB: ``x / GB x GiB``."""
    return n_bytes / GB * GiB


def gib_read_as_gb(n_bytes: float) -> float:
    """The bytes someone means who reads a figure in GiB as GB: ``x / GiB x GB``."""
    return n_bytes / GiB * GB


def sparse_flops_as_dense(dense_flops: float) -> float:
    """The with-sparsity tensor rate a datasheet prints (2:4 structured sparsity): twice the dense rate."""
    chk.positive("dense_flops", dense_flops)
    return 2 * dense_flops


def bidirectional_as_per_direction(per_direction: float) -> float:
    """The link rate a datasheet prints for NVLink or PCIe (both directions added): twice one direction."""
    chk.positive("per_direction", per_direction)
    return 2 * per_direction


# --------------------------------------------------------------------------------------------------
# tensor-parallel all-reduce
# --------------------------------------------------------------------------------------------------

def _ring(buffer: float, n: int) -> float:
    return 2 * (n - 1) / n * buffer


def _step_buffer(model, tokens: int, element_bytes: float) -> float:
    chk.positive_int("tokens", tokens)
    chk.positive("element_bytes", element_bytes)
    return tokens * model.hidden_size * element_bytes


def allreduce_time_one_per_layer(model, tokens: int, element_bytes: float, tp: int, latency_s: float,
                                 link_bytes_per_s: float) -> float:
    """TP step all-reduce time with one all-reduce per layer: half of
    :func:`parallel.tp_decode_allreduce_time`."""
    from .parallel import allreduce_time
    return model.num_hidden_layers * allreduce_time(_step_buffer(model, tokens, element_bytes), tp, latency_s,
                                                    link_bytes_per_s)


def allreduce_time_no_latency(model, tokens: int, element_bytes: float, tp: int, latency_s: float,
                              link_bytes_per_s: float) -> float:
    """TP step all-reduce time from the bytes alone: ``2 x layers x 2(p-1)/p x buffer / link``."""
    chk.non_negative("latency_s", latency_s)
    chk.positive("link_bytes_per_s", link_bytes_per_s)
    buf = _step_buffer(model, tokens, element_bytes)
    return 2 * model.num_hidden_layers * (_ring(buf, tp) / link_bytes_per_s)


def allreduce_time_no_ring_factor(model, tokens: int, element_bytes: float, tp: int, latency_s: float,
                                  link_bytes_per_s: float) -> float:
    """TP step all-reduce time with the whole buffer sent once: ``2 x layers x (latency + buffer / link)``."""
    chk.non_negative("latency_s", latency_s)
    chk.positive("link_bytes_per_s", link_bytes_per_s)
    chk.positive_int("tp", tp)
    buf = _step_buffer(model, tokens, element_bytes)
    return 2 * model.num_hidden_layers * (latency_s + buf / link_bytes_per_s)


# --------------------------------------------------------------------------------------------------
# valid TP degrees
# --------------------------------------------------------------------------------------------------

def _kv_heads(model) -> int:
    return model.num_attention_heads if model.mla is not None else model.num_key_value_heads


def valid_tp_kv_capped(model, max_tp: int = 16) -> list[int]:
    """TP degrees up to ``max_tp`` that divide the query heads, the KV heads and the widths, with TP
    never above the KV-head count (KV-head replication forgotten)."""
    from .parallel import valid_tp_degrees
    kv = _kv_heads(model)
    return [t for t in valid_tp_degrees(model, max_tp) if t <= kv]


def valid_tp_heads_only(model, max_tp: int = 16) -> list[int]:
    """TP degrees up to ``max_tp`` that divide ``num_attention_heads``, nothing else checked."""
    chk.positive_int("max_tp", max_tp)
    return [t for t in range(1, max_tp + 1) if model.num_attention_heads % t == 0]


def valid_tp_powers_of_two(max_tp: int = 16) -> list[int]:
    """Every power of two up to ``max_tp``."""
    chk.positive_int("max_tp", max_tp)
    out, t = [], 1
    while t <= max_tp:
        out.append(t)
        t *= 2
    return out


# --------------------------------------------------------------------------------------------------
# block formats
# --------------------------------------------------------------------------------------------------

def effective_bits_scale_per_weight(bits: float, scale_bits: float) -> float:
    """Effective bits with the group's scale charged to every weight: ``bits + scale_bits``."""
    chk.positive("bits", bits)
    chk.non_negative("scale_bits", scale_bits)
    return bits + scale_bits
