/* The sizing engine of the calculator page: a line-by-line port of macros/formulas (params.py, hybridmoe.py, memory.py,
   parallel.py, speed.py), of the calculator's sheet (sitebuild/calcsheet.py) and of its config.json
   reader (sitebuild/hfconfig.py). tests/test_calculator_parity.py runs thousands of cases through both
   and requires equal results, so a change here needs the same change there. Pure functions, no DOM.
   Models, GPUs and formats are the objects sitebuild/calculator.py exports (catalog field names). */
(function (root) {
  "use strict";

  // CPython's float floor division (floatobject.c float_divmod), so `a // b` agrees to the last bit.
  function floorDiv(a, b) {
    var mod = a % b, div = (a - mod) / b;
    if (mod && ((b < 0) !== (mod < 0))) { div -= 1; }
    if (!div) { return 0; }
    var fl = Math.floor(div);
    return div - fl > 0.5 ? fl + 1 : fl;
  }
  function ceilDiv(a, b) { return -floorDiv(-a, b); }

  // ---------------------------------------------------------------- params.py
  function gatedMlpParams(hidden, width) { return 3 * hidden * width; }
  function gqaAttentionParams(hidden, heads, kvHeads, headDim, bias) {
    var q = heads * headDim, kv = kvHeads * headDim;
    return hidden * q + 2 * hidden * kv + q * hidden + (bias ? q + 2 * kv : 0);
  }
  function mlaAttentionParams(hidden, heads, a) {
    var qk = a.qk_nope_head_dim + a.qk_rope_head_dim, q;
    if (a.q_lora_rank) { q = hidden * a.q_lora_rank + a.q_lora_rank + a.q_lora_rank * heads * qk; }
    else { q = hidden * heads * qk; }
    var kv = hidden * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank +
      a.kv_lora_rank * heads * (a.qk_nope_head_dim + a.v_head_dim);
    return q + kv + heads * a.v_head_dim * hidden;
  }
  // hybridmoe.py: Kimi Delta Attention layers, latent-MoE projections, MLA output gates
  function kdaAttentionParams(hidden, heads, headDim, kernel) {
    var p = heads * headDim;
    return hidden * (4 * p + headDim + heads) + headDim * p + p + 3 * p * kernel + heads + headDim + p * hidden;
  }
  function kdaStateBytes(heads, headDim, kernel, recurrentBytes, convBytes) {
    return heads * headDim * headDim * recurrentBytes + 3 * heads * headDim * (kernel - 1) * convBytes;
  }
  function latentMoeProjectionParams(hidden, latent, useNorm) { return 2 * hidden * latent + (useNorm ? latent : 0); }
  function attentionParamsPerLayer(m) {
    if (m.mla) {
      return (m.mla.output_gate ? m.hidden_size * m.num_attention_heads * m.mla.v_head_dim : 0) +
        mlaAttentionParams(m.hidden_size, m.num_attention_heads, m.mla);
    }
    return gqaAttentionParams(m.hidden_size, m.num_attention_heads, m.num_key_value_heads, m.head_dim,
      m.attention_bias);
  }
  function attentionParams(m) {
    var la = m.linear_attention;
    if (la && la.kda) {
      var full = m.num_hidden_layers - la.num_linear_layers;
      return (full ? attentionParamsPerLayer(m) * full : 0) +
        kdaAttentionParams(m.hidden_size, la.kda.num_heads, la.kda.head_dim, la.kda.short_conv_kernel_size) * la.num_linear_layers;
    }
    return attentionParamsPerLayer(m) * m.num_hidden_layers;
  }
  function paramBreakdown(m) {
    var h = m.hidden_size, layers = m.num_hidden_layers;
    var b = { embedding: m.vocab_size * h, lm_head: m.tie_word_embeddings ? 0 : m.vocab_size * h,
      attention: attentionParams(m), norms: 2 * h * layers + h };
    var dense = m.moe ? m.moe.first_dense_layers : layers;
    b.moe_layers = m.moe ? layers - dense : 0;
    b.dense_mlp = dense ? gatedMlpParams(h, m.intermediate_size) * dense : 0;
    if (m.moe && b.moe_layers) {
      var mo = m.moe, latent = mo.routed_expert_hidden_size;
      b.params_per_expert = gatedMlpParams(latent || h, mo.moe_intermediate_size);
      b.routed_experts = b.params_per_expert * mo.num_experts * b.moe_layers;
      b.shared_experts = gatedMlpParams(h, mo.moe_intermediate_size) * mo.num_shared_experts * b.moe_layers;
      b.router = h * mo.num_experts * b.moe_layers;
      b.inactive = mo.num_experts - mo.experts_per_token;
      b.latent_projections = latent ? latentMoeProjectionParams(h, latent, mo.latent_moe_use_norm) * b.moe_layers : 0;
    } else {
      b.params_per_expert = b.routed_experts = b.shared_experts = b.router = b.inactive = b.latent_projections = 0;
    }
    b.total = b.embedding + b.lm_head + b.attention + b.dense_mlp + b.routed_experts + b.shared_experts +
      b.router + b.norms + b.latent_projections;
    b.active = b.total - b.inactive * b.params_per_expert * b.moe_layers;
    b.compute_active = b.active - (b.lm_head ? b.embedding : 0);
    b.embeddings = b.embedding + b.lm_head;
    return b;
  }

  // ---------------------------------------------------------------- memory.py
  function embeddingBits(f) {
    return f.embedding_bits_per_weight !== null && f.embedding_bits_per_weight !== undefined ?
      f.embedding_bits_per_weight : f.bits_per_weight;
  }
  function weightBytesBreakdown(m, f, fe, b) {
    b = b || paramBreakdown(m);
    var rest = f.bits_per_weight, exp = fe ? fe.bits_per_weight : rest, emb = embeddingBits(f);
    var activeRouted = b.routed_experts - b.inactive * b.params_per_expert * b.moe_layers;
    var w = { embeddings: b.embeddings * emb / 8, routed_experts: b.routed_experts * exp / 8,
      rest: (b.total - b.embeddings - b.routed_experts) * rest / 8, active_routed: activeRouted * exp / 8 };
    w.total = w.embeddings + w.routed_experts + w.rest;
    w.non_expert = w.embeddings + w.rest;
    return w;
  }
  function weightBytes(m, f, fe) { return weightBytesBreakdown(m, f, fe).total; }
  function kvBytesPerTokenMha(numLayers, numKvHeads, headDim, elementBytes) {
    return 2 * numLayers * numKvHeads * headDim * elementBytes;
  }
  function kvBytesPerTokenMla(numLayers, kvLoraRank, ropeDim, elementBytes) {
    return numLayers * (kvLoraRank + ropeDim) * elementBytes;
  }
  function kvBytesPerTokenPerLayer(m, kv) {
    var eb = kv.bits_per_weight / 8;
    if (m.mla) { return kvBytesPerTokenMla(1, m.mla.kv_lora_rank, m.mla.qk_rope_head_dim, eb); }
    return kvBytesPerTokenMha(1, m.num_key_value_heads, m.head_dim, eb);
  }
  function kvLayerCounts(m) {
    var sliding = m.sliding_window ? m.sliding_window.num_sliding_layers : 0;
    var linear = m.linear_attention ? m.linear_attention.num_linear_layers : 0;
    return [m.num_hidden_layers - sliding - linear, sliding, linear];
  }
  function linearState(m, linear) {
    return m.linear_attention ? m.linear_attention.state_bytes_per_layer * linear : 0;
  }
  function kvBytesPerToken(m, kv) {
    var c = kvLayerCounts(m);
    return kvBytesPerTokenPerLayer(m, kv) * (c[0] + c[1]);
  }
  function kvBytesPerSequence(m, context, kv) {
    var c = kvLayerCounts(m), window = m.sliding_window ? m.sliding_window.size : 0;
    return kvBytesPerTokenPerLayer(m, kv) * (c[0] * context + c[1] * Math.min(context, window)) +
      linearState(m, c[2]);
  }
  function blocksPerSequence(context, blockSize) { return ceilDiv(context, blockSize); }
  function kvBytesPerSequencePaged(m, context, kv, blockSize, kvFraction) {
    var c = kvLayerCounts(m), window = m.sliding_window ? m.sliding_window.size : 0;
    var slots = (c[0] * blocksPerSequence(context, blockSize) +
      c[1] * blocksPerSequence(Math.min(context, window), blockSize)) * blockSize;
    return (kvBytesPerTokenPerLayer(m, kv) * slots + linearState(m, c[2])) * kvFraction;
  }
  function hybridSequenceBytesPerGpu(m, context, kv, tp, blockSize) {  // hybridmoe.py
    var c = kvLayerCounts(m), la = m.linear_attention;
    var cache = kvBytesPerTokenPerLayer(m, kv) * c[0] * (blocksPerSequence(context, blockSize) * blockSize) *
      kvFractionPerGpu(m, tp);
    return cache + la.state_bytes_per_layer * c[2] * (la.kda ? 1 / tp : kvFractionPerGpu(m, tp));
  }
  function kvBudgetBytes(memory, weightsPerGpu, util, activation, reserve) {
    return memory * util - weightsPerGpu - activation - reserve;
  }
  function kvTokensInBudget(budget, perToken) { return budget <= 0 ? 0 : floorDiv(budget, perToken); }
  function maxConcurrentSequences(budget, perSeq) { return budget <= 0 ? 0 : floorDiv(budget, perSeq); }
  function maxContextOneSequence(m, budget, kv, blockSize, kvFraction, perSequence) {
    var cap = m.max_position_embeddings;
    if (budget <= 0) { return [0, "memory"]; }
    var fits = function (ctx) {
      return (perSequence ? perSequence(ctx) : kvBytesPerSequencePaged(m, ctx, kv, blockSize, kvFraction)) <= budget;
    };
    if (fits(cap)) { return [cap, "max_position_embeddings"]; }
    if (!fits(0)) { return [0, "memory"]; }
    var lo = 0, hi = cap;
    while (hi - lo > 1) {
      var mid = Math.floor((lo + hi) / 2);
      if (fits(mid)) { lo = mid; } else { hi = mid; }
    }
    return [lo, "memory"];
  }

  // ---------------------------------------------------------------- parallel.py
  function tpProblem(heads, kvHeads, tp, widths) {
    if (heads % tp) { return "num_attention_heads " + heads + " is not divisible by TP " + tp; }
    if (tp <= kvHeads) {
      if (kvHeads % tp) { return "num_key_value_heads " + kvHeads + " is not divisible by TP " + tp; }
    } else if (tp % kvHeads) {
      return "TP " + tp + " exceeds num_key_value_heads " + kvHeads +
        " but is not a multiple of it, so KV heads cannot be replicated evenly";
    }
    for (var i = 0; i < widths.length; i++) {
      if (widths[i][1] && widths[i][1] % tp) { return widths[i][0] + " " + widths[i][1] + " is not divisible by TP " + tp; }
    }
    return null;
  }
  function modelWidths(m) {
    var w = [];
    if (m.intermediate_size && (!m.moe || m.moe.first_dense_layers)) { w.push(["intermediate_size", m.intermediate_size]); }
    if (m.moe) { w.push(["moe_intermediate_size", m.moe.moe_intermediate_size]); }
    return w;
  }
  function kvHeadsForTp(m) { return m.mla ? m.num_attention_heads : m.num_key_value_heads; }
  function modelTpProblem(m, tp) { return tpProblem(m.num_attention_heads, kvHeadsForTp(m), tp, modelWidths(m)); }
  function validTpDegrees(m, maxTp) {
    var out = [];
    for (var t = 1; t <= maxTp; t++) { if (modelTpProblem(m, t) === null) { out.push(t); } }
    return out;
  }
  function kvHeadsPerGpu(kvHeads, tp) { return tp <= kvHeads ? kvHeads / tp : 1; }
  function kvFractionPerGpu(m, tp) {
    return m.mla ? 1.0 : kvHeadsPerGpu(m.num_key_value_heads, tp) / m.num_key_value_heads;
  }
  function tpReplicatedExtraParams(m, tp, b) {
    var spread = 1 - 1 / tp, h = m.hidden_size, layers = m.num_hidden_layers;
    var out = b.norms * spread + b.router * spread, kvHeads = 0, mla = 0, la = m.linear_attention, kda = 0;
    if (la && la.kda) {
      kda = h * la.kda.head_dim * la.num_linear_layers * spread;
      layers -= la.num_linear_layers;
    }
    if (m.mla) {
      var a = m.mla, perLayer = h * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank;
      if (a.q_lora_rank) { perLayer += h * a.q_lora_rank + a.q_lora_rank; }
      mla = perLayer * layers * spread;
    } else if (tp > m.num_key_value_heads) {
      var kvWidth = 2 * m.num_key_value_heads * m.head_dim;
      var kvProj = (h * kvWidth + (m.attention_bias ? kvWidth : 0)) * layers;
      kvHeads = kvProj * (1 / m.num_key_value_heads - 1 / tp);
    }
    // Python sums the dict {norms, router, kv_heads, mla_down_proj, latent_moe_proj, kda_decay_gate_a} in order
    return out + kvHeads + mla + b.latent_projections * spread + kda;
  }
  function tpShard(m, tp, f, fe) {
    var b = paramBreakdown(m), total = weightBytes(m, f, fe);
    var extra = tpReplicatedExtraParams(m, tp, b) * f.bits_per_weight / 8;
    return { weights_per_gpu: total / tp + extra, kv_fraction: kvFractionPerGpu(m, tp), weights_total: total,
      replicated_extra_bytes: extra };
  }
  function ringAllreduceBytesPerGpu(buffer, n) { return 2 * (n - 1) / n * buffer; }
  function allreduceTime(buffer, n, latency, link) {
    return n === 1 ? 0.0 : latency + ringAllreduceBytesPerGpu(buffer, n) / link;
  }
  function tpDecodeAllreduceTime(m, tokens, elementBytes, tp, latency, link) {
    return 2 * m.num_hidden_layers * allreduceTime(tokens * m.hidden_size * elementBytes, tp, latency, link);
  }

  // ---------------------------------------------------------------- speed.py
  function expectedExpertsTouched(numExperts, topK, batch) {
    return numExperts * (1 - Math.pow(1 - topK / numExperts, batch));
  }
  function weightBytesReadPerStep(m, f, batch, fe) {
    var b = paramBreakdown(m), wb = weightBytesBreakdown(m, f, fe, b);
    var bytesPerParam = wb.embeddings / b.embeddings, lookupOnly = 0.0;
    if (b.lm_head) { lookupOnly = (b.embedding - Math.min(batch, m.vocab_size) * m.hidden_size) * bytesPerParam; }
    if (!m.moe || !b.moe_layers) { return wb.total - lookupOnly; }
    var touched = expectedExpertsTouched(m.moe.num_experts, m.moe.experts_per_token, batch);
    var perExpert = wb.routed_experts / (m.moe.num_experts * b.moe_layers);
    return wb.non_expert - lookupOnly + touched * perExpert * b.moe_layers;
  }
  function decodeBound(weightRead, kvPerSeq, batch, bandwidth, comm) {
    var kv = batch * kvPerSeq, step = (weightRead + kv) / bandwidth + comm;
    return { weight_bytes_read: weightRead, kv_bytes_read: kv, step_time_s: step, memory_time_s: step - comm,
      per_sequence: 1 / step, aggregate: batch / step };
  }
  function prefillMatmulFlops(m, tokens, sampled) {
    var b = paramBreakdown(m), head = b.lm_head || b.embedding;
    return 2 * (b.compute_active - head) * tokens + 2 * head * sampled;
  }
  function attentionPairs(n, window) {
    if (window === undefined || n <= window) { return n * (n + 1) / 2; }
    return window * (window + 1) / 2 + (n - window) * window;
  }
  function prefillAttentionFlops(m, tokens) {
    var qk, v;
    if (m.mla) { qk = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim; v = m.mla.v_head_dim; }
    else { qk = v = m.head_dim; }
    var c = kvLayerCounts(m), pairs = c[0] * attentionPairs(tokens);
    if (c[1]) { pairs += c[1] * attentionPairs(tokens, m.sliding_window.size); }
    return 2 * m.num_attention_heads * (qk + v) * pairs;
  }
  function prefillTime(flops, peak, mfu) { return flops / (peak * mfu); }
  function peakFlops(g, f) {
    if (f.key === "fp8") { return g.fp8_dense_flops ? [g.fp8_dense_flops, "dense FP8"] : [null, "no FP8 tensor rate"]; }
    if (f.key === "int8") { return g.int8_dense_ops ? [g.int8_dense_ops, "dense INT8"] : [null, "no INT8 tensor rate"]; }
    return [g.bf16_dense_flops, "dense BF16"];
  }

  // The device total the engine budgets from (records.Gpu.engine_memory_bytes): what cudaMemGetInfo
  // reports for a catalog GPU, the typed memory for a custom one.
  function engineMemoryBytes(g) { return g.cuda_total_bytes != null ? g.cuda_total_bytes : g.memory_bytes; }

  // ---------------------------------------------------------------- the sheet (sitebuild/calcsheet.py)
  function evaluate(m, g, f, kv, fe, n, context, conc, util, mfu, d) {
    var b = paramBreakdown(m);
    var out = { params_total: b.total, params_active: b.active, weights_total: weightBytes(m, f, fe),
      kv_per_token: kvBytesPerToken(m, kv), kv_per_sequence: kvBytesPerSequence(m, context, kv),
      valid_tp: validTpDegrees(m, d.max_tp) };
    out.tp_problem = modelTpProblem(m, n);
    if (out.tp_problem) { return out; }
    var shard = tpShard(m, n, f, fe), frac = shard.kv_fraction;
    var budget = kvBudgetBytes(engineMemoryBytes(g), shard.weights_per_gpu, util, d.activation_bytes, d.reserve_bytes);
    var perSeq = kvBytesPerSequencePaged(m, context, kv, d.block_size, frac), hybrid = null;
    if (m.linear_attention && m.linear_attention.kda && !m.sliding_window) {
      hybrid = function (ctx, bs) { return hybridSequenceBytesPerGpu(m, ctx, kv, n, bs || d.block_size); };
      perSeq = hybrid(context);
    }
    var mc = maxContextOneSequence(m, budget / conc, kv, d.block_size, frac, hybrid);
    out.weights_per_gpu = shard.weights_per_gpu; out.replicated_extra = shard.replicated_extra_bytes;
    out.kv_fraction = frac; out.kv_per_token_gpu = out.kv_per_token * frac;
    out.usable_per_gpu = engineMemoryBytes(g) * util; out.kv_budget = budget; out.fits = budget > 0;
    out.kv_per_sequence_gpu = perSeq; out.blocks_per_sequence = blocksPerSequence(context, d.block_size);
    out.kv_load_gpu = conc * perSeq; out.headroom = budget - conc * perSeq;
    out.kv_tokens = kvTokensInBudget(budget, out.kv_per_token * frac);
    out.max_sequences = maxConcurrentSequences(budget, perSeq);
    out.max_context = mc[0]; out.max_context_limit = mc[1];
    var read = weightBytesReadPerStep(m, f, conc, fe), kvSeq = hybrid ? hybrid(context, 1) : kvBytesPerSequence(m, context, kv) * frac;
    var perGpu = read / n + shard.replicated_extra_bytes, comm = 0.0, withComm = n === 1;
    if (n > 1 && g.allreduce_latency_s && g.interconnect_bytes_per_s_per_direction) {
      comm = tpDecodeAllreduceTime(m, conc, d.activation_element_bytes, n, g.allreduce_latency_s,
        g.interconnect_bytes_per_s_per_direction);
      withComm = true;
    }
    var bound = decodeBound(perGpu, kvSeq, conc, g.memory_bandwidth_bytes_per_s, comm);
    out.decode_weight_read = read; out.decode_weight_read_gpu = perGpu; out.decode_kv_read_gpu = bound.kv_bytes_read;
    out.decode_memory_s = bound.memory_time_s; out.decode_comm_s = comm; out.decode_comm_included = withComm;
    out.decode_step_s = bound.step_time_s; out.decode_per_sequence = bound.per_sequence;
    out.decode_aggregate = bound.aggregate;
    if (m.moe && b.moe_layers) {
      out.experts_touched = expectedExpertsTouched(m.moe.num_experts, m.moe.experts_per_token, conc);
    }
    var pk = peakFlops(g, f), dense = prefillMatmulFlops(m, context, Math.min(1, context));
    var attn = prefillAttentionFlops(m, context);
    out.prefill_peak_label = pk[1]; out.prefill_flops = dense + attn;
    if (pk[0] !== null) { out.prefill_peak = pk[0]; out.prefill_s = prefillTime(dense + attn, pk[0] * n, mfu); }
    return out;
  }

  // ---------------------------------------------------------------- config.json (sitebuild/hfconfig.py)
  var TIED_BY_DEFAULT = ["gemma", "gemma2"], QKV_BIAS_ALWAYS = ["qwen2"], ALL_LAYERS_SLIDING = ["mistral", "mixtral"];
  var USE_SLIDING_FLAG = ["qwen2", "qwen2_moe", "qwen3", "qwen3_moe"], ALTERNATING_SLIDING = ["gemma2"];
  var LINEAR_STATE_BYTES = 2, EXPERT_COUNT_KEYS = ["n_routed_experts", "num_local_experts", "num_experts"];
  var TOP_K_KEYS = ["num_experts_per_tok", "experts_per_token", "num_experts_per_token"];
  var SHARED_COUNT_KEYS = ["n_shared_experts", "num_shared_experts"], KDA_STATE_BYTES = [4, 2];
  var LAYER_TYPES = ["full_attention", "sliding_attention", "linear_attention"];
  var NOT_MODELLED = [
    ["attention_chunk_size", "chunked local attention (Llama 4)"],
    ["hybrid_override_pattern", "Mamba/attention hybrid layers (Nemotron-H)"],
    ["layers_block_type", "Mamba/attention hybrid layers"],
    ["attn_layer_period", "Mamba/attention hybrid layers (Jamba)"],
    ["cross_attention_layers", "cross-attention layers (Llama 3.2 Vision)"],
    ["num_kv_shared_layers", "layers that share another layer's KV cache"],
    ["kv_sharing_layer_map", "layers that share another layer's KV cache"],
    ["mlp_layer_types", "per-layer MLP types"],
    ["index_topk", "a sparse-attention indexer (DeepSeek sparse attention)"],
    ["sliding_window_pattern", "a sliding-window pattern (Gemma 3)"]
  ];
  function own(o, k) { return Object.prototype.hasOwnProperty.call(o, k); }
  function isObj(v) { return v !== null && typeof v === "object" && !Array.isArray(v); }
  function get(o, k, dflt) { return own(o, k) ? o[k] : dflt; }
  function has(cfg, k) { return own(cfg, k) && cfg[k] !== null; }
  function isNum(v) { return typeof v === "number" && isFinite(v); }
  function isWhole(v) { return isNum(v) && Number.isInteger(v) && v >= 1; }
  function isCount(v) { return isNum(v) && Number.isInteger(v) && v >= 0; }
  function flag(v) {  // Python truthiness of a JSON value
    if (v === null || v === undefined || v === false || v === 0 || v === "") { return false; }
    if (Array.isArray(v)) { return v.length > 0; }
    if (isObj(v)) { return Object.keys(v).length > 0; }
    return true;
  }
  function show(v) { return JSON.stringify(v); }
  function compressedTensorsFormat(groups) {  // hfconfig._compressed_tensors_format
    if (!isObj(groups)) { return null; }
    var names = Object.keys(groups);
    if (!names.length) { return null; }
    var grp = groups[names[0]], w = isObj(grp) ? grp.weights : null;
    if (!isObj(w)) { return null; }
    var typ = w.type, bits = w.num_bits;
    if (typ === "float" && bits === 8) { return "fp8"; }
    if (typ === "int" && bits === 8) { return "int8"; }
    if (typ === "int" && bits === 4 && w.group_size === 128) { return w.symmetric !== false ? "int4-g128" : "int4-g128-zp"; }
    return null;
  }
  function leftOut(modules, fmt, notes) {  // hfconfig._left_out
    var extra = Array.isArray(modules) ? modules.filter(function (x) { return x !== "lm_head"; }) : [];
    if (extra.length) {
      notes.push(["quantization_config", "left in 16-bit besides lm_head: " + extra.slice(0, 3).map(String).join(", ") +
        (extra.length > 3 ? ", ..." : "") + " (" + extra.length + " in all); counted here in " + fmt +
        ", so the weights are a lower bound"]);
    }
  }
  function quantFormat(q, notes) {
    if (!isObj(q)) { return [null, null, "quantization_config is not an object"]; }
    var method = get(q, "quant_method", null);
    if (method === "fp8") { return ["fp8", null, null]; }
    if (method === "fbgemm_fp8") { leftOut(get(q, "modules_to_not_convert"), "fp8", notes); return ["fp8", null, null]; }
    if (method === "compressed-tensors") {
      var ct = compressedTensorsFormat(get(q, "config_groups"));
      if (ct !== null) { leftOut(get(q, "ignore"), ct, notes); return [ct, null, null]; }
    }
    if (method === "mxfp4") {
      notes.push(["quantization_config", "MXFP4 routed experts; attention, router and embeddings in BF16"]);
      return ["bf16", "mxfp4", null];
    }
    if ((method === "awq" || method === "gptq") && get(q, "bits") === 4 && get(q, "group_size") === 128) {
      var asym = method === "awq" ? flag(get(q, "zero_point", true)) : !flag(get(q, "sym", true));
      return [asym ? "int4-g128-zp" : "int4-g128", null, null];
    }
    if (method === "bitsandbytes") {
      if (flag(get(q, "load_in_4bit")) && get(q, "bnb_4bit_quant_type") === "nf4") {
        return [flag(get(q, "bnb_4bit_use_double_quant")) ? "nf4-dq" : "nf4", null, null];
      }
      if (flag(get(q, "load_in_8bit"))) { return ["int8", null, null]; }
    }
    return [null, null, "quant_method " + show(method) + " with these settings is not interpreted; pick the weight format"];
  }
  function kdaLayout(lac, layers, err, found) {  // hfconfig._kda_layout
    if (!isObj(lac)) { err.push(["linear_attn_config", "must be an object"]); return [0, null]; }
    var ids = get(lac, "kda_layers");
    if (!Array.isArray(ids) || ids.some(function (i) { return !isWhole(i); }) ||
        ids.some(function (i, j) { return ids.indexOf(i) !== j; })) {
      err.push(["linear_attn_config", "kda_layers must be a list of distinct layer numbers >= 1"]);
      return [0, null];
    }
    if (layers !== null && ids.some(function (i) { return i > layers; })) {
      err.push(["linear_attn_config", "kda_layers names a layer past num_hidden_layers " + layers]);
      return [0, null];
    }
    var vals = ["num_heads", "head_dim", "short_conv_kernel_size"].map(function (key) {
      var v = get(lac, key);
      if (!isWhole(v)) { err.push(["linear_attn_config", key + " must be a whole number >= 1, got " + show(v)]); return null; }
      return v;
    });
    found.push("linear_attn_config");
    return [ids.length, vals.indexOf(null) < 0 ?
      { num_heads: vals[0], head_dim: vals[1], short_conv_kernel_size: vals[2] } : null];
  }
  function parseConfig(cfg) {
    var res = { model: null, found: [], defaults: [], unread: [], errors: [], notes: [], fmt: null,
      expert_fmt: null, source: "config" };
    var err = res.errors, found = res.found, dflt = res.defaults;
    if (!isObj(cfg)) {
      err.push(["config", "is not a JSON object: a model's config.json is one {...} object"]);
      return res;
    }
    var top = cfg;
    if (!has(cfg, "num_hidden_layers") && isObj(cfg.text_config)) { cfg = cfg.text_config; res.source = "text_config"; }
    var mtype = typeof get(cfg, "model_type") === "string" ? cfg.model_type : get(top, "model_type");
    mtype = typeof mtype === "string" ? mtype : "";
    function whole(key, required) {
      if (!has(cfg, key)) {
        if (required !== false) { err.push([key, "required field is missing"]); }
        return null;
      }
      var v = cfg[key];
      if (!isWhole(v)) { err.push([key, "must be a whole number >= 1, got " + show(v)]); return null; }
      found.push(key);
      return v;
    }
    function boolean(key) {
      var v = get(cfg, key, null);
      if (v === null) { return false; }
      if (typeof v !== "boolean") { err.push([key, "must be true or false, got " + show(v)]); return false; }
      found.push(key);
      return v;
    }
    function count(key) {
      var v = cfg[key];
      if (!isCount(v)) { err.push([key, "must be a whole number >= 0, got " + show(v)]); v = 0; }
      found.push(key);
      return v;
    }
    var layers = whole("num_hidden_layers"), hidden = whole("hidden_size"), heads = whole("num_attention_heads");
    var vocab = whole("vocab_size"), maxPos = whole("max_position_embeddings");
    var kvHeads = whole("num_key_value_heads", false);
    if (kvHeads && heads && kvHeads > heads) {
      err.push(["num_key_value_heads", kvHeads + " exceeds num_attention_heads " + heads]);
    }
    var mla = null;
    if (has(cfg, "kv_lora_rank")) {
      var kvr = whole("kv_lora_rank"), rope = whole("qk_rope_head_dim"), nope = whole("qk_nope_head_dim");
      var vdim = whole("v_head_dim"), qr = whole("q_lora_rank", false), gate = boolean("mla_use_output_gate");
      if (kvr !== null && rope !== null && nope !== null && vdim !== null) {
        mla = { kv_lora_rank: kvr, q_lora_rank: qr, qk_rope_head_dim: rope, qk_nope_head_dim: nope, v_head_dim: vdim,
          output_gate: gate };
      }
    }
    if (kvHeads === null && heads && !err.some(function (e) { return e[0] === "num_key_value_heads"; })) {
      kvHeads = heads;
      dflt.push(["num_key_value_heads", heads]);
    }
    var headDim = null;
    if (mla) {
      headDim = mla.qk_nope_head_dim + mla.qk_rope_head_dim;
      dflt.push(["head_dim", headDim]);
    } else if (has(cfg, "head_dim")) {
      headDim = whole("head_dim");
    } else if (hidden && heads) {
      headDim = Math.floor(hidden / heads);
      dflt.push(["head_dim", headDim]);
    }
    var moe = null, nExpKey = null, i;
    for (i = 0; i < EXPERT_COUNT_KEYS.length; i++) {
      var ek = EXPERT_COUNT_KEYS[i];
      if (has(cfg, ek) && cfg[ek] !== 0 && cfg[ek] !== false) { nExpKey = ek; break; }
    }
    var inter = whole("intermediate_size", false);
    if (nExpKey) {
      var nExp = whole(nExpKey), topKey = null, topK = null, width = null, shared = 0, firstDense = 0;
      for (i = 0; i < TOP_K_KEYS.length; i++) { if (has(cfg, TOP_K_KEYS[i])) { topKey = TOP_K_KEYS[i]; break; } }
      if (topKey) { topK = whole(topKey); }
      if (topKey === null) { err.push(["num_experts_per_tok", "required for a mixture-of-experts config"]); }
      if (has(cfg, "moe_intermediate_size")) {
        width = whole("moe_intermediate_size");
      } else {
        width = inter;
        if (inter !== null) { dflt.push(["moe_intermediate_size", inter]); }
        else { err.push(["moe_intermediate_size", "required for a mixture-of-experts config"]); }
      }
      var sharedKey = SHARED_COUNT_KEYS.filter(function (key) { return has(cfg, key); })[0];
      if (sharedKey) {
        shared = count(sharedKey);
      } else if (has(cfg, "shared_expert_intermediate_size") && cfg.shared_expert_intermediate_size !== 0 &&
                 cfg.shared_expert_intermediate_size !== false) {
        var s = whole("shared_expert_intermediate_size");
        if (s !== null && width) {
          if (s % width) {
            err.push(["shared_expert_intermediate_size", s + " is not a multiple of the expert width " + width +
              ", so the shared MLP is not a whole number of experts"]);
          } else { shared = s / width; }
        }
      } else {
        dflt.push(["num_shared_experts", 0]);
      }
      if (has(cfg, "first_k_dense_replace")) { firstDense = count("first_k_dense_replace"); }
      ["moe_layer_freq", "decoder_sparse_step"].forEach(function (key) {
        if (has(cfg, key)) {
          if (cfg[key] !== 1) {
            err.push([key, "MoE layers at a period other than every layer (" + show(cfg[key]) + ") are not modelled"]);
          } else { found.push(key); }
        }
      });
      if (flag(get(cfg, "mlp_only_layers"))) { err.push(["mlp_only_layers", "dense layers between MoE layers are not modelled"]); }
      if (firstDense && inter === null) {
        err.push(["intermediate_size", "required: the config has dense layers before the MoE layers"]);
      }
      var latent = whole("routed_expert_hidden_size", false), latentNorm = latent ? boolean("latent_moe_use_norm") : false;
      if (latent && hidden && latent >= hidden) {
        err.push(["routed_expert_hidden_size", latent + " must be smaller than hidden_size " + hidden]);
      }
      if (nExp !== null && topK !== null && width !== null) {
        if (topK > nExp) { err.push([topKey, topK + " experts per token exceeds the " + nExp + " experts"]); }
        else {
          moe = { num_experts: nExp, experts_per_token: topK, num_shared_experts: shared,
            moe_intermediate_size: width, first_dense_layers: firstDense, routed_expert_hidden_size: latent,
            latent_moe_use_norm: latentNorm };
        }
      }
    } else if (inter === null && !has(cfg, "intermediate_size")) {
      err.push(["intermediate_size", "required field is missing"]);
    }
    var nSliding = 0, nLinear = 0, kda = null, lt = get(cfg, "layer_types", null);
    if (lt !== null) {
      if (!Array.isArray(lt) || lt.some(function (t) { return typeof t !== "string"; })) {
        err.push(["layer_types", "must be a list of layer-type names"]);
      } else if (layers !== null && lt.length !== layers) {
        err.push(["layer_types", "lists " + lt.length + " layers but num_hidden_layers is " + layers]);
      } else {
        var unknown = lt.filter(function (t) { return LAYER_TYPES.indexOf(t) < 0; }).sort();
        if (unknown.length) {
          err.push(["layer_types", "unknown layer type " + show(unknown[0]) + "; known: " + LAYER_TYPES.join(", ")]);
        }
        lt.forEach(function (t) { if (t === "sliding_attention") { nSliding++; } else if (t === "linear_attention") { nLinear++; } });
        found.push("layer_types");
      }
    } else if (has(cfg, "linear_attn_config")) {
      var kl = kdaLayout(cfg.linear_attn_config, layers, err, found);
      nLinear = kl[0]; kda = kl[1];
    } else if (has(cfg, "full_attention_interval") && layers) {
      var k = whole("full_attention_interval");
      if (k !== null) { nLinear = layers - Math.floor(layers / k); dflt.push(["linear layers", nLinear]); }
    } else if (has(cfg, "sliding_window") && layers) {
      if (USE_SLIDING_FLAG.indexOf(mtype) >= 0) {
        if (flag(get(cfg, "use_sliding_window"))) {
          err.push(["use_sliding_window", "sliding window on the layers past max_window_layers is not modelled"]);
        } else { res.notes.push(["sliding_window", "ignored: use_sliding_window is off"]); }
      } else if (ALL_LAYERS_SLIDING.indexOf(mtype) >= 0) {
        nSliding = layers;
        dflt.push(["sliding layers", layers]);
      } else if (ALTERNATING_SLIDING.indexOf(mtype) >= 0) {
        nSliding = Math.floor((layers + 1) / 2);
        dflt.push(["sliding layers", nSliding]);
      } else {
        err.push(["sliding_window", "no layer_types, and model_type " + show(mtype) + " does not say which layers use the window"]);
      }
    }
    var sliding = null, linear = null;
    if (nSliding) {
      var size = whole("sliding_window");
      if (size !== null) { sliding = { size: size, num_sliding_layers: nSliding }; }
    }
    if (nLinear && kda !== null) {
      linear = { num_linear_layers: nLinear, state_bytes_per_layer: kdaStateBytes(kda.num_heads, kda.head_dim,
        kda.short_conv_kernel_size, KDA_STATE_BYTES[0], KDA_STATE_BYTES[1]), kda: kda };
      dflt.push(["KDA state dtypes", "fp32 recurrent, bf16 conv"]);
    } else if (nLinear) {
      var vals = ["linear_num_value_heads", "linear_num_key_heads", "linear_key_head_dim", "linear_value_head_dim",
        "linear_conv_kernel_dim"].map(function (key) { return whole(key); });
      if (vals.indexOf(null) < 0) {
        var vh = vals[0], kh = vals[1], kd = vals[2], vd = vals[3], kern = vals[4];
        linear = { num_linear_layers: nLinear,
          state_bytes_per_layer: (vh * kd * vd + (2 * kh * kd + vh * vd) * (kern - 1)) * LINEAR_STATE_BYTES, kda: null };
        dflt.push(["linear state dtype", "bf16"]);
      }
    }
    NOT_MODELLED.forEach(function (p) {
      if (flag(get(cfg, p[0]))) { err.push([p[0], p[1] + " is not modelled by the engine"]); }
    });
    var tied = own(cfg, "tie_word_embeddings") ? cfg.tie_word_embeddings : get(top, "tie_word_embeddings");
    if (typeof tied === "boolean") { found.push("tie_word_embeddings"); }
    else { tied = TIED_BY_DEFAULT.indexOf(mtype) >= 0; dflt.push(["tie_word_embeddings", tied]); }
    var bias = get(cfg, "attention_bias");
    if (QKV_BIAS_ALWAYS.indexOf(mtype) >= 0) { bias = true; dflt.push(["attention_bias", true]); }
    else if (typeof bias === "boolean") { found.push("attention_bias"); }
    else { bias = false; dflt.push(["attention_bias", false]); }
    if (flag(get(cfg, "num_nextn_predict_layers"))) {
      res.notes.push(["num_nextn_predict_layers", "multi-token-prediction layers are not counted"]);
    }
    if (flag(get(cfg, "attn_res_block_size"))) {
      res.notes.push(["attn_res_block_size", "attention-residual vectors are not counted"]);
    }
    var q = own(top, "quantization_config") ? top.quantization_config : get(cfg, "quantization_config", null);
    if (q !== null && q !== undefined) {
      var qf = quantFormat(q, res.notes);
      if (qf[2]) { res.unread.push(["quantization_config", qf[2]]); }
      else { found.push("quantization_config"); res.fmt = qf[0]; res.expert_fmt = qf[1]; }
    }
    if (res.fmt === null) {
      var dtype = own(top, "torch_dtype") ? top.torch_dtype : own(top, "dtype") ? top.dtype :
        own(cfg, "torch_dtype") ? cfg.torch_dtype : get(cfg, "dtype");
      var dtypes = { bfloat16: "bf16", float16: "bf16", float32: "fp32" };
      res.fmt = typeof dtype === "string" && own(dtypes, dtype) ? dtypes[dtype] : null;
    }
    if (err.length) { return res; }
    res.model = { key: "pasted", name: "Pasted config", hf_repo: "", config_source: "",
      released_format: res.fmt || "bf16", num_hidden_layers: layers, hidden_size: hidden,
      num_attention_heads: heads, num_key_value_heads: mla ? heads : kvHeads, head_dim: headDim,
      intermediate_size: inter, vocab_size: vocab, tie_word_embeddings: tied, max_position_embeddings: maxPos,
      attention_bias: bias, moe: moe, mla: mla, sliding_window: sliding, linear_attention: linear };
    return res;
  }

  root.MSIBCalcEngine = {
    engineMemoryBytes: engineMemoryBytes,
    floorDiv: floorDiv, paramBreakdown: paramBreakdown, weightBytes: weightBytes,
    weightBytesBreakdown: weightBytesBreakdown, embeddingBits: embeddingBits, kvBytesPerToken: kvBytesPerToken,
    kvBytesPerSequence: kvBytesPerSequence, validTpDegrees: validTpDegrees, modelTpProblem: modelTpProblem,
    evaluate: evaluate, parseConfig: parseConfig
  };
})(typeof window !== "undefined" ? window : this);
