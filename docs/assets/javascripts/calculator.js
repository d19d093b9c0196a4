/* The calculator page's form and results. Data: window.MSIB_CALC_DATA (sitebuild/calculator.py);
   figures: window.MSIBCalcEngine (calc-engine.js). The address bar's query string holds every input, so
   a link reopens the same calculation. Everything a reader types is shown with textContent, never as
   HTML; a bad input gets a message under its field, and the results say what to fix. */
(function () {
  "use strict";
  var D = window.MSIB_CALC_DATA, E = window.MSIBCalcEngine, form = document.getElementById("calc-form");
  if (!D || !E || !form) { return; }
  var GiB = 1073741824, MAX_GPUS = 64;
  var IDS = { m: "calc-model", cfg: "calc-config", g: "calc-gpu", gmem: "calc-gmem", gbw: "calc-gbw",
    gbf16: "calc-gbf16", gfp8: "calc-gfp8", n: "calc-n", w: "calc-w", e: "calc-e", kv: "calc-kv",
    ctx: "calc-ctx", c: "calc-c", u: "calc-u", mfu: "calc-mfu" };
  var DEFAULTS = { m: "llama-3.1-70b", cfg: "", g: "h100-sxm", gmem: "80", gbw: "3350", gbf16: "989", gfp8: "",
    n: "2", w: "fp8", e: "", kv: "bf16", ctx: "8192", c: "16", u: String(D.defaults.gpu_util),
    mfu: String(D.defaults.mfu) };
  var byKey = function (list) { var o = {}; list.forEach(function (x) { o[x.key] = x; }); return o; };
  var MODELS = byKey(D.models), GPUS = byKey(D.gpus), FMTS = byKey(D.formats);
  var $ = function (id) { return document.getElementById(id); };
  var field = function (k) { return $(IDS[k]); };
  var results = $("calc-results");

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) { node.textContent = text; }
    if (cls) { node.className = cls; }
    return node;
  }
  function options(select, items) {
    items.forEach(function (it) { var o = el("option", it[1]); o.value = it[0]; select.appendChild(o); });
  }
  options(field("m"), D.models.map(function (m) { return [m.key, m.name]; }).concat([["paste", "Paste a config.json…"]]));
  options(field("g"), D.gpus.map(function (g) { return [g.key, g.name]; }).concat([["custom", "Custom GPU…"]]));
  options(field("w"), D.formats.map(function (f) { return [f.key, f.name]; }));
  options(field("e"), [["", "Same as the weights"]].concat(D.formats.map(function (f) { return [f.key, f.name]; })));
  options(field("kv"), D.formats.filter(function (f) { return f.kv_cache; }).map(function (f) { return [f.key, f.name]; }));

  // ------------------------------------------------------------------ formatting
  function int(x) { return Math.round(x).toLocaleString("en-US"); }
  function fixed(x, d) { return x.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d }); }
  function gb(x) { return fixed(x / 1e9, 2) + " GB (" + fixed(x / GiB, 2) + " GiB)"; }
  function params(x) {
    return x >= 1e12 ? fixed(x / 1e12, 3) + "T" : x >= 1e9 ? fixed(x / 1e9, 2) + "B" : fixed(x / 1e6, 1) + "M";
  }
  function secs(x) { return x < 1e-3 ? fixed(x * 1e6, 1) + " µs" : x < 1 ? fixed(x * 1e3, 2) + " ms" : fixed(x, 2) + " s"; }
  function rate(x) { return fixed(x, x < 100 ? 1 : 0) + " tokens/s"; }
  function bytesEl(f) { return fixed(f.bits_per_weight / 8, f.bits_per_weight % 8 ? 4 : 0); }

  // ------------------------------------------------------------------ reading and checking the fields
  function msg(k, text) {
    var f = field(k), m = $(IDS[k] + "-msg");
    m.textContent = text || "";
    if (text) { f.setAttribute("aria-invalid", "true"); } else { f.removeAttribute("aria-invalid"); }
    return !text;
  }
  function raw(k) { return String(field(k).value).trim(); }
  function tokens(k) {
    var m = /^(\d+(?:\.\d+)?)\s*([kKmM]?)$/.exec(raw(k)), v = m ? Number(m[1]) * { "": 1, k: 1024, m: 1048576 }[m[2].toLowerCase()] : NaN;
    if (!Number.isInteger(v) || v < 1 || v > 1e8) {
      msg(k, "Enter a whole number of tokens from 1 to 100,000,000, such as 8192 or 8K.");
      return null;
    }
    msg(k, ""); return v;
  }
  function whole(k, max, what) {
    var s = raw(k), v = /^\d+$/.test(s) ? Number(s) : NaN;
    if (!(v >= 1 && v <= max)) { msg(k, "Enter a whole number of " + what + " from 1 to " + max + "."); return null; }
    msg(k, ""); return v;
  }
  function positive(k, what, optional) {
    var s = raw(k);
    if (optional && s === "") { msg(k, ""); return null; }
    var v = /^\d*\.?\d+(e[+-]?\d+)?$/i.test(s) ? Number(s) : NaN;
    if (!(v > 0 && isFinite(v))) { msg(k, "Enter " + what + " greater than zero."); return undefined; }
    msg(k, ""); return v;
  }
  function fraction(k, what) {
    var s = raw(k), v = /^\d*\.?\d+$/.test(s) ? Number(s) : NaN;
    if (!(v > 0 && v <= 1)) { msg(k, "Enter " + what + " between 0 and 1, such as 0.9."); return null; }
    msg(k, ""); return v;
  }
  function readModel() {
    if (raw("m") !== "paste") { msg("cfg", ""); $("calc-config-read").textContent = ""; return MODELS[raw("m")]; }
    var text = field("cfg").value, cfg;
    $("calc-config-read").textContent = "";
    if (!text.trim()) { msg("cfg", "Paste the model's config.json here."); return null; }
    try { cfg = JSON.parse(text); } catch (e) {
      msg("cfg", "This is not valid JSON (" + e.message + "). Paste the whole config.json file.");
      return null;
    }
    var res = E.parseConfig(cfg);
    showRead(res);
    if (!res.model) {
      msg("cfg", res.errors.map(function (e) { return e[0] + ": " + e[1]; }).join(" · "));
      return null;
    }
    msg("cfg", "");
    form.lastParse = res;
    return res.model;
  }
  function showRead(res) {
    var box = $("calc-config-read"), list = el("ul");
    var add = function (label, items) {
      if (!items.length) { return; }
      var li = el("li"); li.appendChild(el("strong", label + ": ")); li.appendChild(document.createTextNode(items.join("; ")));
      list.appendChild(li);
    };
    add("Read" + (res.source === "text_config" ? " (from text_config)" : ""), res.found);
    add("Assumed", res.defaults.map(function (d) { return d[0] + " = " + d[1]; }));
    add("Not interpreted", res.unread.map(function (u) { return u[0] + " (" + u[1] + ")"; }));
    add("Notes", res.notes.map(function (n) { return n[0] + ": " + n[1]; }));
    if (res.fmt) { add("Checkpoint format", [res.fmt + (res.expert_fmt ? ", routed experts " + res.expert_fmt : "")]); }
    box.appendChild(list);
  }
  function readGpu() {
    if (raw("g") !== "custom") { return GPUS[raw("g")]; }
    var mem = positive("gmem", "the memory in GB"), bw = positive("gbw", "the bandwidth in GB/s");
    var bf = positive("gbf16", "the BF16 rate in TFLOPS"), fp8 = positive("gfp8", "the FP8 rate in TFLOPS", true);
    if (!mem || !bw || !bf || fp8 === undefined) { return null; }
    return { key: "custom", name: "Custom GPU", memory_bytes: mem * 1e9, memory_bandwidth_bytes_per_s: bw * 1e9,
      bf16_dense_flops: bf * 1e12, fp8_dense_flops: fp8 ? fp8 * 1e12 : null, int8_dense_ops: null,
      interconnect_bytes_per_s_per_direction: null, allreduce_latency_s: null };
  }

  // ------------------------------------------------------------------ the address bar
  function state() {
    var p = new URLSearchParams();
    Object.keys(IDS).forEach(function (k) {
      if (k === "cfg" && raw("m") !== "paste") { return; }
      if (/^g(mem|bw|bf16|fp8)$/.test(k) && raw("g") !== "custom") { return; }
      p.set(k, k === "cfg" ? field(k).value : raw(k));
    });
    return p.toString();
  }
  function load() {
    var p = new URLSearchParams(location.search), notes = [];
    Object.keys(IDS).forEach(function (k) {
      var f = field(k), v = p.has(k) ? p.get(k) : DEFAULTS[k];
      if (f.tagName === "SELECT" && !Array.prototype.some.call(f.options, function (o) { return o.value === v; })) {
        notes.push([k, "The link asked for '" + v + "', which this catalog does not have; showing the default."]);
        v = DEFAULTS[k];
      }
      f.value = v;
    });
    return notes;
  }

  // ------------------------------------------------------------------ results
  var icon = function () {
    var ns = "http://www.w3.org/2000/svg", svg = document.createElementNS(ns, "svg"), use = document.createElementNS(ns, "use");
    svg.setAttribute("aria-hidden", "true"); use.setAttribute("href", "#msib-link-icon"); svg.appendChild(use);
    return svg;
  };
  function section(id, title) {
    var s = el("section", null, "calc-result"), h = el("h2", title), b = el("button", null, "msib-copy-link");
    s.id = id; b.type = "button"; b.title = "Copy link to this result"; b.setAttribute("aria-label", "Copy link to this result");
    b.setAttribute("data-clipboard-text", location.href.split("#")[0] + "#" + id); b.appendChild(icon());
    h.appendChild(b); s.appendChild(h); results.appendChild(s);
    return {
      formula: function (t) { var p = el("p", null, "calc-formula"); p.appendChild(el("code", t)); s.appendChild(p); },
      step: function (t) { s.appendChild(el("p", t, "calc-step")); },
      result: function (t) { var p = el("p", null, "calc-answer"); p.appendChild(el("strong", t)); s.appendChild(p); }
    };
  }
  function render(m, g, f, kv, fe, n, ctx, c, u, mfu) {
    var r = E.evaluate(m, g, f, kv, fe, n, ctx, c, u, mfu, D.defaults), b = E.paramBreakdown(m), d = D.defaults;
    var s = section("r-params", "Parameters");
    var lp = b.latent_projections ? [b.latent_projections] : [];
    s.formula("total = embedding + lm_head + attention + dense MLPs + routed experts + shared experts + router + norms" + (lp.length ? " + latent-MoE projections" : ""));
    s.step("= " + [b.embedding, b.lm_head, b.attention, b.dense_mlp, b.routed_experts, b.shared_experts, b.router, b.norms].concat(lp).map(int).join(" + "));
    s.result(int(r.params_total) + " (" + params(r.params_total) + ") total; " + int(r.params_active) + " (" +
      params(r.params_active) + ") active per token");
    s = section("r-weights", "Weights");
    s.formula("bytes = parameters × bits / 8, per part (embeddings at the format's embedding bits" + (fe ? ", routed experts in " + fe.key : "") + ")");
    var wb = E.weightBytesBreakdown(m, f, fe), eb = E.embeddingBits(f), xb = fe ? fe.bits_per_weight : f.bits_per_weight;
    s.step("= " + int(b.embeddings) + " × " + eb + " / 8 (embeddings) + " + int(b.routed_experts) + " × " + xb +
      " / 8 (routed experts) + " + int(b.total - b.embeddings - b.routed_experts) + " × " + f.bits_per_weight +
      " / 8 (the rest) = " + gb(wb.embeddings) + " + " + gb(wb.routed_experts) + " + " + gb(wb.rest));
    s.result(gb(r.weights_total) + " in " + f.name);
    var cl = [m.num_hidden_layers - (m.sliding_window ? m.sliding_window.num_sliding_layers : 0) - (m.linear_attention ? m.linear_attention.num_linear_layers : 0),
      m.sliding_window ? m.sliding_window.num_sliding_layers : 0];
    s = section("r-kv", "KV cache");
    if (m.mla) {
      s.formula("KV bytes per token = caching layers × (kv_lora_rank + qk_rope_head_dim) × bytes");
      s.step("= " + (cl[0] + cl[1]) + " × (" + m.mla.kv_lora_rank + " + " + m.mla.qk_rope_head_dim + ") × " + bytesEl(kv) + " = " + int(r.kv_per_token) + " bytes");
    } else {
      s.formula("KV bytes per token = 2 × caching layers × num_key_value_heads × head_dim × bytes");
      s.step("= 2 × " + (cl[0] + cl[1]) + " × " + m.num_key_value_heads + " × " + m.head_dim + " × " + bytesEl(kv) + " = " + int(r.kv_per_token) + " bytes");
    }
    s.formula("per sequence = per-layer bytes × (full layers × context + sliding layers × min(context, window)) + linear layers × state");
    s.result(gb(r.kv_per_sequence) + " per sequence of " + int(ctx) + " tokens (" + int(r.kv_per_token) + " bytes per token, " + kv.key + ")");
    if (ctx > m.max_position_embeddings) { s.step("Note: " + int(ctx) + " tokens exceeds the model's max_position_embeddings (" + int(m.max_position_embeddings) + ")."); }
    s = section("r-tp", "Valid tensor-parallel degrees");
    s.formula("TP must divide num_attention_heads; KV heads split (TP ≤ kv_heads, dividing them) or replicate (TP a multiple of them); MLP widths divide by TP");
    s.result(r.valid_tp.join(", ") + " (up to " + d.max_tp + ")");
    if (r.tp_problem) {
      ["r-fit", "r-concurrency", "r-context", "r-decode", "r-prefill"].forEach(function (id) {
        section(id, { "r-fit": "Does it fit", "r-concurrency": "Maximum concurrency", "r-context": "Maximum context",
          "r-decode": "Decode bound", "r-prefill": "Prefill bound" }[id]).result("Needs a valid GPU count: " + r.tp_problem + ".");
      });
      return r;
    }
    s = section("r-fit", "Does it fit");
    s.formula("KV budget per GPU = memory × fraction − weights per GPU − activations − runtime reserve");
    s.step("weights per GPU = " + gb(r.weights_total) + " / " + n + (r.replicated_extra ? " + " + int(r.replicated_extra) + " bytes replicated on every GPU" : "") + " = " + gb(r.weights_per_gpu));
    s.step("= " + gb(E.engineMemoryBytes(g)) + " (CUDA total) × " + u + " − " + gb(r.weights_per_gpu) + " − " + gb(d.activation_bytes) + " − " + gb(d.reserve_bytes) + " = " + gb(r.kv_budget));
    if (m.linear_attention && m.linear_attention.kda && !m.sliding_window) { s.step("KDA layers: their states split by TP (1/" + n + " per GPU); the MLA or KV cache splits by its own share."); }
    s.step("KV per sequence per GPU, paged: " + r.blocks_per_sequence + " blocks of " + d.block_size + " tokens = " + gb(r.kv_per_sequence_gpu) + "; × " + c + " sequences = " + gb(r.kv_load_gpu));
    if (!r.fits) { s.result("Does not fit: the weights alone leave no room for a KV cache (short by " + gb(-r.kv_budget) + " per GPU)."); }
    else if (r.headroom < 0) { s.result("The weights fit, but " + c + " sequences of " + int(ctx) + " tokens do not: short by " + gb(-r.headroom) + " per GPU."); }
    else { s.result("Fits: " + c + " sequences of " + int(ctx) + " tokens leave " + gb(r.headroom) + " of headroom per GPU."); }
    s = section("r-concurrency", "Maximum concurrency at this context");
    s.formula("sequences = floor(KV budget / KV bytes per sequence per GPU)");
    s.result(r.fits ? int(r.max_sequences) + " sequences of " + int(ctx) + " tokens" : "0: no KV budget");
    s = section("r-context", "Maximum context at this concurrency");
    s.formula("longest context with concurrency × paged KV per sequence ≤ KV budget (capped at max_position_embeddings)");
    s.result(int(r.max_context) + " tokens per sequence with " + c + " sequences" + (r.max_context_limit === "memory" ? " (limited by memory)" : " (the model's maximum)"));
    s = section("r-decode", "Decode bound");
    s.formula("step time = (weight bytes read per GPU + sequences × KV bytes per sequence per GPU) / bandwidth" + (n > 1 ? " + all-reduce time" : ""));
    if (r.experts_touched !== undefined) { s.step("experts read per MoE layer at " + c + " sequences: E × (1 − (1 − k/E)^batch) = " + fixed(r.experts_touched, 2)); }
    s.step("= (" + gb(r.decode_weight_read_gpu) + " + " + gb(r.decode_kv_read_gpu) + ") / " + fixed(g.memory_bandwidth_bytes_per_s / 1e9, 0) + " GB/s" + (r.decode_comm_s ? " + " + secs(r.decode_comm_s) : "") + " = " + secs(r.decode_step_s));
    if (n > 1 && !r.decode_comm_included) { s.step("This GPU has no link bandwidth and all-reduce latency in the catalog, so the all-reduces are left out."); }
    s.result("at most " + rate(r.decode_per_sequence) + " per sequence, " + rate(r.decode_aggregate) + " aggregate");
    s = section("r-prefill", "Prefill bound");
    s.formula("time = (2 × (active params − lm_head) × tokens + 2 × lm_head + attention FLOPs) / (GPUs × peak × MFU)");
    if (r.prefill_s === undefined) { s.result("Not computed: this GPU has " + r.prefill_peak_label + "; pick another weight format or GPU."); }
    else {
      s.step("= " + r.prefill_flops.toExponential(3) + " FLOPs / (" + n + " × " + fixed(r.prefill_peak / 1e12, 0) + " TFLOPS " + r.prefill_peak_label + " × " + mfu + ")");
      s.result("about " + secs(r.prefill_s) + " for a " + int(ctx) + "-token prompt");
    }
    return r;
  }

  function update(fromConfig) {
    var m = readModel();
    var isMoe = m ? !!m.moe : raw("m") !== "paste" ? false : true;
    document.querySelector(".calc-paste").hidden = raw("m") !== "paste";
    document.querySelectorAll(".calc-custom").forEach(function (x) { x.hidden = raw("g") !== "custom"; });
    document.querySelector(".calc-moe").hidden = !isMoe;
    if (fromConfig && m && form.lastParse && form.lastParse.fmt) {
      field("w").value = form.lastParse.fmt; field("e").value = form.lastParse.expert_fmt || "";
    }
    var g = readGpu(), n = whole("n", MAX_GPUS, "GPUs"), ctx = tokens("ctx"), c = whole("c", 100000, "sequences");
    var u = fraction("u", "a fraction"), mfu = fraction("mfu", "a fraction");
    var f = FMTS[raw("w")], kv = FMTS[raw("kv")], fe = isMoe && raw("e") ? FMTS[raw("e")] : null;
    history.replaceState(null, "", "?" + state() + location.hash);
    results.textContent = "";
    if (!m || !g || !n || !ctx || !c || !u || !mfu || !f || !kv) {
      results.appendChild(el("p", "Fix the fields marked above to see the results.", "calc-pending"));
      return;
    }
    var r = render(m, g, f, kv, fe, n, ctx, c, u, mfu);
    msg("n", r.tp_problem ? "Not a valid tensor-parallel degree for this model: " + r.tp_problem + ". Valid: " + r.valid_tp.join(", ") + "." : "");
  }

  var linkNotes = load();
  var clearLinkNotes = function () { linkNotes.forEach(function (n) { msg(n[0], ""); }); linkNotes = []; };
  form.addEventListener("input", function (ev) { clearLinkNotes(); update(ev.target === field("cfg")); });
  form.addEventListener("change", function (ev) { update(ev.target === field("cfg") || ev.target === field("m")); });
  form.addEventListener("submit", function (ev) { ev.preventDefault(); });
  update(false);
  linkNotes.forEach(function (n) { msg(n[0], n[1]); });
  var target = location.hash && document.getElementById(location.hash.slice(1));
  if (target) { target.scrollIntoView(); }
})();
