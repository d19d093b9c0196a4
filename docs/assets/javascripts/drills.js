/* Napkin-math drills: a problem drawn from the catalog, a typed answer, a check against the engine's
 * answer key with the mistake behind a wrong answer named, and the worked solution. Used by the drills
 * page (#msib-drills) and by practice mode's drill mode (MSIB.drills.mount). Plain DOM code: every piece
 * of text that comes from the URL, from storage or from what the reader typed is set with textContent;
 * no HTML is ever inserted. The engine is drills-engine.js, the data drills-data.js, the progress store
 * site.js (MSIB.progress). */
(function () {
  "use strict";
  var D = window.MSIBDrills, DATA = window.MSIB_DRILLS;
  var P = window.MSIB && window.MSIB.progress;
  if (!D || !DATA) { return; }
  D.setData(DATA);

  function el(tag, attrs, children) {
    var n = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") { n.textContent = attrs[k]; }
      else if (k.slice(0, 2) === "on") { n.addEventListener(k.slice(2), attrs[k]); }
      else { n.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) { if (c) { n.appendChild(typeof c === "string" ? document.createTextNode(c) : c); } });
    return n;
  }
  function clear(n) { while (n.firstChild) { n.removeChild(n.firstChild); } }
  /* Text with `code` spans, as the worked examples' Markdown shows it. */
  function rich(tag, text, attrs) {
    var n = el(tag, attrs);
    String(text).split("`").forEach(function (part, i) {
      if (!part) { return; }
      n.appendChild(i % 2 ? el("code", { text: part }) : document.createTextNode(part));
    });
    return n;
  }
  function pct(x) {  // 10%, 1%, 2.5%, 0.1%: whole percents without decimals
    var p = x * 100;
    return (p >= 10 || Math.abs(p - Math.round(p)) < 1e-9 ? String(Math.round(p)) : p.toFixed(1)) + "%";
  }
  function within(dt) {  // the stated tolerance: "10%", "10% or 1 sequence"
    return pct(dt.tolerance) + (dt.slack ? " or " + dt.slack + " " + (dt.slack === 1 ? dt.noun.replace(/s$/, "") : dt.noun) : "");
  }
  function randomSeed() {
    if (window.crypto && window.crypto.getRandomValues) { return window.crypto.getRandomValues(new Uint32Array(1))[0]; }
    return Math.floor(Math.random() * 4294967296);
  }
  function today() { return P ? P.today() : new Date().toISOString().slice(0, 10); }
  function isDate(v) {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(v)) { return false; }
    var p = v.split("-").map(Number), d = new Date(p[0], p[1] - 1, p[2]);
    return d.getFullYear() === p[0] && d.getMonth() === p[1] - 1 && d.getDate() === p[2];
  }
  function dataBase() {
    var s = document.querySelector('script[src*="drills-data.js"]');
    return s ? s.src.replace(/assets\/javascripts\/drills-data\.js.*$/, "") : "";
  }

  /* --- links and the address of a set --------------------------------------------------------------- */
  var KINDS = { model: "model", gpu: "gpu", fmt: "format", efmt: "format", kv: "format", price: "price", api: "api" };
  function anchor(kind, key) { return kind + "-" + key.replace(/\./g, "-"); }
  function entryName(kind, key) {
    var c = DATA.catalog, list = kind === "model" ? c.models : kind === "gpu" ? c.gpus : kind === "format" ? c.formats : null;
    if (!list) { return key + " (illustrative)"; }
    var e = list.filter(function (x) { return x.key === key; })[0];
    return e ? e.name : key;
  }
  function sourceCell(inst, spec, base) {
    var kind = KINDS[spec];
    if (!kind || !inst.refs[spec]) { return el("td", { text: spec }); }
    var key = inst.refs[spec];
    return el("td", {}, [el("a", { href: base + DATA.pages[kind] + "#" + anchor(kind, key), text: entryName(kind, key) })]);
  }
  function setHash(items) { return "set=" + items.map(function (it) { return it[0] + "." + it[1]; }).join(","); }
  /* The set a hash asks for, validated: {items, daily} or {error}; never anything but data. */
  function readHash(hash) {
    var out = null;
    String(hash || "").replace(/^#/, "").split("&").forEach(function (kv) {
      var eq = kv.indexOf("="), k = eq < 0 ? kv : kv.slice(0, eq), v = eq < 0 ? "" : kv.slice(eq + 1);
      try { v = decodeURIComponent(v); } catch (e) { v = "\u0000"; }
      if (k === "daily") {
        out = isDate(v) ? { items: D.dailySet(v), daily: v } : { error: "This link's daily set has no valid date (YYYY-MM-DD)." };
      } else if (k === "set") {
        var parts = v.split(","), items = [], bad = null;
        if (!v || parts.length > DATA.settings.max_set) { bad = "it must list from 1 to " + DATA.settings.max_set + " drills"; }
        parts.forEach(function (p, i) {
          if (bad) { return; }
          var m = /^([a-z0-9_]{1,32})\.(\d{1,10})$/.exec(p);
          if (!m || !D.type(m[1]) || Number(m[2]) > 4294967295) { bad = "item " + (i + 1) + " (" + JSON.stringify(p.slice(0, 40)) + ") is not a drill"; }
          else { items.push([m[1], Number(m[2])]); }
        });
        out = bad ? { error: "This link's set cannot be read: " + bad + "." } : { items: items };
      }
    });
    return out;
  }

  /* --- the worked solution, as the site's worked examples render -------------------------------------- */
  function solutionBlock(inst, base) {
    var s = inst.solution, box = el("div", { "class": "worked-example msib-drill-solution", id: "msib-drill-solution" });
    box.appendChild(el("p", {}, [el("strong", { text: "Worked example — " + s.title })]));
    if (s.formulas.length) {
      box.appendChild(el("p", {}, [el("strong", { text: s.formulas.length === 1 ? "Formula" : "Formulas" })]));
      box.appendChild(el("ul", {}, s.formulas.map(function (f) { return el("li", {}, [el("code", { text: f })]); })));
    }
    if (s.inputs.length) {
      var table = el("table", {}, [el("thead", {}, [el("tr", {}, ["Input", "Value", "Source"].map(function (h) { return el("th", { text: h }); }))])]);
      table.appendChild(el("tbody", {}, s.inputs.map(function (row) {
        return el("tr", {}, [rich("td", row[0]), rich("td", row[1]), sourceCell(inst, row[2], base)]);
      })));
      box.appendChild(el("div", { "class": "md-typeset__scrollwrap" }, [el("div", { "class": "md-typeset__table" }, [table])]));
    }
    if (s.steps.length) {
      box.appendChild(el("p", {}, [el("strong", { text: "Substitution" })]));
      box.appendChild(el("ul", {}, s.steps.map(function (t) { return rich("li", t); })));
    }
    if (s.results.length === 1) {
      var r = rich("p", " " + s.results[0]);
      r.insertBefore(el("strong", { text: "Result:" }), r.firstChild);
      box.appendChild(r);
    } else if (s.results.length) {
      box.appendChild(el("p", {}, [el("strong", { text: "Result" })]));
      box.appendChild(el("ul", {}, s.results.map(function (t) { return rich("li", t); })));
    }
    if (s.notes.length) {
      var n = rich("p", " " + s.notes.join(" "));
      n.insertBefore(el("em", { text: "Assumptions and notes:" }), n.firstChild);
      box.appendChild(n);
    }
    return box;
  }

  /* --- the drill UI ---------------------------------------------------------------------------------- */
  function mount(root, opts) {
    opts = opts || {};
    var base = opts.base !== undefined ? opts.base : dataBase();
    var drillsHref = base + DATA.pages.drills;
    var message = el("p", { "class": "msib-practice-message msib-drill-message", role: "status", id: "msib-drill-message" });
    var view = el("div", { "class": "msib-drill-view" });
    clear(root);
    root.appendChild(message);
    root.appendChild(view);
    function say(t) { message.textContent = t; }

    function typeOptions() {
      return [["", "All types"]].concat(D.types().map(function (t) { return [t.key, t.title]; }));
    }
    function stateOf(key) {
      if (!P) { return "progress is not kept"; }
      var st = P.load();
      return P.describeDrill(st, key);
    }
    function setup(keep) {
      if (!keep) { say(""); }
      clear(view);
      var form = el("form", { "class": "msib-setup msib-drill-setup", "aria-labelledby": "msib-drill-setup-h" });
      form.appendChild(el("h2", { id: "msib-drill-setup-h", text: opts.embedded ? "Napkin-math drills" : "Start a set" }));
      form.appendChild(el("p", { "class": "msib-note", text: "Type a number with its unit, the way you would say it: 140 GB, 130.4 GiB, 1.4e11, 2,300 tok/s, 350 ms. Each drill says how close an answer must be." }));
      var sel = el("select", { id: "msib-drill-type" });
      typeOptions().forEach(function (o) { sel.appendChild(el("option", { value: o[0], text: o[1] })); });
      form.appendChild(el("p", {}, [el("label", { "for": "msib-drill-type", text: "Drill type:" }), " ", sel]));
      var count = el("input", { id: "msib-drill-count", type: "number", min: "1", max: String(DATA.settings.max_set), step: "1", value: "5", inputmode: "numeric" });
      form.appendChild(el("p", {}, [el("label", { "for": "msib-drill-count", text: "Drills:" }), " ", count]));
      form.appendChild(el("p", {}, [
        el("button", { type: "submit", "class": "md-button md-button--primary", id: "msib-drill-start", text: "Start drills" }), " ",
        el("button", { type: "button", "class": "md-button", id: "msib-drill-daily", text: "Today's set", onclick: function () { startDaily(today()); } }), " ",
        el("button", { type: "button", "class": "md-button", id: "msib-drill-due", text: "Drills due for review", onclick: startDue })]));
      form.addEventListener("submit", function (e) {
        e.preventDefault();
        var n = Number(count.value);
        if (!Number.isInteger(n) || n < 1 || n > DATA.settings.max_set) { say("Drills must be a whole number from 1 to " + DATA.settings.max_set + "."); return; }
        var items = [], rand = new D.Rng(randomSeed()), keys = D.types().map(function (t) { return t.key; });
        for (var j = keys.length - 1; j > 0; j--) { var k = rand.index(j + 1), t = keys[j]; keys[j] = keys[k]; keys[k] = t; }
        for (var i = 0; i < n; i++) { items.push([sel.value || keys[i % keys.length], randomSeed()]); }
        run(items, null);
      });
      view.appendChild(form);
      view.appendChild(typesTable());
    }
    function typesTable() {
      var box = el("section", { "class": "msib-drill-types", "aria-labelledby": "msib-drill-types-h" });
      box.appendChild(el(opts.embedded ? "h3" : "h2", { id: "msib-drill-types-h", text: "Drill types" }));
      var table = el("table", { id: "msib-drill-type-table" });
      table.appendChild(el("thead", {}, [el("tr", {}, ["Drill", "Passes within", "Your review"].map(function (h) { return el("th", { scope: "col", text: h }); }))]));
      var body = el("tbody");
      D.types().forEach(function (t) {
        body.appendChild(el("tr", {}, [el("td", { text: t.title }), el("td", { text: t.dim === "list" ? "exact" : within(t) }),
          el("td", { text: stateOf(t.key) })]));
      });
      table.appendChild(body);
      box.appendChild(el("div", { "class": "md-typeset__scrollwrap" }, [el("div", { "class": "md-typeset__table" }, [table])]));
      if (P && P.status.corrupt) { box.appendChild(el("p", { "class": "msib-note", text: "The progress saved in this browser is damaged; the Practice page can download it and reset it." })); }
      return box;
    }
    function startDaily(day) { run(D.dailySet(day), day); }
    function startDue() {
      if (!P) { say("Progress is not available in this browser."); return; }
      var st = P.load(), due = D.types().filter(function (t) { return P.isDrillDue(st, t.key); });
      if (!due.length) { say("No drill type is due for review today."); return; }
      due.sort(function (a, b) { return st.drills[a.key].due < st.drills[b.key].due ? -1 : 1; });
      run(due.map(function (t) { return [t.key, randomSeed()]; }), null);
    }

    function run(items, daily) {
      var results = [], insts;
      try { insts = items.map(function (it) { return D.make(it[0], it[1]); }); }
      catch (e) { say("This set cannot be drawn: " + e.message + "."); return; }
      var link = drillsHref + "#" + (daily ? "daily=" + daily : setHash(items));
      function shareLine() {
        var a = el("a", { href: link, id: "msib-drill-link", text: daily ? "Link to the daily set of " + daily : "Link to this set" });
        var copy = el("button", { type: "button", "class": "md-button msib-drill-copy", text: "Copy link" });
        copy.addEventListener("click", function () {
          var done = function () { say("Link copied."); }, fail = function () { say("Copy the link by hand: " + link); };
          if (navigator.clipboard && navigator.clipboard.writeText) { navigator.clipboard.writeText(link).then(done, fail); } else { fail(); }
        });
        return el("p", { "class": "msib-note msib-drill-share" }, [a, " ", copy]);
      }
      function ask(i) {
        if (i >= insts.length) { return summary(); }
        say("");
        var inst = insts[i], dt = D.type(inst.type);
        clear(view);
        var tolText = dt.dim === "list" ? "the exact list passes" : "within " + within(dt) + " passes";
        view.appendChild(el("p", { "class": "msib-note", id: "msib-drill-count-line", text: "Drill " + (i + 1) + " of " + insts.length + " · " + tolText }));
        var heading = el("h2", { tabindex: "-1", id: "msib-drill-title", text: dt.title });
        view.appendChild(heading);
        view.appendChild(el("p", { id: "msib-drill-prompt", text: inst.prompt }));
        view.appendChild(el("p", { id: "msib-drill-ask" }, [el("strong", { text: inst.ask })]));
        var form = el("form", { "class": "msib-drill-form", id: "msib-drill-form", novalidate: "" });
        var input = el("input", { id: "msib-drill-answer", type: "text", autocomplete: "off", spellcheck: "false", autocapitalize: "off",
          maxlength: "80", "aria-describedby": "msib-drill-hint msib-drill-fix" });
        form.appendChild(el("p", {}, [el("label", { "for": "msib-drill-answer", text: "Your answer" })]));
        form.appendChild(el("p", {}, [input]));
        form.appendChild(el("p", { "class": "msib-note", id: "msib-drill-hint", text: hintText(dt) }));
        var check = el("button", { type: "submit", "class": "md-button md-button--primary", id: "msib-drill-check", text: "Check" });
        var giveUp = el("button", { type: "button", "class": "md-button", id: "msib-drill-giveup", text: "Show the solution" });
        form.appendChild(el("p", {}, [check, " ", giveUp]));
        view.appendChild(form);
        var feedback = el("div", { id: "msib-drill-feedback", "class": "msib-drill-feedback", "aria-live": "polite" });
        view.appendChild(feedback);
        view.appendChild(shareLine());
        var done = false;
        form.addEventListener("submit", function (e) {
          e.preventDefault();
          if (done) { return; }
          var reading = D.read(input.value, dt);
          clear(feedback);
          if (reading.error) {
            input.setAttribute("aria-invalid", "true");
            feedback.appendChild(el("p", { "class": "msib-drill-fix", id: "msib-drill-fix", text: reading.error }));
            input.focus();
            return;
          }
          input.removeAttribute("aria-invalid");
          finish(reading.value, input.value);
        });
        giveUp.addEventListener("click", function () { if (!done) { finish(null, ""); } });
        function finish(value, typed) {
          done = true;
          input.readOnly = true; check.disabled = true; giveUp.disabled = true;
          var g = value === null ? { right: false, traps: [], near: [] } : D.grade(inst, value);
          var entry = record(inst, g);
          results.push({ inst: inst, typed: typed, value: value, grade: g, next: entry });
          clear(feedback);
          feedback.appendChild(verdict(inst, dt, value, typed, g));
          feedback.appendChild(solutionBlock(inst, base));
          var q = DATA.questions[String(inst.question)];
          feedback.appendChild(el("p", { id: "msib-drill-question" }, ["The concept behind this drill: ",
            el("a", { href: base + q.url, text: "Q" + inst.question + " · " + q.title }), "."]));
          var next = el("button", { type: "button", "class": "md-button md-button--primary", id: "msib-drill-next",
            text: i + 1 < insts.length ? "Next drill" : "Finish and see the summary" });
          next.addEventListener("click", function () { ask(i + 1); });
          feedback.appendChild(el("p", {}, [next]));
          document.getElementById("msib-drill-verdict").focus();
        }
        heading.focus();
      }
      function record(inst, g) {
        if (!P) { return null; }
        var st = P.load();
        if (P.status.corrupt) { return null; }
        var e = P.gradeDrill(st, inst.type, g.right, inst.seed, g.traps[0] || null);
        return P.save(st) ? e.due : null;
      }
      function summary() {
        clear(view);
        var heading = el("h2", { tabindex: "-1", id: "msib-drill-summary-h", text: "Summary" });
        view.appendChild(heading);
        var right = results.filter(function (r) { return r.grade.right; }).length;
        view.appendChild(el("p", { id: "msib-drill-summary-total", text: right + " of " + results.length + " right." }));
        var table = el("table", { id: "msib-drill-summary" });
        table.appendChild(el("thead", {}, [el("tr", {}, ["Drill", "Your answer", "Answer", "Result", "Next review"].map(function (h) { return el("th", { scope: "col", text: h }); }))]));
        var body = el("tbody");
        results.forEach(function (r) {
          var dt = D.type(r.inst.type), res = r.grade.right ? "right" : r.value === null ? "shown" : "wrong";
          if (r.grade.traps.length) { res += ": " + DATA.traps[r.grade.traps[0]].name; }
          body.appendChild(el("tr", {}, [el("td", { text: dt.title }), el("td", { text: r.value === null ? "—" : D.answerText(dt, r.value) }),
            el("td", { text: r.inst.answer_text }), el("td", { text: res }), el("td", { text: r.next || "not saved" })]));
        });
        table.appendChild(body);
        view.appendChild(el("div", { "class": "md-typeset__scrollwrap" }, [el("div", { "class": "md-typeset__table" }, [table])]));
        view.appendChild(shareLine());
        view.appendChild(el("p", {}, [
          el("button", { type: "button", "class": "md-button md-button--primary", id: "msib-drill-again", text: "Same set again", onclick: function () { run(items, daily); } }), " ",
          el("button", { type: "button", "class": "md-button", id: "msib-drill-back", text: "Back to the drills", onclick: function () { setup(); } })]));
        heading.focus();
      }
      ask(0);
    }
    function hintText(dt) {
      return { bytes: "With a unit: bytes, KB, MB, GB or KiB, MiB, GiB (b and B both mean bytes; write bit for bits).",
        time: "With a unit: s, ms or µs.", rate: "Tokens per second: a number, or with tok/s, k tok/s.",
        usd: "Dollars per million tokens: $0.35 or 0.35.", bits: "Bits per weight, such as 4.25.",
        count: "A number" + (dt.noun ? " of " + dt.noun : "") + ".", list: "Whole numbers separated by commas, such as 1, 2, 4." }[dt.dim];
    }
    function verdict(inst, dt, value, typed, g) {
      var box = el("div", { "class": "msib-drill-verdict " + (g.right ? "msib-drill-verdict--right" : "msib-drill-verdict--wrong"),
        id: "msib-drill-verdict", tabindex: "-1" });
      var head = value === null ? "The solution" : g.right ? "Right." : "Not quite.";
      box.appendChild(el("p", {}, [el("strong", { text: head })]));
      if (value !== null) {
        var line = "You answered " + typed.trim().slice(0, 80) + ", read as " + D.answerText(dt, value);
        if (dt.dim !== "list") { line += ", " + pct(g.off) + " from the answer"; }
        box.appendChild(el("p", { id: "msib-drill-read", text: line + "." }));
      }
      box.appendChild(el("p", { id: "msib-drill-exact", text: "The answer: " + inst.answer_text + (dt.dim === "list" ? "." :
        " (exact; within " + within(dt) + " passes).") }));
      var named = g.traps.length ? g.traps : g.near;
      if (named.length) {
        var t = DATA.traps[named[0]], others = named.slice(1).map(function (k) { return DATA.traps[k].name; });
        var lead = g.right ? "Within the tolerance, but your figure is closer to what this mistake gives: " : "That is the figure this mistake gives: ";
        box.appendChild(el("p", { "class": "msib-drill-trap", id: "msib-drill-trap" }, [lead, el("strong", { text: t.name }),
          others.length ? " (or " + others.join(", ") + ")" : "", " — " + D.answerText(dt, inst.traps[named[0]]) + ". " + t.why]));
      } else if (!g.right && value !== null) {
        box.appendChild(el("p", { id: "msib-drill-trap", text: "It matches none of the mistakes this drill knows; compare your steps with the worked solution." }));
      }
      return box;
    }

    setup();
    var requested = opts.hash !== undefined ? readHash(opts.hash) : null;
    if (requested && requested.error) { say(requested.error); }
    else if (requested) { run(requested.items, requested.daily || null); }
    return { start: run, daily: startDaily };
  }

  window.MSIB = window.MSIB || {};
  window.MSIB.drills = { mount: mount, readHash: readHash };

  var page = document.getElementById("msib-drills");
  if (page) {
    mount(page, { hash: location.hash });
    window.addEventListener("hashchange", function () { mount(page, { hash: location.hash }); });
  }
})();
