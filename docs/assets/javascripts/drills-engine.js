/* The napkin-math drills' engine: a line-by-line port of sitebuild/drills/ (the drill types, their
   draws and texts) and macros/formulas/traps.py (the named mistakes), on top of the calculator's engine
   (calc-engine.js, MSIBCalcEngine), whose functions give the answers wherever the Python side uses the
   calculator's sheet or the sizing formulas. tests/test_drills_parity.py draws hundreds of seeds of every
   type through both and requires the same problem, answer, mistakes and text, so a change here needs the
   same change there. Also here: the parser of typed answers and the grading. Pure functions, no DOM;
   the templates and the catalog slice come from drills-data.js (window.MSIB_DRILLS). */
(function (root) {
  "use strict";
  var E = root.MSIBCalcEngine;
  var GB = 1e9, GiB = 1073741824, MB = 1e6, MiB = 1048576, KiB = 1024, TB = 1e12;

  // ------------------------------------------------------------------ Python's number formatting
  // format(x, ".{d}f"): round half to even on the exact binary value of x (BigInt arithmetic).
  var view = new DataView(new ArrayBuffer(8));
  function fixed(x, d) {
    if (!isFinite(x)) { throw new Error("fixed: not a finite number: " + x); }
    var neg = x < 0 || Object.is(x, -0), a = Math.abs(x);
    view.setFloat64(0, a);
    var hi = view.getUint32(0), lo = view.getUint32(4), ex = (hi >>> 20) & 0x7ff;
    var mant = BigInt(hi & 0xfffff) * 4294967296n + BigInt(lo);
    if (ex === 0) { ex = 1; } else { mant += 4503599627370496n; }
    var e = ex - 1075, scale = 10n ** BigInt(d), q;
    if (e >= 0) {
      q = (mant << BigInt(e)) * scale;
    } else {
      var num = mant * scale, den = 1n << BigInt(-e);
      q = num / den;
      var twice = 2n * (num - q * den);
      if (twice > den || (twice === den && (q & 1n))) { q += 1n; }
    }
    var s = q.toString();
    if (d > 0) {
      while (s.length <= d) { s = "0" + s; }
      s = s.slice(0, s.length - d) + "." + s.slice(s.length - d);
    }
    return (neg ? "-" : "") + s;
  }
  function group(s) {  // thousands separators on the integer part, as Python's "," option
    var sign = s[0] === "-" ? "-" : "", body = sign ? s.slice(1) : s, dot = body.indexOf(".");
    var int = dot < 0 ? body : body.slice(0, dot), frac = dot < 0 ? "" : body.slice(dot);
    return sign + int.replace(/\B(?=(\d{3})+(?!\d))/g, ",") + frac;
  }
  function strip(s) { return s.indexOf(".") >= 0 ? s.replace(/0+$/, "").replace(/\.$/, "") : s; }
  function pyRound(x, d) { return Number(fixed(x, d)); }

  // macros/units.py
  function fmtInt(n) {
    var v = Math.floor(Math.abs(n) + 0.5);
    return (n < 0 && v !== 0 ? "-" : "") + group(BigInt(v).toString());
  }
  function fmtNum(x) {
    if (x !== x) { return "n/a"; }
    if (!isFinite(x)) { return x > 0 ? "∞" : "-∞"; }
    var a = Math.abs(x);
    if (a === 0) { return "0"; }
    if (a >= 10) { return group(fixed(x, 1)); }
    if (a >= 1) { return group(fixed(x, 2)); }
    return fixed(x, 2 - Math.floor(Math.log10(a)));
  }
  function fmtGb(n) { return fmtNum(n / GB) + " GB (" + fmtNum(n / GiB) + " GiB)"; }
  function fmtBytes(n) {
    var a = Math.abs(n);
    if (a >= GB) { return fmtGb(n); }
    if (a >= MB) { return fmtNum(n / MB) + " MB (" + fmtNum(n / MiB) + " MiB)"; }
    return fmtInt(n) + " bytes (" + strip(group(fixed(n / KiB, 2))) + " KiB)";
  }
  function fmtBandwidth(x) {
    var a = Math.abs(x);
    if (a >= TB) { return strip(group(fixed(x / TB, 3))) + " TB/s"; }
    if (a >= GB) { return strip(group(fixed(x / GB, 1))) + " GB/s"; }
    return strip(group(fixed(x / MB, 1))) + " MB/s";
  }
  function fmtFlops(x) { return strip(group(fixed(x / 1e12, 1))) + " TFLOPS"; }
  function fmtSeconds(s) {
    var a = Math.abs(s);
    if (a === 0) { return "0 s"; }
    if (a < 1e-3) { return fmtNum(s * 1e6) + " µs"; }
    if (a < 1) { return fmtNum(s * 1e3) + " ms"; }
    if (a < 120) { return fmtNum(s) + " s"; }
    if (a < 7200) { return fmtNum(s / 60) + " min"; }
    return fmtNum(s / 3600) + " h";
  }
  function fmtUsd(x) {
    if (Math.abs(x) >= 1 || x === 0 || (Math.abs(x) >= 0.01 && pyRound(x, 2) === x)) { return "$" + group(fixed(x, 2)); }
    return "$" + fmtNum(x);
  }
  function fmtPct(f) {
    var pct = f * 100;
    return Math.abs(pct) >= 10 ? group(fixed(pct, 1)) + "%" : fixed(pct, 2) + "%";
  }
  // macros/render/blocks.py
  function n_(x) { return isFinite(x) && Number.isInteger(x) ? fmtInt(x) : fmtNum(x); }
  function bits_(x) { return fixed(x, 6).replace(/0+$/, "").replace(/\.$/, ""); }
  function gib_(n) { return n_(n / GiB) + " GiB"; }
  function sci_(x) {
    if (x === 0) { return "0"; }
    var ex = Math.floor(Math.log10(Math.abs(x)));
    return fixed(x / Math.pow(10, ex), 2) + " × 10^" + ex;
  }
  function frac_(x) {  // "%.4g" for shares between 1e-4 and 1e4 (all the drills show)
    var a = Math.abs(x);
    if (a === 0) { return "0"; }
    if (!(a >= 1e-4 && a < 1e4)) { throw new Error("frac_: out of range: " + x); }
    var ex = Math.floor(Math.log10(a)), s = fixed(x, Math.max(0, 3 - ex));
    if (Math.abs(Number(s)) >= Math.pow(10, ex + 1)) { s = fixed(x, Math.max(0, 2 - ex)); }
    return strip(s);
  }

  // ------------------------------------------------------------------ the generator
  function Rng(seed) { this.state = seed >>> 0; }
  Rng.prototype.random = function () {
    this.state = (this.state + 0x6D2B79F5) >>> 0;
    var t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  Rng.prototype.index = function (n) { return Math.floor(this.random() * n); };
  Rng.prototype.pick = function (seq) { return seq[this.index(seq.length)]; };
  function fnv1a(text) {
    var h = 0x811C9DC5;
    for (var i = 0; i < text.length; i++) { h ^= text.charCodeAt(i); h = Math.imul(h, 0x01000193) >>> 0; }
    return h >>> 0;
  }

  // ------------------------------------------------------------------ text
  var PLACEHOLDER = /\{([a-z0-9_]+)\}/g, CONDITION = /^([?!])([a-z0-9_]+):/;
  function has(o, k) { return Object.prototype.hasOwnProperty.call(o, k); }
  function fill(tpl, v) {
    var m;
    while ((m = CONDITION.exec(tpl))) {
      if (has(v, m[2]) !== (m[1] === "?")) { return null; }
      tpl = tpl.slice(m[0].length);
    }
    return tpl.replace(PLACEHOLDER, function (all, key) {
      if (!has(v, key)) { throw new Error("drills: template " + JSON.stringify(tpl) + " needs the value " + key); }
      return v[key];
    });
  }
  function lines(list, v) { return list.map(function (t) { return fill(t, v); }).filter(function (t) { return t !== null; }); }
  function render(tpl, v) {
    var inputs = [];
    tpl.inputs.forEach(function (row) {
      var label = fill(row[0], v);
      if (label !== null) { inputs.push([label, fill(row[1], v), row[2]]); }
    });
    return { prompt: lines(tpl.prompt, v).join(" "), ask: lines(tpl.ask, v).join(" "),
      solution: { title: fill(tpl.title, v), formulas: lines(tpl.formulas, v), inputs: inputs,
        steps: lines(tpl.steps, v), results: lines(tpl.results, v), notes: lines(tpl.notes, v) } };
  }
  function answerText(dt, x) {
    switch (dt.dim) {
      case "bytes": return fmtBytes(x);
      case "rate": return n_(x) + " tokens/s";
      case "time": return fmtSeconds(x);
      case "usd": return fmtUsd(x) + " per million tokens";
      case "bits": return bits_(x) + " bits per weight";
      case "list": return x.join(", ");
      default: return dt.noun ? n_(x) + " " + dt.noun : n_(x);
    }
  }

  // ------------------------------------------------------------------ catalog
  var DATA = null, S = null, TYPES = {}, CTX = null;
  function setData(data) {
    DATA = data; S = data.settings; TYPES = {};
    data.types.forEach(function (t) { TYPES[t.key] = t; });
    var c = data.catalog, byKey = {};
    c.formats.forEach(function (f) { byKey[f.key] = f; });
    var gpuByKey = {};
    c.gpus.forEach(function (g) { gpuByKey[g.key] = g; });
    CTX = { models: c.models, gpus: c.gpus, formats: c.formats,
      kvFormats: c.formats.filter(function (f) { return f.kv_cache; }),
      sheetModels: c.models.filter(function (m) { return !splitStates(m); }),
      blockFormats: c.formats.filter(function (f) { return f.group_size && f.scale_bits; }),
      gpuPrices: c.gpu_prices, apiPrices: c.api_prices,
      fmt: function (k) { return byKey[k]; }, gpu: function (k) { return gpuByKey[k]; } };
  }
  function kvClass(m) {
    if (m.linear_attention) { return "hybrid"; }
    if (m.mla) { return "mla"; }
    if (m.sliding_window) { return "sliding"; }
    return "gqa";
  }
  function splitStates(m) { return !!(m.linear_attention && m.linear_attention.kda); }
  function layerCounts(m) {
    var sliding = m.sliding_window ? m.sliding_window.num_sliding_layers : 0;
    var linear = m.linear_attention ? m.linear_attention.num_linear_layers : 0;
    return [m.num_hidden_layers - sliding - linear, sliding, linear];
  }
  function kvPerLayer(m, kv) {  // memory.kv_bytes_per_token_per_layer
    var eb = kv.bits_per_weight / 8;
    if (m.mla) { return 1 * (m.mla.kv_lora_rank + m.mla.qk_rope_head_dim) * eb; }
    return 2 * 1 * m.num_key_value_heads * m.head_dim * eb;
  }
  function modelWidths(m) {  // parallel._model_widths
    var w = [];
    if (m.intermediate_size && (!m.moe || m.moe.first_dense_layers)) { w.push(["intermediate_size", m.intermediate_size]); }
    if (m.moe) { w.push(["moe_intermediate_size", m.moe.moe_intermediate_size]); }
    return w;
  }
  function peakFlops(g, f) {  // calcsheet.peak_flops
    if (f.key === "fp8") { return g.fp8_dense_flops ? [g.fp8_dense_flops, "dense FP8"] : [null, "no FP8 tensor rate"]; }
    if (f.key === "int8") { return g.int8_dense_ops ? [g.int8_dense_ops, "dense INT8"] : [null, "no INT8 tensor rate"]; }
    return [g.bf16_dense_flops, "dense BF16"];
  }

  // ------------------------------------------------------------------ formulas the drills use directly
  function kvBudget(memory, wpg, util, act, res) { return memory * util - wpg - act - res; }       // memory.py
  function maxSeqs(budget, perSeq) { return budget <= 0 ? 0 : E.floorDiv(budget, perSeq); }     // memory.py
  function prefillMatmulFlops(m, tokens, sampled) {                                               // speed.py
    var b = E.paramBreakdown(m), head = b.lm_head || b.embedding;
    return 2 * (b.compute_active - head) * tokens + 2 * head * sampled;
  }
  function prefillTime(flops, peak, util) { return flops / (peak * util); }
  function batchToRidge(ridge, bpp) { return Math.ceil(pyRound(ridge * bpp / 2, 9)); }
  function ring(buf, n) { return 2 * (n - 1) / n * buf; }                                          // parallel.py
  function allreduceTime(buf, n, lat, link) { return n === 1 ? 0.0 : lat + ring(buf, n) / link; }

  // ------------------------------------------------------------------ macros/formulas/traps.py
  function elementBits(f) {
    if (f.group_size && f.scale_bits) { return f.bits_per_weight - f.scale_bits / f.group_size; }
    return f.bits_per_weight;
  }
  var T = {
    kvQueryHeads: function (m, kv) { return 2 * m.num_attention_heads * m.head_dim * (kv.bits_per_weight / 8); },
    kvHiddenSize: function (m, kv) { return 2 * m.hidden_size * (kv.bits_per_weight / 8); },
    kvOnce: function (m, kv) { return m.num_key_value_heads * m.head_dim * (kv.bits_per_weight / 8); },
    kvMlaAsMha: function (m, kv) { return 2 * m.num_key_value_heads * m.head_dim * (kv.bits_per_weight / 8); },
    kvBitsAsBytes: function (m, kv) { return kvPerLayer(m, kv) * 8; },
    kvPerTokenWith: function (m, perLayer, linearAsAttention) {
      var c = layerCounts(m);
      return perLayer * (c[0] + c[1] + (linearAsAttention ? c[2] : 0));
    },
    kvPerSequenceWith: function (m, context, perLayer, window, linearAsAttention) {
      var c = layerCounts(m), size = m.sliding_window ? m.sliding_window.size : 0;
      var kept = window === false ? context : Math.min(context, size);
      if (linearAsAttention) { return perLayer * ((c[0] + c[2]) * context + c[1] * kept); }
      var state = m.linear_attention ? m.linear_attention.state_bytes_per_layer * c[2] : 0.0;
      return perLayer * (c[0] * context + c[1] * kept) + state;
    },
    weightsBitsAsBytes: function (m, f, fe) { return E.weightBytes(m, f, fe) * 8; },
    weightsEmbeddingsQuantized: function (m, f, fe) {
      return E.weightBytes(m, { key: f.key, bits_per_weight: f.bits_per_weight, embedding_bits_per_weight: null }, fe);
    },
    weightsScaleForgotten: function (m, f, fe) {
      var emb = f.embedding_bits_per_weight;
      var f2 = { bits_per_weight: elementBits(f), embedding_bits_per_weight: emb !== null && emb !== undefined ? emb : elementBits(f) };
      return E.weightBytes(m, f2, fe ? { bits_per_weight: elementBits(fe) } : null);
    },
    weightsActiveForTotal: function (m, f, fe) {
      var wb = E.weightBytesBreakdown(m, f, fe);
      return wb.non_expert + wb.active_routed;
    },
    weightsReadAllExperts: function (m, f, batch) {
      var b = E.paramBreakdown(m), wb = E.weightBytesBreakdown(m, f, null, b), lookup = 0.0;
      if (b.lm_head) { lookup = (b.embedding - Math.min(batch, m.vocab_size) * m.hidden_size) * (wb.embeddings / b.embeddings); }
      return wb.total - lookup;
    },
    gbAsGib: function (x) { return x / GB * GiB; },
    gibAsGb: function (x) { return x / GiB * GB; },
    sparse: function (dense) { return 2 * dense; },
    bidirectional: function (perDirection) { return 2 * perDirection; },
    allreduceOnePerLayer: function (m, tokens, eb, tp, lat, link) {
      return m.num_hidden_layers * allreduceTime(tokens * m.hidden_size * eb, tp, lat, link);
    },
    allreduceNoLatency: function (m, tokens, eb, tp, lat, link) {
      return 2 * m.num_hidden_layers * (ring(tokens * m.hidden_size * eb, tp) / link);
    },
    allreduceNoRing: function (m, tokens, eb, tp, lat, link) {
      return 2 * m.num_hidden_layers * (lat + tokens * m.hidden_size * eb / link);
    },
    tpKvCapped: function (m, mx) {
      var kv = m.mla ? m.num_attention_heads : m.num_key_value_heads;
      return E.validTpDegrees(m, mx).filter(function (t) { return t <= kv; });
    },
    tpHeadsOnly: function (m, mx) { return range1(mx).filter(function (t) { return m.num_attention_heads % t === 0; }); },
    tpPowersOfTwo: function (mx) { var out = [], t = 1; while (t <= mx) { out.push(t); t *= 2; } return out; },
    bitsScalePerWeight: function (bits, scale) { return bits + scale; }
  };
  function range1(n) { var out = []; for (var t = 1; t <= n; t++) { out.push(t); } return out; }

  // ------------------------------------------------------------------ drill types (sitebuild/drills/)
  function draft(refs, v, answer, traps, extra) {
    var d = { refs: refs, values: v, answer: answer, traps: traps, question: null, napkin: null };
    Object.keys(extra || {}).forEach(function (k) { d[k] = extra[k]; });
    return d;
  }
  function kvValues(v, m, kv) {
    var c = layerCounts(m);
    Object.assign(v, { model: m.name, layers: fmtInt(m.num_hidden_layers), heads: fmtInt(m.num_attention_heads),
      kvh: fmtInt(m.num_key_value_heads), hd: fmtInt(m.head_dim), hidden: fmtInt(m.hidden_size),
      kvname: kv.name, kvkey: kv.key, kvbits: bits_(kv.bits_per_weight), eb: bits_(kv.bits_per_weight / 8),
      full: fmtInt(c[0]), caching: fmtInt(c[0] + c[1]) });
    if (c[1]) {
      v.sliding = fmtInt(c[1]); v.window = fmtInt(m.sliding_window.size);
      if (!c[0]) { v.all_sliding = ""; }
    }
    if (c[2]) {
      v.linear = fmtInt(c[2]); v.state = fmtBytes(m.linear_attention.state_bytes_per_layer);
      v.state_i = fmtInt(m.linear_attention.state_bytes_per_layer);
    }
    if (m.mla) { v.mla = ""; v.rank = fmtInt(m.mla.kv_lora_rank); v.rope = fmtInt(m.mla.qk_rope_head_dim); }
    else {
      v.gqa = "";
      if (!m.head_dim_in_config) { v.hd_derived = ""; }
    }
  }
  function kvExpr(m, kv) {
    var eb = bits_(kv.bits_per_weight / 8);
    if (m.mla) { return "(" + fmtInt(m.mla.kv_lora_rank) + " + " + fmtInt(m.mla.qk_rope_head_dim) + ") × " + eb; }
    return "2 × " + fmtInt(m.num_key_value_heads) + " × " + fmtInt(m.head_dim) + " × " + eb;
  }
  function kvLayerTraps(m, kv) {
    var out = [];
    if (!m.mla) {
      if (m.num_attention_heads !== m.num_key_value_heads) { out.push(["query_heads", T.kvQueryHeads(m, kv)]); }
      out.push(["k_or_v_once", T.kvOnce(m, kv)]);
    } else {
      out.push(["mla_as_mha", T.kvMlaAsMha(m, kv)]);
    }
    out.push(["hidden_size", T.kvHiddenSize(m, kv)]);
    out.push(["bits_as_bytes", T.kvBitsAsBytes(m, kv)]);
    return out;
  }
  function drawKvModel(rng) {
    var cls = rng.pick(S.kv_classes);
    return [rng.pick(CTX.models.filter(function (m) { return kvClass(m) === cls; })), cls];
  }
  function byContext(list, m) { return list.filter(function (c) { return c <= m.max_position_embeddings; }); }

  function makeWeights(rng) {
    var m = rng.pick(CTX.models), f = rng.pick(CTX.formats), fe = null;
    if (m.moe && rng.random() < 0.5) {
      fe = CTX.fmt(rng.pick(S.expert_formats.filter(function (k) { return k !== f.key; })));
    }
    var b = E.paramBreakdown(m), wb = E.weightBytesBreakdown(m, f, fe, b), embBits = E.embeddingBits(f);
    var rest = b.total - b.embeddings - b.routed_experts;
    var v = { model: m.name, fmt: f.name, fkey: f.key, params: fmtInt(b.total), bits: bits_(f.bits_per_weight),
      result: fmtGb(wb.total), total_b: fmtInt(wb.total) };
    var refs = { model: m.key, fmt: f.key };
    if (fe !== null || embBits !== f.bits_per_weight) {
      Object.assign(v, { mixed: "", emb: fmtInt(b.embeddings), rest: fmtInt(rest), embbits: bits_(embBits),
        emb_b: fmtInt(wb.embeddings), rest_b: fmtInt(wb.rest) });
    } else { v.plain = ""; }
    if (embBits !== f.bits_per_weight) { v.embrule = ""; }
    if (!b.lm_head) { v.tied = ""; }
    if (fe !== null) {
      refs.efmt = fe.key;
      Object.assign(v, { experts: fmtInt(b.routed_experts), fename: fe.name, fekey: fe.key,
        febits: bits_(fe.bits_per_weight), exp_b: fmtInt(wb.routed_experts) });
    }
    var traps = [["bits_as_bytes", T.weightsBitsAsBytes(m, f, fe)], ["gb_as_gib", T.gbAsGib(wb.total)],
      ["gib_as_gb", T.gibAsGb(wb.total)]];
    if (embBits !== f.bits_per_weight) { traps.push(["embeddings_quantized", T.weightsEmbeddingsQuantized(m, f, fe)]); }
    if (f.group_size || (fe !== null && fe.group_size)) { traps.push(["scale_forgotten", T.weightsScaleForgotten(m, f, fe)]); }
    if (m.moe) { traps.push(["active_for_total", T.weightsActiveForTotal(m, f, fe)]); }
    return draft(refs, v, wb.total, traps);
  }

  function makeKvToken(rng) {
    var mc = drawKvModel(rng), m = mc[0], cls = mc[1], kv = rng.pick(CTX.kvFormats);
    var perLayer = kvPerLayer(m, kv), answer = E.kvBytesPerToken(m, kv), v = {}, c = layerCounts(m);
    kvValues(v, m, kv);
    if (c[1] || c[2]) { v.caching_note = ""; }
    if (c[1]) { v.past_window = fmtBytes(perLayer * c[0]); }
    if (c[2]) { v.states = fmtBytes(m.linear_attention.state_bytes_per_layer * c[2]); }
    Object.assign(v, { expr: kvExpr(m, kv), per_layer: fmtInt(perLayer), answer_b: fmtInt(answer), result: fmtBytes(answer) });
    var traps = kvLayerTraps(m, kv).map(function (t) { return [t[0], T.kvPerTokenWith(m, t[1])]; });
    if (c[2]) { traps.push(["linear_as_attention", T.kvPerTokenWith(m, perLayer, true)]); }
    return draft({ model: m.key, kv: kv.key }, v, answer, traps, { question: cls === "sliding" || cls === "hybrid" ? 121 : 75 });
  }

  function makeKvBatch(rng) {
    var mc = drawKvModel(rng), m = mc[0], cls = mc[1], kv = rng.pick(CTX.kvFormats);
    var context = rng.pick(byContext(S.contexts, m)), batch = rng.pick([1, 4, 8, 16, 32, 64, 128]);
    var perLayer = kvPerLayer(m, kv), perSeq = E.kvBytesPerSequence(m, context, kv), answer = batch * perSeq;
    var v = {}, c = layerCounts(m);
    kvValues(v, m, kv);
    Object.assign(v, { batch: fmtInt(batch), ctx: fmtInt(context), per_layer: fmtInt(perLayer), per_seq: fmtInt(perSeq),
      answer_b: fmtInt(answer), result: fmtGb(answer), expr: kvExpr(m, kv) });
    if (c[1] || c[2]) {
      v.caching_note = "";
      var parts = [c[0] + " × " + fmtInt(context)];
      if (c[1]) { parts.push(c[1] + " × " + fmtInt(Math.min(context, m.sliding_window.size))); }
      var expr = fmtInt(perLayer) + " × (" + parts.join(" + ") + ")";
      if (c[2]) { expr += " + " + c[2] + " × " + fmtInt(m.linear_attention.state_bytes_per_layer); }
      v.seq_expr = expr;
    } else { v.per_token = fmtInt(perLayer * c[0]); }
    var traps = kvLayerTraps(m, kv).map(function (t) { return [t[0], batch * T.kvPerSequenceWith(m, context, t[1])]; });
    if (c[1] && context > m.sliding_window.size) { traps.push(["window_ignored", batch * T.kvPerSequenceWith(m, context, perLayer, false)]); }
    if (c[2]) { traps.push(["linear_as_attention", batch * T.kvPerSequenceWith(m, context, perLayer, true, true)]); }
    traps.push(["gb_as_gib", T.gbAsGib(answer)], ["gib_as_gb", T.gibAsGb(answer)]);
    return draft({ model: m.key, kv: kv.key }, v, answer, traps, { question: cls === "sliding" || cls === "hybrid" ? 121 : 75 });
  }

  // ---- deployments: the calculator's sheet
  function sheet(m, g, f, kv, n, context, conc, mfu) {
    var d = DATA.defaults;
    return E.evaluate(m, g, f, kv, null, n, context, conc, d.gpu_util, mfu === null || mfu === undefined ? d.mfu : mfu, d);
  }
  function smallestTp(m, g, f, kv, context, conc, ok, mfu) {
    var valid = E.validTpDegrees(m, DATA.defaults.max_tp);
    for (var i = 0; i < S.tp_choices.length; i++) {
      var n = S.tp_choices[i];
      if (valid.indexOf(n) >= 0) {
        var s = sheet(m, g, f, kv, n, context, conc, mfu);
        if (ok(n, s)) { return [n, s]; }
      }
    }
    return null;
  }
  function within(napkin, exact, share) { return Math.abs(napkin - exact) <= share * Math.abs(exact); }
  function allowances() { return DATA.defaults.activation_bytes + DATA.defaults.reserve_bytes; }
  function budget(memory, wpg, util, noAllowances) {
    var d = DATA.defaults;
    return noAllowances ? kvBudget(memory, wpg, util, 0, 0) : kvBudget(memory, wpg, util, d.activation_bytes, d.reserve_bytes);
  }
  function napkinBudget(s, n) { return s.usable_per_gpu - s.weights_total / n - allowances(); }
  function deployValues(v, m, g, f, kv, n, s) {
    var d = DATA.defaults;
    Object.assign(v, { model: m.name, gpu: g.name, fmt: f.name, fkey: f.key, kvname: kv.name, kvkey: kv.key, n: fmtInt(n),
      mem: n_(E.engineMemoryBytes(g) / GiB), mem_gb: fmtGb(E.engineMemoryBytes(g)), weights: fmtGb(s.weights_total),
      util: bits_(d.gpu_util), act: bits_(d.activation_bytes / GiB), res: bits_(d.reserve_bytes / GiB),
      frac: frac_(s.kv_fraction), usable: gib_(s.usable_per_gpu), wpg: gib_(s.weights_per_gpu), wtot: gib_(s.weights_total),
      budget: gib_(s.kv_budget), budget_b: fmtInt(s.kv_budget) });
    if (s.replicated_extra) { v.extra = fmtBytes(s.replicated_extra); }
    if (m.mla) { v.mla = ""; } else { v.kvh = fmtInt(m.num_key_value_heads); }
  }
  function drawDeployment(rng, contexts, concChoices, ok, opts) {
    opts = opts || {};
    var formats = opts.formats || S.sheet_formats;
    for (var a = 0; a < S.attempts; a++) {
      var m = rng.pick(CTX.sheetModels), f = CTX.fmt(rng.pick(formats));
      var g = rng.pick(opts.gpuOk ? CTX.gpus.filter(function (x) { return opts.gpuOk(x, f); }) : CTX.gpus);
      var kv = CTX.fmt(rng.pick(S.sheet_kv)), context = rng.pick(byContext(contexts, m));
      var conc = rng.pick(concChoices), mfu = opts.mfus ? rng.pick(opts.mfus) : null;
      var dr = { m: m, f: f, g: g, kv: kv, ctx: context, conc: conc, mfu: mfu };
      var found = smallestTp(m, g, f, kv, context, conc, function (n, s) { return ok(n, s, dr); }, mfu);
      if (found) { dr.n = found[0]; dr.s = found[1]; return dr; }
    }
    throw new Error("drills: no deployment drawn after many attempts");
  }
  function seqsNapkin(n, s) { return napkinBudget(s, n) / (s.kv_per_sequence * s.kv_fraction); }

  function makeMaxSequences(rng) {
    var tol = TYPES.max_sequences.tolerance;
    var d = drawDeployment(rng, S.contexts, [1], function (n, s) {
      return s.fits && s.max_sequences >= 1 && within(seqsNapkin(n, s), s.max_sequences, tol / 2);
    });
    var m = d.m, g = d.g, f = d.f, kv = d.kv, n = d.n, s = d.s, v = {};
    deployValues(v, m, g, f, kv, n, s);
    var perSeq = s.kv_per_sequence_gpu, perSeqWhole = perSeq / s.kv_fraction;
    Object.assign(v, { ctx: fmtInt(d.ctx), kvseq: fmtBytes(s.kv_per_sequence), kvseq_gpu: fmtInt(perSeq),
      answer: fmtInt(s.max_sequences), blocks: fmtInt(s.blocks_per_sequence) });
    var mem = E.engineMemoryBytes(g), wpg = s.weights_per_gpu, util = DATA.defaults.gpu_util;
    var traps = [["util_forgotten", maxSeqs(budget(mem, wpg, 1.0), perSeq)],
      ["ledger_forgotten", maxSeqs(budget(mem, wpg, util, true), perSeq)],
      ["gib_as_gb", maxSeqs(budget(T.gibAsGb(mem), wpg, util), perSeq)]];
    if (s.kv_fraction < 1) { traps.push(["kv_share_forgotten", maxSeqs(s.kv_budget, perSeqWhole)]); }
    if (n > 1) { traps.push(["tp_share_forgotten", maxSeqs(budget(mem, s.weights_total, util), perSeqWhole)]); }
    return draft({ model: m.key, gpu: g.key, fmt: f.key, kv: kv.key }, v, s.max_sequences, traps, { napkin: seqsNapkin(n, s) });
  }

  function windowParts(m, kv) {
    var c = layerCounts(m), perLayer = kvPerLayer(m, kv), fixedPart = 0.0;
    if (c[1]) { fixedPart += perLayer * c[1] * m.sliding_window.size; }
    if (c[2]) { fixedPart += m.linear_attention.state_bytes_per_layer * c[2]; }
    return [perLayer * c[0], fixedPart];
  }
  function contextNapkin(b, fixedPart, perTok, frac) { return Math.max(0, Math.floor((b - fixedPart * frac) / (perTok * frac))); }

  function makeMaxContext(rng) {
    var tol = TYPES.max_context.tolerance;
    var d = drawDeployment(rng, [1], [1], function (n, s, dr) {
      if (!s.fits || s.max_context_limit !== "memory" || s.max_context < 1024) { return false; }
      var wp = windowParts(dr.m, dr.kv);
      return within(contextNapkin(napkinBudget(s, n), wp[1], wp[0], s.kv_fraction), s.max_context, tol / 2);
    });
    var m = d.m, g = d.g, f = d.f, kv = d.kv, n = d.n, s = d.s, v = {};
    deployValues(v, m, g, f, kv, n, s);
    var wp = windowParts(m, kv), perTok = wp[0], fixedPart = wp[1], c = layerCounts(m), frac = s.kv_fraction;
    Object.assign(v, { per_tok: fmtBytes(perTok), per_tok_gpu: fmtInt(perTok * frac), answer: fmtInt(s.max_context),
      maxpos: fmtInt(m.max_position_embeddings) });
    if (fixedPart) { v.windowed = ""; v.fixed = fmtBytes(fixedPart); v.fixed_gpu = fmtInt(fixedPart * frac); }
    var mem = E.engineMemoryBytes(g), wpg = s.weights_per_gpu, util = DATA.defaults.gpu_util, b = s.kv_budget;
    var perLayer = kvPerLayer(m, kv);
    var traps = [["util_forgotten", contextNapkin(budget(mem, wpg, 1.0), fixedPart, perTok, frac)],
      ["ledger_forgotten", contextNapkin(budget(mem, wpg, util, true), fixedPart, perTok, frac)],
      ["gib_as_gb", contextNapkin(budget(T.gibAsGb(mem), wpg, util), fixedPart, perTok, frac)]];
    if (frac < 1) { traps.push(["kv_share_forgotten", contextNapkin(b, fixedPart, perTok, 1.0)]); }
    if (c[1]) { traps.push(["window_ignored", contextNapkin(b, 0.0, perLayer * (c[0] + c[1]), frac)]); }
    if (c[2]) { traps.push(["linear_as_attention", contextNapkin(b, 0.0, perLayer * (c[0] + c[2]), frac)]); }
    return draft({ model: m.key, gpu: g.key, fmt: f.key, kv: kv.key }, v, s.max_context, traps,
      { question: fixedPart ? 121 : 102, napkin: contextNapkin(napkinBudget(s, n), fixedPart, perTok, frac) });
  }

  function makeValidTp(rng) {
    var mx = DATA.defaults.max_tp, m, answer, traps;
    for (var a = 0; a < S.attempts; a++) {  // a model on which some mistake changes the list
      m = rng.pick(CTX.models);
      answer = E.validTpDegrees(m, mx);
      traps = [["kv_capped_tp", T.tpKvCapped(m, mx)], ["heads_only_tp", T.tpHeadsOnly(m, mx)], ["powers_of_two", T.tpPowersOfTwo(mx)]];
      if (traps.some(function (t) { return t[1].join(",") !== answer.join(","); })) { break; }
    }
    var degrees = range1(mx), widths = modelWidths(m), heads = m.num_attention_heads, kvh = m.num_key_value_heads;
    var v = { model: m.name, heads: fmtInt(heads), kvh: fmtInt(kvh), answer: answer.join(", "), max: fmtInt(mx),
      widths: widths.map(function (w) { return w[0] + " " + fmtInt(w[1]); }).join(" and "),
      heads_ok: degrees.filter(function (t) { return heads % t === 0; }).join(", "),
      width_ok: widths.map(function (w) {
        return w[0] + " " + fmtInt(w[1]) + " divides by TP " + degrees.filter(function (t) { return w[1] % t === 0; }).join(", ");
      }).join("; ") };
    if (m.mla) { v.mla = ""; }
    else { v.kv_ok = degrees.filter(function (t) { return t <= kvh ? kvh % t === 0 : t % kvh === 0; }).join(", "); }
    return draft({ model: m.key }, v, answer, traps);
  }

  function makeFit(rng) {
    var tol = TYPES.fit.tolerance, m, f, g, kv, context, conc, n, s, need, napkin, ok = false;
    for (var a = 0; a < S.attempts && !ok; a++) {
      m = rng.pick(CTX.sheetModels); f = CTX.fmt(rng.pick(S.sheet_formats)); g = rng.pick(CTX.gpus);
      kv = CTX.fmt(rng.pick(S.sheet_kv)); context = rng.pick(byContext(S.contexts, m));
      conc = rng.pick([1, 8, 16, 32, 64, 128, 256]);
      var valid = E.validTpDegrees(m, DATA.defaults.max_tp);
      n = rng.pick(S.tp_choices.filter(function (t) { return valid.indexOf(t) >= 0; }));
      s = sheet(m, g, f, kv, n, context, conc);
      need = s.weights_per_gpu + s.kv_load_gpu + allowances();
      napkin = s.weights_total / n + conc * s.kv_per_sequence * s.kv_fraction + allowances();
      ok = need <= 2.5 * s.usable_per_gpu && within(napkin, need, tol / 2);
    }
    if (!ok) { throw new Error("drills: fit: no deployment drawn"); }
    var v = {};
    deployValues(v, m, g, f, kv, n, s);
    Object.assign(v, { ctx: fmtInt(context), conc: fmtInt(conc), kvseq: fmtBytes(s.kv_per_sequence), load: gib_(s.kv_load_gpu),
      need: gib_(need), result: fmtGb(need) });
    v[s.headroom >= 0 ? "fits" : "short"] = fmtGb(Math.abs(s.headroom));
    var perSeqWhole = s.kv_per_sequence_gpu / s.kv_fraction;
    var traps = [["ledger_forgotten", s.weights_per_gpu + s.kv_load_gpu], ["gb_as_gib", T.gbAsGib(need)],
      ["gib_as_gb", T.gibAsGb(need)]];
    if (s.kv_fraction < 1) { traps.push(["kv_share_forgotten", s.weights_per_gpu + conc * perSeqWhole + allowances()]); }
    if (n > 1) { traps.push(["tp_share_forgotten", s.weights_total + conc * perSeqWhole + allowances()]); }
    return draft({ model: m.key, gpu: g.key, fmt: f.key, kv: kv.key }, v, need, traps, { napkin: napkin });
  }

  // ---- decode and prefill
  function decodeValues(v, m, g, f, kv, n, context, conc, s) {
    deployValues(v, m, g, f, kv, n, s);
    var b = E.paramBreakdown(m);
    Object.assign(v, { bw: fmtBandwidth(g.memory_bandwidth_bytes_per_s), ctx: fmtInt(context), conc: fmtInt(conc),
      kvtok: fmtBytes(s.kv_per_token), read: fmtGb(s.decode_weight_read), read_gpu: fmtInt(s.decode_weight_read_gpu),
      kv_gpu: fmtInt(s.decode_kv_read_gpu), mem_s: fmtSeconds(s.decode_memory_s), step: fmtSeconds(s.decode_step_s),
      per_seq: n_(s.decode_per_sequence), agg: n_(s.decode_aggregate) });
    if (s.decode_comm_s) { v.comm = fmtSeconds(s.decode_comm_s); }
    if (m.moe && b.moe_layers) {
      var wb = E.weightBytesBreakdown(m, f, null, b);
      Object.assign(v, { moe: "", k: fmtInt(m.moe.experts_per_token), experts: fmtInt(m.moe.num_experts),
        expert_bytes: fmtGb(wb.routed_experts), touched: n_(s.experts_touched) });
    }
    if (b.lm_head) { v.lookup = ""; }
  }
  function decodeNapkin(m, f, g, n, s, conc) {
    var b = E.paramBreakdown(m), wb = E.weightBytesBreakdown(m, f, null, b), weights = wb.total;
    if (m.moe && b.moe_layers) { weights = wb.non_expert + wb.routed_experts * s.experts_touched / m.moe.num_experts; }
    var step = (weights / n + conc * s.kv_per_sequence * s.kv_fraction) / g.memory_bandwidth_bytes_per_s;
    return conc / (step + s.decode_comm_s);
  }
  function decodeTraps(m, f, g, n, s, conc) {
    var bw = g.memory_bandwidth_bytes_per_s, comm = s.decode_comm_s;
    var traps = [["kv_reads_forgotten", conc / (s.decode_weight_read_gpu / bw + comm)]];
    if (comm) { traps.push(["comm_forgotten", conc / s.decode_memory_s]); }
    if (n > 1) { traps.push(["tp_share_forgotten", conc / ((s.decode_weight_read + s.decode_kv_read_gpu / s.kv_fraction) / bw)]); }
    if (m.moe && E.paramBreakdown(m).moe_layers) {
      var every = T.weightsReadAllExperts(m, f, conc) / n + s.replicated_extra;
      traps.push(["all_experts", conc / ((every + s.decode_kv_read_gpu) / bw + comm)]);
    }
    return traps;
  }
  function makeDecodeB1(rng) {
    var tol = TYPES.decode_b1.tolerance;
    var d = drawDeployment(rng, S.decode_contexts, [1], function (n, s, dr) {
      return s.fits && s.max_sequences >= 1 && within(decodeNapkin(dr.m, dr.f, dr.g, n, s, 1), s.decode_per_sequence, tol / 2) &&
        decodeTraps(dr.m, dr.f, dr.g, n, s, 1).some(function (t) { return differs(t[1], s.decode_per_sequence); });
    });
    var v = {};
    decodeValues(v, d.m, d.g, d.f, d.kv, d.n, d.ctx, 1, d.s);
    v.result = n_(d.s.decode_per_sequence) + " tokens/s";
    return draft({ model: d.m.key, gpu: d.g.key, fmt: d.f.key, kv: d.kv.key }, v, d.s.decode_per_sequence,
      decodeTraps(d.m, d.f, d.g, d.n, d.s, 1), { napkin: decodeNapkin(d.m, d.f, d.g, d.n, d.s, 1) });
  }
  function makeDecodeBatch(rng) {
    var tol = TYPES.decode_batch.tolerance;
    var d = drawDeployment(rng, S.decode_contexts, [8, 16, 32, 64, 128], function (n, s, dr) {
      return s.fits && s.headroom >= 0 && within(decodeNapkin(dr.m, dr.f, dr.g, n, s, dr.conc), s.decode_aggregate, tol / 2);
    });
    var s = d.s, conc = d.conc, v = {};
    decodeValues(v, d.m, d.g, d.f, d.kv, d.n, d.ctx, conc, s);
    v.result = n_(s.decode_aggregate) + " tokens/s in total (" + v.per_seq + " per sequence)";
    var traps = decodeTraps(d.m, d.f, d.g, d.n, s, conc), bw = d.g.memory_bandwidth_bytes_per_s;
    traps.push(["weights_per_sequence", conc / ((conc * s.decode_weight_read_gpu + s.decode_kv_read_gpu) / bw + s.decode_comm_s)]);
    traps.push(["per_sequence_rate", s.decode_per_sequence]);
    return draft({ model: d.m.key, gpu: d.g.key, fmt: d.f.key, kv: d.kv.key }, v, s.decode_aggregate, traps,
      { napkin: decodeNapkin(d.m, d.f, d.g, d.n, s, conc) });
  }
  function prefillParts(m, context, s) {
    var b = E.paramBreakdown(m), head = b.lm_head || b.embedding;
    var dense = prefillMatmulFlops(m, context, Math.min(1, context));
    return [b.compute_active - head, head, dense, s.prefill_flops - dense];
  }
  function prefillNapkin(m, context, s, n, mfu) {
    var p = prefillParts(m, context, s);
    return (2 * p[0] * context + p[3]) / (s.prefill_peak * n * mfu);
  }
  function rateKind(label) { return label.replace("dense ", ""); }
  function rateText(x, label) { var t = fmtFlops(x); return label.indexOf("INT8") >= 0 ? t.replace("TFLOPS", "TOPS") : t; }
  function makePrefill(rng) {
    var tol = TYPES.prefill.tolerance;
    var d = drawDeployment(rng, S.prefill_contexts, [1], function (n, s, dr) {
      return s.fits && s.max_sequences >= 1 && has(s, "prefill_s") &&
        within(prefillNapkin(dr.m, dr.ctx, s, n, dr.mfu), s.prefill_s, tol / 2);
    }, { gpuOk: function (x, f) { return peakFlops(x, f)[0] !== null; }, mfus: [0.3, 0.4, 0.5, 0.6] });
    var m = d.m, g = d.g, f = d.f, n = d.n, s = d.s, context = d.ctx, mfu = d.mfu;
    var b = E.paramBreakdown(m), p = prefillParts(m, context, s), matmul = p[0], head = p[1], dense = p[2], attn = p[3];
    var peak = s.prefill_peak, label = s.prefill_peak_label, flops = s.prefill_flops;
    var v = { model: m.name, gpu: g.name, fmt: f.name, n: fmtInt(n), ctx: fmtInt(context), mfu: bits_(mfu),
      matmul: fmtInt(matmul), attn: sci_(attn), dense: sci_(dense), flops: sci_(flops), label: label, kind: rateKind(label),
      peak: fmtFlops(peak), sparse: fmtFlops(T.sparse(peak)), group: fmtFlops(peak * n), result: fmtSeconds(s.prefill_s) };
    var moe = !!(m.moe && b.moe_layers);
    if (moe) { v.moe = ""; v.total = fmtInt(b.total); }
    var traps = [["sparse_flops", prefillTime(flops, T.sparse(peak) * n, mfu)], ["mfu_forgotten", prefillTime(flops, peak * n, 1.0)],
      ["one_flop_per_param", prefillTime(dense / 2 + attn, peak * n, mfu)], ["attention_forgotten", prefillTime(dense, peak * n, mfu)]];
    if (moe) {
      var every = b.total - (b.lm_head ? b.embedding : 0) - head;
      traps.push(["total_for_active", prefillTime(2 * every * context + 2 * head + attn, peak * n, mfu)]);
    }
    if (n > 1) { traps.push(["tp_share_forgotten", prefillTime(flops, peak, mfu)]); }
    return draft({ model: m.key, gpu: g.key, fmt: f.key }, v, s.prefill_s, traps,
      { question: context >= 32768 ? 116 : null, napkin: prefillNapkin(m, context, s, n, mfu) });
  }

  function makeRidgeBatch(rng) {
    var g, f, pk = [null];
    for (var a = 0; a < S.attempts && pk[0] === null; a++) {
      g = rng.pick(CTX.gpus); f = CTX.fmt(rng.pick(S.ridge_formats)); pk = peakFlops(g, f);
    }
    if (pk[0] === null) { throw new Error("drills: ridge_batch: no GPU drawn"); }
    var peak = pk[0], label = pk[1], bw = g.memory_bandwidth_bytes_per_s, ridge = peak / bw, bpp = f.bits_per_weight / 8;
    var answer = batchToRidge(ridge, bpp);
    var v = { gpu: g.name, fmt: f.name, fkey: f.key, bits: bits_(f.bits_per_weight), bpp: bits_(bpp), label: label,
      kind: rateKind(label), peak: rateText(peak, label), sparse: rateText(T.sparse(peak), label), bw: fmtBandwidth(bw),
      ridge: n_(ridge), op: label.indexOf("INT8") >= 0 ? "op" : "FLOP", answer: fmtInt(answer) };
    if (["bf16", "fp8", "int8"].indexOf(f.key) < 0) { v.weight_only = ""; }
    var traps = [["sparse_flops", batchToRidge(T.sparse(peak) / bw, bpp)], ["bits_as_bytes", batchToRidge(ridge, bpp * 8)]];
    if (bpp !== 2) { traps.push(["ridge_as_batch", batchToRidge(ridge, 2)]); }
    if (f.key === "fp8") { traps.push(["bf16_rate_for_fp8", batchToRidge(g.bf16_dense_flops / bw, bpp)]); }
    return draft({ gpu: g.key, fmt: f.key }, v, answer, traps);
  }

  function makeLittlesLaw(rng) {
    var rate = rng.pick([2, 4, 5, 8, 10, 12, 16, 20, 25, 40, 50, 80, 100]), ttftMs = rng.pick([150, 200, 250, 300, 400, 500, 800]);
    var tpotMs = rng.pick([8, 10, 12, 15, 20, 25, 30, 40, 50]), out = rng.pick([100, 150, 200, 256, 300, 500, 800, 1000]);
    var ttft = ttftMs / 1000, tpot = tpotMs / 1000, w = ttft + out * tpot, answer = rate * w;
    var v = { rate: fmtInt(rate), ttft: fmtInt(ttftMs), tpot: fmtInt(tpotMs), out: fmtInt(out), w: n_(w), decode: n_(out * tpot),
      ttft_s: bits_(ttft), answer: n_(answer) };
    var traps = [["ttft_only", rate * ttft], ["ttft_forgotten", rate * (out * tpot)], ["ms_as_s", rate * (ttftMs + out * tpotMs)]];
    return draft({}, v, answer, traps);
  }

  function priceValues(v, p, g, n) {
    Object.assign(v, { gpu: g.name, price: fmtUsd(p.usd_per_hour), n: fmtInt(n), hourly: fmtUsd(p.usd_per_hour * n) });
  }
  function costPerM(price, n, tps, util) { return price * n / (tps * 3600 * util) * 1e6; }            // capacity.py
  function crossover(price, n, api) { return price * n / 3600 / (api / 1e6); }
  function makeCostPerM(rng) {
    var p = rng.pick(CTX.gpuPrices), n = rng.pick(S.tp_choices), tps = rng.pick(S.cost_rates) * n;
    var util = rng.pick([0.8, 0.6, 0.5, 0.4, 0.3]), g = CTX.gpu(p.gpu), answer = costPerM(p.usd_per_hour, n, tps, util), v = {};
    priceValues(v, p, g, n);
    Object.assign(v, { tps: fmtInt(tps), util: fmtPct(util), util_f: bits_(util), result: fmtUsd(answer),
      per_hour_tokens: fmtInt(tps * 3600 * util) });
    var traps = [["idle_forgotten", costPerM(p.usd_per_hour, n, tps, 1.0)]];
    if (n > 1) { traps.push(["gpus_forgotten", costPerM(p.usd_per_hour, 1, tps, util)]); }
    return draft({ gpu: g.key, price: p.key }, v, answer, traps);
  }
  function makeCrossover(rng) {
    var p = rng.pick(CTX.gpuPrices), n = rng.pick(S.tp_choices), a = rng.pick(CTX.apiPrices);
    var share = rng.pick([0.5, 0.6, 0.75, 0.8, 0.9]), g = CTX.gpu(p.gpu);
    var blended = a.usd_per_m_input * share + a.usd_per_m_output * (1 - share), answer = crossover(p.usd_per_hour, n, blended), v = {};
    priceValues(v, p, g, n);
    Object.assign(v, { api: a.key, pin: fmtUsd(a.usd_per_m_input), pout: fmtUsd(a.usd_per_m_output), share: fmtPct(share),
      share_f: bits_(share), out_f: bits_(1 - share), blended: fmtUsd(blended), result: n_(answer) + " tokens/s" });
    var traps = [["output_price_only", crossover(p.usd_per_hour, n, a.usd_per_m_output)],
      ["input_price_only", crossover(p.usd_per_hour, n, a.usd_per_m_input)]];
    if (n > 1) { traps.push(["gpus_forgotten", crossover(p.usd_per_hour, 1, blended)]); }
    return draft({ gpu: g.key, price: p.key, api: a.key }, v, answer, traps);
  }

  function makeAllreduce(rng) {
    var gpus = CTX.gpus.filter(function (g) { return g.allreduce_latency_s && g.interconnect_bytes_per_s_per_direction; });
    var m, g, degrees = [];
    for (var a = 0; a < S.attempts && !degrees.length; a++) {
      m = rng.pick(CTX.models); g = rng.pick(gpus);
      var valid = E.validTpDegrees(m, DATA.defaults.max_tp);
      degrees = [2, 4, 8].filter(function (t) { return valid.indexOf(t) >= 0; });
    }
    if (!degrees.length) { throw new Error("drills: allreduce: no model drawn"); }
    var n = rng.pick(degrees), batch = rng.pick(S.allreduce_batches), eb = DATA.defaults.activation_element_bytes;
    var lat = g.allreduce_latency_s, link = g.interconnect_bytes_per_s_per_direction;
    var comm = function (gpu, tokens) {  // the calculator's decode all-reduce term (parallel.tp_decode_allreduce_time)
      return sheet(m, gpu, CTX.fmt("bf16"), CTX.fmt("bf16"), n, 1024, tokens).decode_comm_s;
    };
    var answer = comm(g, batch), buf = batch * m.hidden_size * eb, one = allreduceTime(buf, n, lat, link);
    var v = { model: m.name, gpu: g.name, layers: fmtInt(m.num_hidden_layers), hidden: fmtInt(m.hidden_size), n: fmtInt(n),
      batch: fmtInt(batch), eb: bits_(eb), lat: fmtSeconds(lat), bidir: fmtBandwidth(T.bidirectional(link)),
      link: fmtBandwidth(link), buf: fmtInt(buf), ring: fmtInt(ring(buf, n)), one: fmtSeconds(one),
      calls: fmtInt(2 * m.num_hidden_layers), result: fmtSeconds(answer) };
    var traps = [["bidirectional", comm(Object.assign({}, g, { interconnect_bytes_per_s_per_direction: T.bidirectional(link) }), batch)],
      ["one_allreduce_per_layer", T.allreduceOnePerLayer(m, batch, eb, n, lat, link)],
      ["latency_forgotten", T.allreduceNoLatency(m, batch, eb, n, lat, link)],
      ["ring_factor_forgotten", T.allreduceNoRing(m, batch, eb, n, lat, link)]];
    if (batch > 1) { traps.push(["batch_forgotten", comm(g, 1)]); }
    return draft({ model: m.key, gpu: g.key }, v, answer, traps);
  }

  function makeEffectiveBits(rng) {
    var f = rng.pick(CTX.blockFormats), eb = elementBits(f), answer = eb + (f.scale_bits + 0.0) / f.group_size;
    var v = { fmt: f.name, fkey: f.key, eb: bits_(eb), g: fmtInt(f.group_size), scale: bits_(f.scale_bits),
      over: bits_(f.scale_bits / f.group_size), answer: bits_(answer) };
    var traps = [["scale_forgotten", eb], ["scale_per_weight", T.bitsScalePerWeight(eb, f.scale_bits)], ["bytes_for_bits", answer / 8]];
    return draft({ fmt: f.key }, v, answer, traps);
  }

  var MAKERS = { weights: makeWeights, kv_token: makeKvToken, kv_batch: makeKvBatch, max_sequences: makeMaxSequences,
    max_context: makeMaxContext, valid_tp: makeValidTp, fit: makeFit, decode_b1: makeDecodeB1, decode_batch: makeDecodeBatch,
    prefill: makePrefill, ridge_batch: makeRidgeBatch, littles_law: makeLittlesLaw, cost_per_m: makeCostPerM,
    crossover: makeCrossover, allreduce: makeAllreduce, effective_bits: makeEffectiveBits };

  function differs(t, x) {
    if (Array.isArray(x)) { return t.join(",") !== x.join(","); }
    return Math.abs(t - x) >= S.min_trap_diff * Math.abs(x);
  }
  /* The drill of type `key` drawn with `seed`: the same object sitebuild.drills.make returns. */
  function make(key, seed) {
    var dt = TYPES[key];
    if (!dt) { throw new Error("drills: unknown drill type " + JSON.stringify(String(key).slice(0, 40))); }
    if (!(Number.isInteger(seed) && seed >= 0 && seed <= 4294967295)) { throw new Error("drills: seed must be a whole number from 0 to 4294967295"); }
    var d = MAKERS[key](new Rng(seed)), traps = {};
    d.traps.forEach(function (t) { if (differs(t[1], d.answer)) { traps[t[0]] = t[1]; } });
    var out = { type: key, seed: seed, question: d.question || dt.question, refs: d.refs, answer: d.answer,
      answer_text: answerText(dt, d.answer), traps: traps };
    if (d.napkin !== null) { out.napkin = d.napkin; }
    var r = render(dt.templates, d.values);
    out.prompt = r.prompt; out.ask = r.ask; out.solution = r.solution;
    return out;
  }
  function dailySet(day) {
    var rng = new Rng(fnv1a("msib-drills:" + day)), keys = DATA.types.map(function (t) { return t.key; });
    for (var i = keys.length - 1; i > 0; i--) { var j = rng.index(i + 1), t = keys[i]; keys[i] = keys[j]; keys[j] = t; }
    return keys.slice(0, S.daily_size).map(function (k) { return [k, Math.floor(rng.random() * 4294967296)]; });
  }

  // ------------------------------------------------------------------ typed answers
  /* parse(text, dim) reads an answer as a person types it: "140 GB", "130.4 GiB", "1.4e11", "128 KiB",
     "2,300 tok/s", "0.35 s", "350 ms", "$0.35", "4.25 bits", "1, 2, 4, 8". It returns
     {value, unit} in the dimension's base unit (bytes, seconds, tokens/s, $ per million tokens, bits per
     weight, a count; a sorted list for "list"), {bare: true, value} for a number without a unit, or
     {error, kind} with a message for the reader. Only digits, separators, exponents and the unit words
     below are accepted: anything else is refused, never interpreted. */
  var DIM_NAMES = { bytes: "an amount of memory (bytes, GB, GiB)", time: "a time (s, ms, µs)",
    rate: "a rate in tokens per second", usd: "a price in dollars", bits: "bits per weight",
    count: "a plain number", list: "a list of whole numbers" };
  var UNITS = {
    bytes: [[["b", "byte", "bytes"], 1], [["kb", "kilobyte", "kilobytes"], 1e3], [["kib"], 1024], [["mb", "megabyte", "megabytes"], 1e6],
      [["mib"], 1048576], [["gb", "gigabyte", "gigabytes"], 1e9], [["gib"], 1073741824], [["tb", "terabyte", "terabytes"], 1e12],
      [["tib"], 1099511627776], [["pb"], 1e15], [["pib"], 1125899906842624], [["bit", "bits"], 1 / 8], [["kbit", "kbits"], 125],
      [["mbit", "mbits"], 125000], [["gbit", "gbits"], 125000000], [["tbit", "tbits"], 125000000000]],
    time: [[["s", "sec", "secs", "second", "seconds"], 1], [["ms", "msec", "msecs", "millisecond", "milliseconds"], 1e-3],
      [["us", "µs", "μs", "usec", "microsecond", "microseconds"], 1e-6], [["ns", "nanosecond", "nanoseconds"], 1e-9],
      [["min", "mins", "minute", "minutes"], 60], [["h", "hr", "hrs", "hour", "hours"], 3600]],
    rate: [[["tok/s", "toks/s", "tokens/s", "token/s", "t/s", "tps", "tok/sec", "tokens/sec", "tokens per second",
      "tokens per sec", "tokens a second", "token per second", "tokens/second"], 1],
      [["tok/min", "tokens/min", "tokens per minute"], 1 / 60], [["tok/h", "tokens/h", "tokens/hour", "tokens per hour"], 1 / 3600]],
    bits: [[["bit", "bits", "bits/weight", "bits per weight", "bit/weight", "bpw", "bits/param", "bits per parameter", "b/w"], 1],
      [["byte", "bytes", "bytes/weight", "bytes per weight", "byte/weight", "bytes/param"], 8]],
    count: [[["sequences", "sequence", "seqs", "seq", "requests", "request", "reqs", "req", "tokens", "token", "tok", "in flight",
      "requests in flight", "concurrent", "concurrent requests", "concurrent sequences", "users"], 1]]
  };
  var PER_TOKENS = [[["/m", "/mtok", "/m tok", "/m tokens", "/1m", "/1m tok", "/1m tokens", "/million", "/million tokens",
    "per m", "per mtok", "per m tokens", "per 1m", "per 1m tokens", "per million", "per million tokens", "per 1m tok"], 1],
    [["/k", "/ktok", "/k tok", "/k tokens", "/1k", "/1k tokens", "/thousand tokens", "per 1k tokens", "per k tokens",
      "per thousand tokens", "per 1k", "per thousand"], 1000],
    [["/tok", "/token", "per token"], 1e6]];
  var MULTIPLIERS = [[["k", "thousand"], 1e3], [["m", "mn", "million"], 1e6], [["bn", "billion"], 1e9]];
  function lookup(table, word) {
    for (var i = 0; i < table.length; i++) { if (table[i][0].indexOf(word) >= 0) { return table[i][1]; } }
    return null;
  }
  function whichDim(word) {
    var out = [];
    Object.keys(UNITS).forEach(function (d) { if (lookup(UNITS[d], word) !== null) { out.push(d); } });
    return out;
  }
  var SUPER = { "⁰": "0", "¹": "1", "²": "2", "³": "3", "⁴": "4", "⁵": "5", "⁶": "6", "⁷": "7", "⁸": "8", "⁹": "9", "⁻": "-" };
  var NUMBER = new RegExp("^([+\\-−])?(\\d{1,3}(?:,\\d{3})+|\\d{1,3}(?:[ \\u00a0\\u2009\\u202f_']\\d{3})+|\\d+)?(\\.\\d+)?" +
    "(?:[eE]([+\\-−]?\\d{1,3})|\\s*[×xX*·]\\s*10\\s*(?:\\^|\\*\\*)\\s*([+\\-−]?\\d{1,3})|\\s*[×xX*·]\\s*10([⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]{1,3}))?");
  var MAX_LENGTH = 80;

  function parseList(text) {
    var t = text.trim().replace(/^tp\s*[=:]?\s*/i, "");
    if (!/^\d{1,3}(?:\s*(?:,|;|\/|&|\band\b|\s)\s*\d{1,3})*$/i.test(t)) {
      return { error: "Write the degrees as whole numbers separated by commas, for example 1, 2, 4.", kind: "syntax" };
    }
    var values = t.split(/[^0-9]+/).filter(Boolean).map(Number);
    if (values.some(function (x) { return x < 1 || x > 16; })) {
      return { error: "Only degrees from 1 to 16 are asked for.", kind: "range" };
    }
    values = values.filter(function (x, i) { return values.indexOf(x) === i; }).sort(function (a, b) { return a - b; });
    return { value: values, unit: "" };
  }
  function parse(text, dim) {
    if (typeof text !== "string") { return { error: "Type an answer.", kind: "empty" }; }
    if (text.length > MAX_LENGTH) { return { error: "That is longer than any answer here (" + MAX_LENGTH + " characters at most).", kind: "syntax" }; }
    var t = text.trim().replace(/\.$/, "").trim();
    if (!t) { return { error: "Type an answer first.", kind: "empty" }; }
    if (dim === "list") { return parseList(t); }
    t = t.replace(/^(?:~|≈|about|approximately|approx\.?|around|roughly|batch|tp)\s*/i, "");
    var currency = false, m = /^(?:us\$|\$|usd\s+)/i.exec(t);
    if (m) { currency = true; t = t.slice(m[0].length).trim(); }
    var num = NUMBER.exec(t);
    if (!num || (!num[2] && !num[3])) { return { error: "No number found: start with the number, for example 140 GB.", kind: "syntax" }; }
    var intPart = (num[2] || "0").replace(/[, \u00a0\u2009\u202f_']/g, "");
    var value = Number(intPart + (num[3] || ""));
    var ex = num[4] || num[5] || (num[6] ? num[6].replace(/./g, function (c) { return SUPER[c]; }) : null);
    if (ex) { value = value * Math.pow(10, Number(ex.replace("−", "-"))); }
    if (num[1] === "-" || num[1] === "−") { value = -value; }
    var rest = t.slice(num[0].length).trim();
    if (/^,\d/.test(rest)) {
      return { error: "Use a point for decimals (130.4, not 130,4); commas separate thousands (2,300).", kind: "syntax" };
    }
    if (/^(?:-|–|to\b)\s*\d/i.test(rest)) { return { error: "Give one number, not a range.", kind: "syntax" }; }
    if (/^[\d,.]/.test(rest)) { return { error: "That number cannot be read: write it as 2300, 2,300 or 2.3e3.", kind: "syntax" }; }
    if (!isFinite(value)) { return { error: "That number is too large to read.", kind: "syntax" }; }
    if (value < 0) { return { error: "The answers here are positive numbers.", kind: "range" }; }
    var word = rest.toLowerCase().replace(/\s+/g, " ");
    if (!currency && /^(?:\$|usd|dollars?)\b/.test(word)) { currency = true; word = word.replace(/^(?:\$|usd|dollars?)\s*/, ""); }
    if (currency || dim === "usd") { return parseUsd(value, word, currency, dim, rest || "$"); }
    if (!word) { return { bare: true, value: value }; }
    if (/^(?:s|sec|ms|µs|μs|us)\s*(?:\/|per)\s*(?:tok|tokens?)$/.test(word) && dim !== "time") {
      return { error: "“" + rest.slice(0, 30) + "” is a time per token; " + (dim === "rate" ?
        "give the rate in tokens per second (1,000 / milliseconds per token)." : "this answer is " + DIM_NAMES[dim] + "."),
        kind: "dimension" };
    }
    var found = dimUnit(word, dim);
    if (found) { return found.dim === dim ? { value: value * found.factor, unit: rest } : wrongDim(found.dim, dim, rest); }
    // a multiplier (k, M, billion) before a rate or count unit, or alone
    var mm = /^(thousand|million|billion|mn|bn|k|m)\s*(.*)$/.exec(word);
    if (mm) {
      var mult = lookup(MULTIPLIERS, mm[1]), after = mm[2];
      if (!after) { return { bare: true, value: value * mult }; }
      var u = dimUnit(after, dim);
      if (u && (u.dim === "rate" || u.dim === "count")) {
        return u.dim === dim ? { value: value * mult * u.factor, unit: rest } : wrongDim(u.dim, dim, rest);
      }
    }
    if (/^(?:g|t|p|gi|ti|mi|ki)$/.test(word)) {
      return { error: "“" + rest + "” alone is ambiguous: write GB or GiB (or bytes).", kind: "unit" };
    }
    return { error: "Unknown unit “" + rest.slice(0, 30) + "”. " + hint(dim), kind: "unit" };
  }
  function dimUnit(word, dim) {
    if (lookup(UNITS[dim] || [], word) !== null) { return { dim: dim, factor: lookup(UNITS[dim], word) }; }
    var dims = whichDim(word);
    if (dims.length) { return { dim: dims[0], factor: lookup(UNITS[dims[0]], word) }; }
    return null;
  }
  function parseUsd(value, word, currency, dim, rest) {
    if (dim !== "usd") { return wrongDim("usd", dim, rest); }
    var factor = 1;
    if (word) {
      var w = word.replace(/^(?:\$|usd|dollars?)\s*/, "");
      if (w && w !== "$") {
        factor = lookup(PER_TOKENS, w.replace(/\s*\/\s*/, "/"));
        if (factor === null) {
          var other = currency ? null : dimUnit(w, dim);
          if (other) { return wrongDim(other.dim, dim, rest); }
          return { error: "Unknown unit “" + rest.slice(0, 30) + "”. " + hint(dim), kind: "unit" };
        }
      }
    }
    return { value: value * factor, unit: currency || word ? "$" : "" };
  }
  function wrongDim(found, dim, rest) {
    return { error: "“" + rest.slice(0, 30) + "” is " + DIM_NAMES[found].replace(/ \(.*\)$/, "") + "; this answer is " + DIM_NAMES[dim] + ".",
      kind: "dimension" };
  }
  function hint(dim) {
    return { bytes: "Use bytes, KB, MB, GB, TB or KiB, MiB, GiB, TiB.", time: "Use s, ms, µs or min.",
      rate: "Use tokens/s (tok/s), or a plain number of tokens per second.", usd: "Use dollars: $0.35, or 0.35 per million tokens.",
      bits: "Use bits (or bytes) per weight.", count: "Use a plain number.", list: "" }[dim] || "";
  }
  /* The reading of a typed answer for one drill, with its type's rule for numbers without a unit. */
  function read(text, dt) {
    var p = parse(text, dt.dim);
    if (p.error || !p.bare) { return p; }
    if (dt.bare === null || dt.bare === undefined) {
      return { error: "Add a unit: " + hint(dt.dim).replace(/^Use /, ""), kind: "unit" };
    }
    if (p.value < dt.bare) {
      return { error: "Add a unit: is " + n_(p.value) + " in GB, GiB or bytes?", kind: "unit" };
    }
    return { value: p.value, unit: "" };
  }
  /* Grade a reading against a drill: right within the type's tolerance or wrong; the named mistakes
     whose figure the answer matches (closer to it than to the right answer, within the tolerance), and,
     for a right answer, a mistake whose figure it matches more closely than the right one. */
  function grade(inst, value) {
    var dt = TYPES[inst.type], x = inst.answer, keys = Object.keys(inst.traps);
    if (dt.dim === "list") {
      var same = function (a) { return a.join(",") === value.join(","); };
      return { right: same(x), traps: same(x) ? [] : keys.filter(function (k) { return same(inst.traps[k]); }), near: [] };
    }
    var rel = function (a, b) { return b === 0 ? (a === 0 ? 0 : Infinity) : Math.abs(a - b) / Math.abs(b); };
    var off = rel(value, x), tol = dt.tolerance, band = Math.max(tol, 0.05);
    var right = off <= tol + 1e-12 || Math.abs(value - x) <= (dt.slack || 0);
    var scored = keys.map(function (k) { return [k, rel(value, inst.traps[k])]; })
      .filter(function (p) { return p[1] < off && p[1] <= (right ? tol / 4 : band); })
      .sort(function (a, b) { return a[1] - b[1]; });
    var best = scored.length ? scored[0][1] : null;
    var names = scored.filter(function (p) { return rel(inst.traps[p[0]], inst.traps[scored[0][0]]) <= 1e-9 || p[1] === best; })
      .map(function (p) { return p[0]; });
    return { right: right, off: off, traps: right ? [] : names, near: right ? names : [] };
  }

  root.MSIBDrills = {
    setData: setData, make: make, dailySet: dailySet, parse: parse, read: read, grade: grade, answerText: answerText,
    types: function () { return DATA ? DATA.types : []; }, type: function (k) { return TYPES[k]; },
    fnv1a: fnv1a, Rng: Rng, fill: fill,
    format: { fixed: fixed, fmtInt: fmtInt, fmtNum: fmtNum, fmtGb: fmtGb, fmtBytes: fmtBytes, fmtBandwidth: fmtBandwidth,
      fmtFlops: fmtFlops, fmtSeconds: fmtSeconds, fmtUsd: fmtUsd, fmtPct: fmtPct, n: n_, bits: bits_, gib: gib_, sci: sci_, frac: frac_ }
  };
  if (root.MSIB_DRILLS) { setData(root.MSIB_DRILLS); }
})(typeof window !== "undefined" ? window : this);
