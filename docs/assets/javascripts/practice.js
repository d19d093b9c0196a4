/* Practice mode: timed mock interviews over a chosen scope, self-graded against each question's key
 * points, with spaced review (progress.js). Plain DOM code; every piece of text that comes from stored
 * or imported data is set with textContent. The only HTML inserted is the site's own build output
 * (key points and follow-up answers in practice-data.js / practice-followups.js). */
(function () {
  "use strict";
  var P = window.MSIB && window.MSIB.progress;
  var DATA = window.MSIB_PRACTICE;
  var root = document.getElementById("msib-practice");
  if (!root || !P || !DATA) return;

  var dataScript = document.querySelector('script[src$="practice-data.js"]');
  var base = dataScript ? dataScript.src.replace(/assets\/javascripts\/practice-data\.js.*$/, "") : "";
  var byId = {};
  DATA.questions.forEach(function (q) { byId[q.id] = q; });
  var gradable = DATA.questions.filter(function (q) { return q.points.length > 0; });

  /* --- small helpers --------------------------------------------------------------------------- */
  function el(tag, attrs, children) {
    var n = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") n.textContent = attrs[k];
      else if (k === "html") n.innerHTML = attrs[k];          // site build output only
      else if (k.slice(0, 2) === "on") n.addEventListener(k.slice(2), attrs[k]);
      else n.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { if (c) n.appendChild(typeof c === "string" ? document.createTextNode(c) : c); });
    return n;
  }
  function clear(n) { while (n.firstChild) n.removeChild(n.firstChild); }
  function mmss(seconds) {
    var s = Math.max(0, Math.round(seconds));
    return Math.floor(s / 60) + ":" + String(s % 60).padStart(2, "0");
  }
  function mulberry32(seed) {
    var a = seed >>> 0;
    return function () {
      a = (a + 0x6D2B79F5) >>> 0;
      var t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  function shuffled(list, rand) {
    var a = list.slice();
    for (var i = a.length - 1; i > 0; i--) {
      var j = Math.floor(rand() * (i + 1)), t = a[i];
      a[i] = a[j]; a[j] = t;
    }
    return a;
  }
  function hashParams() {
    var out = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (kv) {
      var m = /^(q|seed)=(\d{1,10})$/.exec(kv);
      if (m) out[m[1]] = Number(m[2]);
    });
    return out;
  }
  var params = hashParams();
  var rand = mulberry32(params.seed !== undefined ? params.seed : Date.now() % 4294967296);

  /* --- regions ------------------------------------------------------------------------------------ */
  var live = el("div", { "class": "msib-sr-only", "aria-live": "polite", id: "msib-practice-live" });
  var message = el("p", { "class": "msib-practice-message", role: "status" });
  var view = el("div", { "class": "msib-practice-view" });
  clear(root);
  root.appendChild(message);
  root.appendChild(view);
  root.appendChild(live);
  function say(text) { message.textContent = text; }
  function announce(text) { live.textContent = text; }

  /* --- progress panel: state, export, import, repair ------------------------------------------------ */
  function progressPanel() {
    var state = P.load();
    var box = el("section", { "class": "msib-progress-panel", "aria-labelledby": "msib-progress-h" });
    box.appendChild(el("h2", { id: "msib-progress-h", text: "Your progress" }));
    if (P.status.corrupt) {
      var alertBox = el("div", { "class": "msib-alert", role: "alert" }, [
        el("p", { text: "The progress saved in this browser cannot be read: " + P.status.corrupt.message +
          ". Nothing was changed. Download it to keep a copy, then reset to start again." })]);
      alertBox.appendChild(el("p", {}, [
        el("button", { type: "button", "class": "md-button", onclick: function () { download(P.status.corrupt.raw, "msib-progress-damaged.json"); }, text: "Download the damaged data" }),
        " ",
        el("button", { type: "button", "class": "md-button md-button--primary", onclick: function () { P.reset(); say("Progress reset."); showSetup(); }, text: "Reset progress" })]));
      box.appendChild(alertBox);
      return box;
    }
    var ids = Object.keys(state.questions);
    var due = gradable.filter(function (q) { return P.isDue(state, q.id); }).length;
    var drills = Object.keys(state.drills), drillsDue = drills.filter(function (k) { return P.isDrillDue(state, k); }).length;
    box.appendChild(el("p", { id: "msib-progress-summary", text: ids.length + " questions practised, " + due + " due for review today, " + state.ticked.length + " ticked on the checklists; " + drills.length + " drill types drilled, " + drillsDue + " due." }));
    var file = el("input", { type: "file", accept: "application/json,.json", id: "msib-import-file", "class": "msib-sr-only", tabindex: "-1", "aria-hidden": "true" });
    file.addEventListener("change", function () {
      var f = file.files && file.files[0];
      if (!f) return;
      var reader = new FileReader();
      reader.onload = function () {
        try {
          var imported = P.parseImport(String(reader.result));
          if (!P.save(imported)) throw new Error("the saved progress is damaged; reset it first");
          say("Imported " + Object.keys(imported.questions).length + " questions, " + Object.keys(imported.drills).length + " drill types and " + imported.ticked.length + " ticks from " + f.name + ".");
          showSetup(true);
        } catch (e) {
          say("Import refused: " + e.message + ". Your progress is unchanged.");
        }
        file.value = "";
      };
      reader.onerror = function () { say("Import refused: the file could not be read. Your progress is unchanged."); };
      reader.readAsText(f);
    });
    box.appendChild(el("p", {}, [
      el("button", { type: "button", "class": "md-button", id: "msib-export", onclick: function () { download(P.exportText(P.load()), "msib-progress-" + P.today() + ".json"); say("Progress exported."); }, text: "Export progress" }),
      " ", file,
      el("button", { type: "button", "class": "md-button", id: "msib-import", onclick: function () { file.click(); },
        text: "Import progress" })]));
    box.appendChild(el("p", { "class": "msib-note", text: "Progress lives only in this browser. Importing replaces it with the file's contents: export first to keep a copy." }));
    return box;
  }
  function download(text, name) {
    var url = URL.createObjectURL(new Blob([text], { type: "application/json" }));
    var a = el("a", { href: url, download: name });
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(url); }, 1000);
  }

  /* --- setup ---------------------------------------------------------------------------------------- */
  function select(id, label, options) {
    var s = el("select", { id: id });
    options.forEach(function (o) { s.appendChild(el("option", { value: o[0], text: o[1] })); });
    return el("p", {}, [el("label", { "for": id, text: label }), " ", s]);
  }
  function number(id, label, value, lo, hi) {
    return el("p", {}, [el("label", { "for": id, text: label }), " ",
      el("input", { id: id, type: "number", min: String(lo), max: String(hi), step: "1", value: String(value), inputmode: "numeric" })]);
  }
  function pool() {
    var scope = document.getElementById("msib-scope").value;
    var tag = document.getElementById("msib-tag").value;
    var level = document.getElementById("msib-level").value;
    var inScope = scope === "all" ? null : DATA.scopes.filter(function (s) { return s.key === scope; })[0].ids;
    return gradable.filter(function (q) {
      return (!inScope || inScope.indexOf(q.id) >= 0) && (!tag || q.tags.indexOf(tag) >= 0) && (!level || q.difficulty === level);
    });
  }
  function readInt(id, lo, hi) {
    var v = Number(document.getElementById(id).value);
    if (!Number.isInteger(v) || v < lo || v > hi) throw new Error(document.querySelector('label[for="' + id + '"]').textContent.replace(/:$/, "") + " must be a whole number from " + lo + " to " + hi);
    return v;
  }
  function showSetup(keepMessage) {
    if (!keepMessage) say("");
    stopTimer();
    clear(view);
    var form = el("form", { "class": "msib-setup", "aria-labelledby": "msib-setup-h" });
    form.appendChild(el("h2", { id: "msib-setup-h", text: "Mock interview" }));
    form.appendChild(select("msib-scope", "Scope:", [["all", "Everything"]].concat(DATA.scopes.map(function (s) { return [s.key, s.label]; }))));
    form.appendChild(select("msib-tag", "Tag:", [["", "Any tag"]].concat(DATA.tags.map(function (t) { return [t, t]; }))));
    form.appendChild(select("msib-level", "Difficulty:", [["", "Any level"]].concat(DATA.difficulties.map(function (d) { return [d, d]; }))));
    form.appendChild(number("msib-count", "Questions:", 5, 1, 50));
    form.appendChild(number("msib-minutes", "Minutes per question:", 3, 1, 30));
    var available = el("p", { id: "msib-available", "class": "msib-note" });
    form.appendChild(available);
    function refresh() { available.textContent = pool().length + " questions in this scope."; }
    form.addEventListener("change", refresh);
    form.appendChild(el("p", {}, [
      el("button", { type: "submit", "class": "md-button md-button--primary", id: "msib-start", text: "Start mock interview" }), " ",
      el("button", { type: "button", "class": "md-button", id: "msib-random", text: "Random question", onclick: function () { start(1); } }), " ",
      el("button", { type: "button", "class": "md-button", id: "msib-due", text: "Review due today", onclick: startDue })]));
    form.addEventListener("submit", function (e) { e.preventDefault(); start(); });
    view.appendChild(form);
    view.appendChild(drillPanel());
    view.appendChild(progressPanel());
    refresh();
  }

  /* --- drill mode: the napkin-math drills (drills.js), loaded when first asked for ------------------ */
  var drillsReady = null;
  function loadDrills() {
    if (!drillsReady) {
      drillsReady = ["drills-data.js", "calc-engine.js", "drills-engine.js", "drills.js"].reduce(function (done, name) {
        return done.then(function () {
          return new Promise(function (resolve, reject) {
            var s = el("script", { src: base + "assets/javascripts/" + name });
            s.onload = resolve;
            s.onerror = function () { reject(new Error("the drills could not be loaded")); };
            document.head.appendChild(s);
          });
        });
      }, Promise.resolve());
      drillsReady.catch(function () { drillsReady = null; });
    }
    return drillsReady;
  }
  function drillPanel() {
    var box = el("section", { "class": "msib-drill-panel", "aria-labelledby": "msib-drill-panel-h" });
    box.appendChild(el("h2", { id: "msib-drill-panel-h", text: "Napkin-math drills" }));
    box.appendChild(el("p", { text: "Work out a number (KV cache, fit, decode or prefill bound, cost), type it with its unit, and check it against the site's engine; a wrong answer that matches a known mistake is named." }));
    box.appendChild(el("p", {}, [
      el("button", { type: "button", "class": "md-button md-button--primary", id: "msib-drills-open", text: "Open drill mode", onclick: function () { startDrills(false); } }), " ",
      el("button", { type: "button", "class": "md-button", id: "msib-drills-daily", text: "Today's drills", onclick: function () { startDrills(true); } })]));
    return box;
  }
  function startDrills(daily) {
    say("Loading the drills…");
    loadDrills().then(function () {
      say("");
      stopTimer();
      clear(view);
      var holder = el("div", { id: "msib-drill-mode", "class": "msib-drills" });
      view.appendChild(holder);
      view.appendChild(el("p", {}, [el("button", { type: "button", "class": "md-button", id: "msib-drills-close", text: "Back to the set-up", onclick: function () { showSetup(); } })]));
      var ui = window.MSIB.drills.mount(holder, { base: base, embedded: true });
      if (daily) {
        ui.daily(P.today());
      } else {
        var heading = holder.querySelector("h2");
        heading.setAttribute("tabindex", "-1");
        heading.focus();
      }
    }, function (e) { say(e.message + "."); });
  }
  function start(count) {
    var n, minutes;
    try {
      n = count || readInt("msib-count", 1, 50);
      minutes = readInt("msib-minutes", 1, 30);
    } catch (e) { say(e.message + "."); return; }
    var qs = pool();
    if (!qs.length) { say("No questions match this scope."); return; }
    run(shuffled(qs, rand).slice(0, n), minutes);
  }
  function startDue() {
    var state = P.load(), minutes;
    try { minutes = readInt("msib-minutes", 1, 30); } catch (e) { say(e.message + "."); return; }
    var qs = pool().filter(function (q) { return P.isDue(state, q.id); });
    if (!qs.length) { say("Nothing in this scope is due for review today."); return; }
    run(qs.sort(function (a, b) { return state.questions[a.id].due < state.questions[b.id].due ? -1 : 1; }), minutes);
  }

  /* --- timer ---------------------------------------------------------------------------------------- */
  var timer = null;
  function stopTimer() { if (timer) { clearInterval(timer.handle); timer = null; } }
  function elapsed(t) { return (t.used + (t.running ? Date.now() - t.since : 0)) / 1000; }

  /* --- a session ------------------------------------------------------------------------------------ */
  function run(questions, minutes) {
    var results = [];
    var followupsReady = null;
    function loadFollowups() {
      if (!followupsReady) {
        followupsReady = new Promise(function (resolve, reject) {
          if (window.MSIB_FOLLOWUPS) return resolve(window.MSIB_FOLLOWUPS);
          var s = el("script", { src: base + "assets/javascripts/practice-followups.js" });
          s.onload = function () { resolve(window.MSIB_FOLLOWUPS || {}); };
          s.onerror = function () { followupsReady = null; reject(new Error("the follow-up answers could not be loaded")); };
          document.head.appendChild(s);
        });
      }
      return followupsReady;
    }
    function ask(i) {
      if (i >= questions.length) return summary();
      say("");
      var q = questions[i], limit = minutes * 60;
      clear(view);
      var heading = el("h2", { tabindex: "-1", id: "msib-q-title", text: "Q" + q.id + " · " + q.title });
      view.appendChild(el("p", { "class": "msib-note", id: "msib-q-count", text: "Question " + (i + 1) + " of " + questions.length + " · " + q.section + " · " + q.difficulty }));
      view.appendChild(heading);
      if (q.probe) view.appendChild(el("p", { id: "msib-q-probe", text: q.probe }));
      var clock = el("p", { "class": "msib-timer", role: "timer", id: "msib-timer", "aria-label": "Time left" }, [mmss(limit)]);
      var pause = el("button", { type: "button", "class": "md-button", id: "msib-pause", text: "Pause" });
      var reveal = el("button", { type: "button", "class": "md-button md-button--primary", id: "msib-reveal", text: "Reveal the key points" });
      view.appendChild(clock);
      view.appendChild(el("p", {}, [pause, " ", reveal]));
      var area = el("div", { id: "msib-answer-area" });
      view.appendChild(area);
      heading.focus();
      stopTimer();
      var t = timer = { used: 0, since: Date.now(), running: true, said: {} };
      function tick() {
        var left = limit - elapsed(t);
        clock.textContent = left >= 0 ? mmss(left) : "-" + mmss(-left) + " over";
        clock.classList.toggle("msib-timer--over", left < 0);
        [[60, "One minute left."], [30, "Thirty seconds left."], [0, "Time is up."]].forEach(function (m) {
          if (left <= m[0] && limit > m[0] && !t.said[m[0]]) { t.said[m[0]] = true; announce(m[1]); }
        });
      }
      t.handle = setInterval(tick, 250);
      announce("Question " + (i + 1) + " of " + questions.length + ". " + minutes + " minutes.");
      pause.addEventListener("click", function () {
        if (t.running) { t.used += Date.now() - t.since; t.running = false; pause.textContent = "Resume"; announce("Paused."); }
        else { t.since = Date.now(); t.running = true; pause.textContent = "Pause"; announce("Resumed."); }
        tick();
      });
      reveal.addEventListener("click", function () {
        var seconds = elapsed(t);
        if (t.running) { t.used += Date.now() - t.since; t.running = false; }
        stopTimer();
        pause.disabled = true;
        reveal.disabled = true;
        showPoints(q, seconds, i, area);
      });
    }
    function showPoints(q, seconds, i, area) {
      var list = el("ul", { "class": "msib-points", id: "msib-points" });
      q.points.forEach(function (p, k) {
        var id = "msib-point-" + k;
        list.appendChild(el("li", {}, [el("input", { type: "checkbox", id: id }), " ", el("label", { "for": id, html: p })]));
      });
      area.appendChild(el("h3", { text: "Key points: tick the ones your answer covered" }));
      area.appendChild(list);
      area.appendChild(el("p", { "class": "msib-note", text: "Time used: " + mmss(seconds) + "." }));
      var fuArea = el("div", { id: "msib-followups" });
      area.appendChild(fuArea);
      var next = el("button", { type: "button", "class": "md-button md-button--primary", id: "msib-next",
        text: i + 1 < questions.length ? "Next question" : "Finish and see the summary" });
      var k = 0;
      function nextFollowup() {
        if (k >= q.followups.length) return;
        var idx = k++;
        var block = el("div", { "class": "msib-followup" });
        block.appendChild(el("h3", { text: "Follow-up " + (idx + 1) + " of " + q.followups.length }));
        block.appendChild(el("p", { "class": "msib-fu-prompt", text: q.followups[idx] }));
        var show = el("button", { type: "button", "class": "md-button", text: "Show the answer" });
        var answer = el("div", { "class": "msib-fu-answer" });
        show.addEventListener("click", function () {
          show.disabled = true;
          loadFollowups().then(function (all) {
            var fu = (all[String(q.id)] || [])[idx];
            answer.innerHTML = fu ? fu.answer : "";   // the site's own rendered answer
            var link = el("a", { href: base + q.url + (fu ? "#" + fu.id : ""), text: "Open this follow-up on its page" });
            answer.appendChild(el("p", {}, [link]));
            answer.setAttribute("tabindex", "-1");
            answer.focus();
          }, function (e) { say(e.message + "."); show.disabled = false; });
        });
        block.appendChild(el("p", {}, [show]));
        block.appendChild(answer);
        fuArea.appendChild(block);
        if (k < q.followups.length) fuArea.appendChild(moreButton());
        show.focus();
      }
      function moreButton() {
        var b = el("button", { type: "button", "class": "md-button", text: "Ask the next follow-up" });
        b.addEventListener("click", function () { b.remove(); nextFollowup(); });
        return el("p", {}, [b]);
      }
      if (q.followups.length) fuArea.appendChild(moreButton());
      next.addEventListener("click", function () {
        var covered = list.querySelectorAll("input:checked").length;
        var state = P.load();
        var entry = P.grade(state, q.id, covered, q.points.length, seconds);
        var saved = P.save(state);
        results.push({ q: q, covered: covered, total: q.points.length, seconds: seconds, next: saved ? entry.due : null });
        ask(i + 1);
      });
      area.appendChild(el("p", {}, [next]));
      list.querySelector("input").focus();
    }
    function summary() {
      stopTimer();
      clear(view);
      var heading = el("h2", { tabindex: "-1", id: "msib-summary-h", text: "Summary" });
      view.appendChild(heading);
      var covered = 0, total = 0, seconds = 0;
      var table = el("table", { id: "msib-summary" });
      table.appendChild(el("thead", {}, [el("tr", {}, ["Question", "Key points covered", "Time used", "Next review"].map(function (h) { return el("th", { scope: "col", text: h }); }))]));
      var body = el("tbody");
      results.forEach(function (r) {
        covered += r.covered; total += r.total; seconds += r.seconds;
        body.appendChild(el("tr", {}, [
          el("td", {}, [el("a", { href: base + r.q.url, text: "Q" + r.q.id + " · " + r.q.title })]),
          el("td", { text: r.covered + " of " + r.total }),
          el("td", { text: mmss(r.seconds) }),
          el("td", { text: r.next || "not saved" })]));
      });
      table.appendChild(body);
      view.appendChild(el("p", { id: "msib-summary-total", text: "Covered " + covered + " of " + total + " key points in " + mmss(seconds) + "." }));
      view.appendChild(el("div", { "class": "md-typeset__scrollwrap" }, [el("div", { "class": "md-typeset__table" }, [table])]));
      view.appendChild(el("p", {}, [el("button", { type: "button", "class": "md-button md-button--primary", id: "msib-again", text: "Back to the set-up", onclick: function () { showSetup(); } })]));
      heading.focus();
      announce("Summary: covered " + covered + " of " + total + " key points.");
    }
    ask(0);
  }

  showSetup();
  if (location.hash === "#drills") startDrills(false);
  if (params.q !== undefined) {
    if (byId[params.q] && byId[params.q].points.length) run([byId[params.q]], 3);
    else say("Question " + params.q + " cannot be practised here yet.");
  }
})();
