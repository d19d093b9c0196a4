"""A Hugging Face ``config.json`` read into the fields the sizing engine uses: the Python reference of
the calculator's pasted-config path (``parseConfig`` in ``docs/assets/javascripts/calc-engine.js``).

:func:`parse_config` returns what it found, which defaults it applied, which fields it could not
interpret, and the model record. It never guesses an architecture feature: a field that changes the
sizing and that the engine does not model (chunked attention, Mamba layers, an unknown layer type, a
sliding window whose layers it cannot place) is an error that names the field. Key names per family
follow transformers' configuration classes (LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config,
Gemma2Config, DeepseekV3Config, GptOssConfig, Qwen3NextConfig) and, for Kimi K3's text config
(``KimiK3TextConfig``: ``linear_attn_config``, ``routed_expert_hidden_size``, ``latent_moe_use_norm``,
``mla_use_output_gate``), the field names vLLM 0.33's ``vllm/models/kimi_k3`` reads.
"""

from __future__ import annotations

import math

from macros.catalog import Kda, LinearAttention, Mla, Model, Moe, SlidingWindow
from macros.formulas import kda_state_bytes

# model_type -> default of a field config.json may leave out (transformers' config class defaults)
TIED_BY_DEFAULT = ("gemma", "gemma2")
QKV_BIAS_ALWAYS = ("qwen2",)          # Qwen2's attention has q/k/v biases whatever the config says
ALL_LAYERS_SLIDING = ("mistral", "mixtral")
USE_SLIDING_FLAG = ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe")
ALTERNATING_SLIDING = ("gemma2",)     # even layers local (transformers: is_sliding = not layer_idx % 2)
LINEAR_STATE_BYTES = 2                # Gated DeltaNet state kept in BF16, as the catalog's qwen3-next entry
EXPERT_COUNT_KEYS = ("n_routed_experts", "num_local_experts", "num_experts")
KDA_STATE_BYTES = (4, 2)              # KDA recurrent state FP32, conv state BF16 (vLLM 0.33 defaults)
SHARED_COUNT_KEYS = ("n_shared_experts", "num_shared_experts")
TOP_K_KEYS = ("num_experts_per_tok", "experts_per_token", "num_experts_per_token")
LAYER_TYPES = ("full_attention", "sliding_attention", "linear_attention")
# Present and set, these change the sizing in ways the engine does not model.
NOT_MODELLED = {
    "attention_chunk_size": "chunked local attention (Llama 4)",
    "hybrid_override_pattern": "Mamba/attention hybrid layers (Nemotron-H)",
    "layers_block_type": "Mamba/attention hybrid layers",
    "attn_layer_period": "Mamba/attention hybrid layers (Jamba)",
    "cross_attention_layers": "cross-attention layers (Llama 3.2 Vision)",
    "num_kv_shared_layers": "layers that share another layer's KV cache",
    "kv_sharing_layer_map": "layers that share another layer's KV cache",
    "mlp_layer_types": "per-layer MLP types",
    "index_topk": "a sparse-attention indexer (DeepSeek sparse attention)",
    "sliding_window_pattern": "a sliding-window pattern (Gemma 3)",
}


def _whole(v) -> bool:
    return type(v) in (int, float) and math.isfinite(v) and float(v).is_integer() and v >= 1


def _has(cfg: dict, key: str) -> bool:
    return key in cfg and cfg[key] is not None


def _flag(v) -> bool:
    return v is not None and v is not False and v != 0 and v != [] and v != {} and v != ""


def _compressed_tensors_format(groups) -> str | None:
    """Format of a compressed-tensors checkpoint's first config group's weights, if the catalog has it."""
    if not isinstance(groups, dict) or not groups:
        return None
    group = next(iter(groups.values()))
    w = group.get("weights") if isinstance(group, dict) else None
    if not isinstance(w, dict):
        return None
    typ, bits = w.get("type"), w.get("num_bits")
    if typ == "float" and bits == 8:
        return "fp8"
    if typ == "int" and bits == 8:
        return "int8"
    if typ == "int" and bits == 4 and w.get("group_size") == 128:
        return "int4-g128" if w.get("symmetric", True) is not False else "int4-g128-zp"
    return None


def _left_out(modules, fmt: str, notes: list) -> None:
    """Note the modules a quantizer leaves in 16-bit beyond lm_head (which the format's rule keeps in
    16-bit already): the calculator prices them in ``fmt``, so it says so."""
    extra = [x for x in modules if x != "lm_head"] if isinstance(modules, list) else []
    if extra:
        notes.append(["quantization_config", f"left in 16-bit besides lm_head: "
                                             f"{', '.join(map(str, extra[:3]))}{', ...' if len(extra) > 3 else ''} "
                                             f"({len(extra)} in all); counted here in {fmt}, so the weights are a "
                                             "lower bound"])


def _quant_format(q, notes: list) -> tuple[str | None, str | None, str | None]:
    """(weight format, expert format, problem) for a quantization_config."""
    if not isinstance(q, dict):
        return None, None, "quantization_config is not an object"
    method = q.get("quant_method")
    if method == "fp8":
        return "fp8", None, None
    if method == "fbgemm_fp8":  # Meta's row-wise FP8; modules_to_not_convert stay in 16-bit
        _left_out(q.get("modules_to_not_convert"), "fp8", notes)
        return "fp8", None, None
    if method == "compressed-tensors":
        fmt = _compressed_tensors_format(q.get("config_groups"))
        if fmt is not None:
            _left_out(q.get("ignore"), fmt, notes)
            return fmt, None, None
    if method == "mxfp4":
        notes.append(["quantization_config", "MXFP4 routed experts; attention, router and embeddings in BF16"])
        return "bf16", "mxfp4", None
    if method in ("awq", "gptq") and q.get("bits") == 4 and q.get("group_size") == 128:
        asym = q.get("zero_point", True) if method == "awq" else not q.get("sym", True)
        return ("int4-g128-zp" if asym else "int4-g128"), None, None
    if method == "bitsandbytes":
        if q.get("load_in_4bit") and q.get("bnb_4bit_quant_type") == "nf4":
            return ("nf4-dq" if q.get("bnb_4bit_use_double_quant") else "nf4"), None, None
        if q.get("load_in_8bit"):
            return "int8", None, None
    return None, None, f"quant_method {method!r} with these settings is not interpreted; pick the weight format"


def parse_config(cfg) -> dict:
    """Read ``cfg`` (a parsed config.json). See the module docstring for the result's keys."""
    res = {"model": None, "found": [], "defaults": [], "unread": [], "errors": [], "notes": [],
           "fmt": None, "expert_fmt": None, "source": "config"}
    err, found, dflt = res["errors"], res["found"], res["defaults"]
    if not isinstance(cfg, dict):
        err.append(["config", "is not a JSON object: a model's config.json is one {...} object"])
        return res
    top = cfg
    if not _has(cfg, "num_hidden_layers") and isinstance(cfg.get("text_config"), dict):
        cfg = cfg["text_config"]
        res["source"] = "text_config"
    mtype = cfg.get("model_type") if isinstance(cfg.get("model_type"), str) else top.get("model_type")
    mtype = mtype if isinstance(mtype, str) else ""

    def whole(key: str, required: bool = True):
        if not _has(cfg, key):
            if required:
                err.append([key, "required field is missing"])
            return None
        v = cfg[key]
        if not _whole(v):
            err.append([key, f"must be a whole number >= 1, got {v!r}"])
            return None
        found.append(key)
        return int(v)

    def boolean(key: str) -> bool:
        v = cfg.get(key)
        if v is None:
            return False
        if not isinstance(v, bool):
            err.append([key, f"must be true or false, got {v!r}"])
            return False
        found.append(key)
        return v

    layers, hidden, heads = whole("num_hidden_layers"), whole("hidden_size"), whole("num_attention_heads")
    vocab, max_pos = whole("vocab_size"), whole("max_position_embeddings")
    kv_heads = whole("num_key_value_heads", False)
    if kv_heads and heads and kv_heads > heads:
        err.append(["num_key_value_heads", f"{kv_heads} exceeds num_attention_heads {heads}"])
    # --- MLA
    mla = None
    if _has(cfg, "kv_lora_rank"):
        kvr, rope, nope, vdim = (whole(k) for k in ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim",
                                                     "v_head_dim"))
        qr = whole("q_lora_rank", False)
        gate = boolean("mla_use_output_gate")
        if None not in (kvr, rope, nope, vdim):
            mla = Mla(kvr, qr, rope, nope, vdim, gate)
    if kv_heads is None and heads and not any(e[0] == "num_key_value_heads" for e in err):
        kv_heads = heads
        dflt.append(["num_key_value_heads", heads])
    head_dim = None
    if mla is not None:
        head_dim = mla.qk_nope_head_dim + mla.qk_rope_head_dim
        dflt.append(["head_dim", head_dim])
    elif _has(cfg, "head_dim"):
        head_dim = whole("head_dim")
    elif hidden and heads:
        head_dim = hidden // heads
        dflt.append(["head_dim", head_dim])
    # --- MoE
    moe = None
    n_exp_key = next((k for k in EXPERT_COUNT_KEYS if _has(cfg, k) and cfg[k] != 0), None)
    inter = whole("intermediate_size", False)
    if n_exp_key:
        n_exp = whole(n_exp_key)
        top_key = next((k for k in TOP_K_KEYS if _has(cfg, k)), None)
        top_k = whole(top_key) if top_key else None
        if top_key is None:
            err.append(["num_experts_per_tok", "required for a mixture-of-experts config"])
        if _has(cfg, "moe_intermediate_size"):
            width = whole("moe_intermediate_size")
        else:
            width = inter
            if inter is not None:
                dflt.append(["moe_intermediate_size", inter])
            else:
                err.append(["moe_intermediate_size", "required for a mixture-of-experts config"])
        shared = 0
        shared_key = next((k for k in SHARED_COUNT_KEYS if _has(cfg, k)), None)
        if shared_key:
            shared = cfg[shared_key]
            if type(shared) not in (int, float) or not float(shared).is_integer() or shared < 0:
                err.append([shared_key, f"must be a whole number >= 0, got {shared!r}"])
                shared = 0
            found.append(shared_key)
        elif _has(cfg, "shared_expert_intermediate_size") and cfg["shared_expert_intermediate_size"] != 0:
            s = whole("shared_expert_intermediate_size")
            if s is not None and width:
                if s % width:
                    err.append(["shared_expert_intermediate_size", f"{s} is not a multiple of the expert width "
                                f"{width}, so the shared MLP is not a whole number of experts"])
                else:
                    shared = s // width
        else:
            dflt.append(["num_shared_experts", 0])
        first_dense = 0
        if _has(cfg, "first_k_dense_replace"):
            first_dense = cfg["first_k_dense_replace"]
            if type(first_dense) not in (int, float) or not float(first_dense).is_integer() or first_dense < 0:
                err.append(["first_k_dense_replace", f"must be a whole number >= 0, got {first_dense!r}"])
                first_dense = 0
            found.append("first_k_dense_replace")
        for key, ok in (("moe_layer_freq", 1), ("decoder_sparse_step", 1)):
            if _has(cfg, key):
                if cfg[key] != ok or isinstance(cfg[key], bool):
                    err.append([key, f"MoE layers at a period other than every layer ({cfg[key]!r}) are not modelled"])
                else:
                    found.append(key)
        if _flag(cfg.get("mlp_only_layers")):
            err.append(["mlp_only_layers", "dense layers between MoE layers are not modelled"])
        if first_dense and inter is None:
            err.append(["intermediate_size", "required: the config has dense layers before the MoE layers"])
        latent = whole("routed_expert_hidden_size", False)  # latent MoE (Kimi K3)
        latent_norm = boolean("latent_moe_use_norm") if latent else False
        if latent and hidden and latent >= hidden:
            err.append(["routed_expert_hidden_size", f"{latent} must be smaller than hidden_size {hidden}"])
        if None not in (n_exp, top_k, width):
            if top_k > n_exp:
                err.append([top_key, f"{top_k} experts per token exceeds the {n_exp} experts"])
            else:
                moe = Moe(n_exp, top_k, int(shared), width, int(first_dense), latent, latent_norm)
    elif inter is None and not _has(cfg, "intermediate_size"):
        err.append(["intermediate_size", "required field is missing"])
    # --- layer kinds: sliding window and linear attention
    n_sliding = n_linear = 0
    kda = None
    lt = cfg.get("layer_types")
    if lt is not None:
        if not isinstance(lt, list) or any(not isinstance(t, str) for t in lt):
            err.append(["layer_types", "must be a list of layer-type names"])
        elif layers is not None and len(lt) != layers:
            err.append(["layer_types", f"lists {len(lt)} layers but num_hidden_layers is {layers}"])
        else:
            unknown = sorted({t for t in lt if t not in LAYER_TYPES})
            if unknown:
                err.append(["layer_types", f"unknown layer type {unknown[0]!r}; known: {', '.join(LAYER_TYPES)}"])
            n_sliding, n_linear = lt.count("sliding_attention"), lt.count("linear_attention")
            found.append("layer_types")
    elif _has(cfg, "linear_attn_config"):
        n_linear, kda = _kda_layout(cfg["linear_attn_config"], layers, err, found)
    elif _has(cfg, "full_attention_interval") and layers:
        k = whole("full_attention_interval")  # transformers: layer i is full when (i + 1) % k == 0
        if k is not None:
            n_linear = layers - layers // k
            dflt.append(["linear layers", n_linear])
    elif _has(cfg, "sliding_window") and layers:
        if mtype in USE_SLIDING_FLAG:
            if cfg.get("use_sliding_window"):
                err.append(["use_sliding_window",
                            "sliding window on the layers past max_window_layers is not modelled"])
            else:
                res["notes"].append(["sliding_window", "ignored: use_sliding_window is off"])
        elif mtype in ALL_LAYERS_SLIDING:
            n_sliding = layers
            dflt.append(["sliding layers", layers])
        elif mtype in ALTERNATING_SLIDING:
            n_sliding = (layers + 1) // 2
            dflt.append(["sliding layers", n_sliding])
        else:
            err.append(["sliding_window", f"no layer_types, and model_type {mtype!r} does not say which layers "
                        "use the window"])
    sliding = None
    if n_sliding:
        size = whole("sliding_window")
        if size is not None:
            sliding = SlidingWindow(size, n_sliding, "")
    linear = None
    if n_linear and kda is not None:
        linear = LinearAttention(n_linear, kda_state_bytes(kda.num_heads, kda.head_dim, kda.short_conv_kernel_size,
                                                           *KDA_STATE_BYTES), kda)
        dflt.append(["KDA state dtypes", "fp32 recurrent, bf16 conv"])
    elif n_linear:
        keys = ("linear_num_value_heads", "linear_num_key_heads", "linear_key_head_dim", "linear_value_head_dim",
                "linear_conv_kernel_dim")
        vals = [whole(k) for k in keys]
        if None not in vals:
            vh, kh, kd, vd, kern = vals
            state = (vh * kd * vd + (2 * kh * kd + vh * vd) * (kern - 1)) * LINEAR_STATE_BYTES
            linear = LinearAttention(n_linear, state)
            dflt.append(["linear state dtype", "bf16"])
    for key, what in NOT_MODELLED.items():
        if _flag(cfg.get(key)):
            err.append([key, f"{what} is not modelled by the engine"])
    # --- booleans with per-family defaults
    tied = cfg.get("tie_word_embeddings", top.get("tie_word_embeddings"))
    if isinstance(tied, bool):
        found.append("tie_word_embeddings")
    else:
        tied = mtype in TIED_BY_DEFAULT
        dflt.append(["tie_word_embeddings", tied])
    bias = cfg.get("attention_bias")
    if mtype in QKV_BIAS_ALWAYS:
        bias = True
        dflt.append(["attention_bias", True])
    elif isinstance(bias, bool):
        found.append("attention_bias")
    else:
        bias = False
        dflt.append(["attention_bias", False])
    if _flag(cfg.get("num_nextn_predict_layers")):
        res["notes"].append(["num_nextn_predict_layers", "multi-token-prediction layers are not counted"])
    if _flag(cfg.get("attn_res_block_size")):
        res["notes"].append(["attn_res_block_size", "attention-residual vectors are not counted"])
    # --- the checkpoint's format
    q = top.get("quantization_config", cfg.get("quantization_config"))
    if q is not None:
        fmt, efmt, problem = _quant_format(q, res["notes"])
        if problem:
            res["unread"].append(["quantization_config", problem])
        else:
            found.append("quantization_config")
            res["fmt"], res["expert_fmt"] = fmt, efmt
    if res["fmt"] is None:
        dtype = top.get("torch_dtype", top.get("dtype", cfg.get("torch_dtype", cfg.get("dtype"))))
        dtypes = {"bfloat16": "bf16", "float16": "bf16", "float32": "fp32"}
        res["fmt"] = dtypes.get(dtype) if isinstance(dtype, str) else None
    if err:
        return res
    res["model"] = Model(
        key="pasted", name="Pasted config", hf_repo="", config_source="", card_source="",
        released_format=res["fmt"] or "bf16", architecture="moe" if moe else "dense",
        attention="mla" if mla else "gqa", stated_total_params=None, stated_active_params=None,
        stated_params_source=None, num_hidden_layers=layers, hidden_size=hidden, num_attention_heads=heads,
        num_key_value_heads=heads if mla else kv_heads, head_dim=head_dim, head_dim_in_config=_has(cfg, "head_dim"),
        intermediate_size=inter, vocab_size=vocab, tie_word_embeddings=tied, max_position_embeddings=max_pos,
        attention_bias=bias, moe=moe, mla=mla, sliding_window=sliding, linear_attention=linear)
    return res


def _kda_layout(lac, layers: int | None, err: list, found: list) -> tuple[int, Kda | None]:
    """``(KDA layers, shapes)`` from Kimi's ``linear_attn_config``: ``kda_layers`` lists the 1-based
    KDA layers; ``num_heads``, ``head_dim`` and ``short_conv_kernel_size`` give their shapes."""
    if not isinstance(lac, dict):
        err.append(["linear_attn_config", "must be an object"])
        return 0, None
    ids = lac.get("kda_layers")
    if not isinstance(ids, list) or any(not _whole(i) for i in ids) or len(set(ids)) != len(ids):
        err.append(["linear_attn_config", "kda_layers must be a list of distinct layer numbers >= 1"])
        return 0, None
    if layers is not None and any(i > layers for i in ids):
        err.append(["linear_attn_config", f"kda_layers names a layer past num_hidden_layers {layers}"])
        return 0, None
    vals = []
    for key in ("num_heads", "head_dim", "short_conv_kernel_size"):
        v = lac.get(key)
        if not _whole(v):
            err.append(["linear_attn_config", f"{key} must be a whole number >= 1, got {v!r}"])
        vals.append(int(v) if _whole(v) else None)
    found.append("linear_attn_config")
    return len(ids), (Kda(*vals) if None not in vals else None)
