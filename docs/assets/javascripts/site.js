/* Site-wide behaviour: practice progress kept in this browser (localStorage) and nowhere else, and
 * (at the end of this file) the address "copy link" hands out on builds without a public address,
 * the end of start-up for closed blocks, and printing.
 *
 * One store for the whole site: spaced-review state per question and per drill type (Leitner boxes)
 * and the ticks of the knowledge map and study plan. Anything read from storage or from an imported
 * file is data: it is validated field by field and only ever shown through textContent, never parsed
 * as markup. Format history: version 1 held only the checklist ticks ({format, version: 1, ticked:
 * [...]}); version 2 adds per-question review state; version 3 adds per-drill-type review state
 * (drills: {type: {box, due, reviews: [{date, right, seed, trap}]}}). Older versions are migrated on
 * load and on import.
 */
(function () {
  "use strict";
  var KEY = "msib.progress";
  var FORMAT = "msib-progress";
  var VERSION = 3;
  var BOXES = 5;
  var INTERVAL_DAYS = [1, 2, 4, 7, 14];     // days until the next review, by box 1..5
  var PASS_SHARE = 0.8;                     // share of key points covered that promotes a question
  var MAX_REVIEWS = 50;                     // history kept per question
  var MAX_FILE_BYTES = 1000000;
  var DATE = /^\d{4}-\d{2}-\d{2}$/;

  function today(now) {
    var d = now ? new Date(now) : new Date();
    return d.getFullYear() + "-" + String(d.getMonth() + 1).padStart(2, "0") + "-" +
      String(d.getDate()).padStart(2, "0");
  }
  function addDays(day, n) {
    var p = day.split("-");
    var d = new Date(Number(p[0]), Number(p[1]) - 1, Number(p[2]) + n);
    return today(d.getTime());
  }
  function isDate(v) {
    if (typeof v !== "string" || !DATE.test(v)) return false;
    var p = v.split("-").map(Number);
    var d = new Date(p[0], p[1] - 1, p[2]);
    return d.getFullYear() === p[0] && d.getMonth() === p[1] - 1 && d.getDate() === p[2];
  }
  function isInt(v, lo, hi) { return typeof v === "number" && Number.isInteger(v) && v >= lo && v <= hi; }
  function empty() { return { format: FORMAT, version: VERSION, questions: {}, ticked: [], drills: {} }; }

  /* A map of Leitner entries ({box, due, reviews}) stored under `field`, keyed by ids that match `idRe`
   * (a `what` id: "question 77", "drill kv_token"); `review(r, where)` checks one review's own fields
   * and returns its clean copy. Throws an Error naming the entry and the field that is wrong. */
  function leitner(map, field, idRe, what, review) {
    if (map === null || typeof map !== "object" || Array.isArray(map)) throw new Error("\"" + field + "\" must be an object keyed by " + what + (what === "drill" ? " type" : " id"));
    var out = {};
    Object.keys(map).forEach(function (id) {
      var e = map[id], where = what + " " + id + ": ";
      if (!idRe.test(id)) throw new Error("\"" + id.slice(0, 20) + "\" is not a " + what + (what === "drill" ? " type" : " id"));
      if (e === null || typeof e !== "object" || Array.isArray(e)) throw new Error(where + "entry must be an object");
      if (!isInt(e.box, 1, BOXES)) throw new Error(where + "box must be a whole number from 1 to " + BOXES);
      if (!isDate(e.due)) throw new Error(where + "due must be a date (YYYY-MM-DD)");
      if (!Array.isArray(e.reviews) || e.reviews.length > 1000) throw new Error(where + "reviews must be a list");
      var reviews = e.reviews.map(function (r, i) {
        var w = where + "review " + (i + 1) + ": ";
        if (r === null || typeof r !== "object") throw new Error(w + "must be an object");
        if (!isDate(r.date)) throw new Error(w + "date must be a date (YYYY-MM-DD)");
        return review(r, w);
      });
      out[id] = { box: e.box, due: e.due, reviews: reviews.slice(-MAX_REVIEWS) };
    });
    return out;
  }

  /* Validate a parsed progress object of any supported version; return a clean version-3 copy or
   * throw an Error whose message says what is wrong (shown to the user as text). */
  function normalise(raw) {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new Error("it is not a progress file (expected a JSON object)");
    if (raw.format !== FORMAT) throw new Error("it is not a progress file from this site (format is not \"" + FORMAT + "\")");
    if (!isInt(raw.version, 1, 1000)) throw new Error("its version is missing or not a whole number");
    if (raw.version > VERSION) throw new Error("it was written by a newer version of this site (version " + raw.version + "; this page reads up to " + VERSION + ")");
    var out = empty();
    var ticked = raw.ticked === undefined ? [] : raw.ticked;
    if (!Array.isArray(ticked) || ticked.length > 10000 || !ticked.every(function (t) { return isInt(t, 1, 99999); }))
      throw new Error("\"ticked\" must be a list of question ids");
    out.ticked = Array.from(new Set(ticked)).sort(function (a, b) { return a - b; });
    if (raw.version === 1) return out;   // version 1 held ticks only
    out.questions = leitner(raw.questions, "questions", /^[1-9]\d{0,4}$/, "question", function (r, w) {
      if (!isInt(r.total, 1, 50) || !isInt(r.covered, 0, r.total)) throw new Error(w + "covered and total must be whole numbers, covered <= total");
      if (!isInt(r.seconds, 0, 86400)) throw new Error(w + "seconds must be a whole number from 0 to 86400");
      return { date: r.date, covered: r.covered, total: r.total, seconds: r.seconds };
    });
    if (raw.version === 2) return out;   // version 2 had no drills
    out.drills = leitner(raw.drills, "drills", /^[a-z][a-z0-9_]{0,31}$/, "drill", function (r, w) {
      if (typeof r.right !== "boolean") throw new Error(w + "right must be true or false");
      if (!isInt(r.seed, 0, 4294967295)) throw new Error(w + "seed must be a whole number from 0 to 4294967295");
      if (r.trap !== null && !(typeof r.trap === "string" && /^[a-z][a-z0-9_]{0,39}$/.test(r.trap))) throw new Error(w + "trap must be a mistake's name or null");
      return { date: r.date, right: r.right, seed: r.seed, trap: r.trap };
    });
    return out;
  }

  var memory = null;      // used when localStorage is unavailable
  var status = { corrupt: null, storage: true };

  function readRaw() {
    try { return window.localStorage.getItem(KEY); } catch (e) { status.storage = false; return memory; }
  }
  function writeRaw(text) {
    try { window.localStorage.setItem(KEY, text); } catch (e) { status.storage = false; memory = text; }
  }

  /* The stored progress, always a valid version-3 object. Damaged data is left in place (so it can be
   * downloaded) and reported through status.corrupt; the site then works from empty progress. */
  function load() {
    var text = readRaw();
    status.corrupt = null;
    if (text === null || text === undefined) return empty();
    try {
      return normalise(JSON.parse(text));
    } catch (e) {
      status.corrupt = { raw: String(text), message: e instanceof SyntaxError ? "it is not valid JSON" : e.message };
      return empty();
    }
  }
  function save(state) {
    if (status.corrupt) return false;   // never overwrite damaged data silently: the user resets first
    state.updated = new Date().toISOString();
    writeRaw(JSON.stringify(state));
    return true;
  }
  function reset() { status.corrupt = null; writeRaw(JSON.stringify(empty())); }

  /* Grade one answer: Leitner boxes. Covering at least PASS_SHARE of the key points moves the
   * question up one box (longer interval); less sends it back to box 1 (tomorrow). */
  function grade(state, id, covered, total, seconds, now) {
    var day = today(now), key = String(id);
    var e = state.questions[key];
    var pass = total > 0 && covered / total >= PASS_SHARE;
    var box = pass ? Math.min((e ? e.box : 1) + 1, BOXES) : 1;
    if (!e) e = state.questions[key] = { box: 1, due: day, reviews: [] };
    e.box = box;
    e.due = addDays(day, INTERVAL_DAYS[box - 1]);
    e.reviews.push({ date: day, covered: covered, total: total, seconds: Math.max(0, Math.min(86400, Math.round(seconds))) });
    e.reviews = e.reviews.slice(-MAX_REVIEWS);
    return e;
  }
  /* Grade one drill: right moves its type up one box, wrong (or the solution shown) back to box 1. */
  function gradeDrill(state, key, right, seed, trap, now) {
    var day = today(now);
    var e = state.drills[key];
    var box = right ? Math.min((e ? e.box : 1) + 1, BOXES) : 1;
    if (!e) e = state.drills[key] = { box: 1, due: day, reviews: [] };
    e.box = box;
    e.due = addDays(day, INTERVAL_DAYS[box - 1]);
    e.reviews.push({ date: day, right: !!right, seed: seed >>> 0, trap: trap || null });
    e.reviews = e.reviews.slice(-MAX_REVIEWS);
    return e;
  }
  function isDrillDue(state, key, now) {
    var e = state.drills[key];
    return !!e && e.due <= today(now);
  }
  function describeDrill(state, key, now) {
    var e = state.drills[key];
    if (!e) return "not drilled yet";
    if (e.due <= today(now)) return "due today";
    return "next " + e.due + " (box " + e.box + " of " + BOXES + ")";
  }
  function isDue(state, id, now) {
    var e = state.questions[String(id)];
    return !!e && e.due <= today(now);
  }
  function describe(state, id, now) {
    var e = state.questions[String(id)];
    if (!e) return "never practised";
    if (e.due <= today(now)) return "due for review today";
    return "next review " + e.due + " (box " + e.box + " of " + BOXES + ")";
  }
  function exportText(state) { return JSON.stringify(state, null, 2) + "\n"; }
  function parseImport(text) {
    if (typeof text !== "string" || text.length > MAX_FILE_BYTES) throw new Error("the file is larger than a progress file can be");
    var raw;
    try { raw = JSON.parse(text); } catch (e) { throw new Error("it is not valid JSON"); }
    return normalise(raw);
  }

  window.MSIB = window.MSIB || {};
  window.MSIB.progress = {
    KEY: KEY, VERSION: VERSION, BOXES: BOXES, INTERVAL_DAYS: INTERVAL_DAYS, PASS_SHARE: PASS_SHARE,
    load: load, save: save, reset: reset, grade: grade, isDue: isDue, describe: describe,
    gradeDrill: gradeDrill, isDrillDue: isDrillDue, describeDrill: describeDrill,
    exportText: exportText, parseImport: parseImport, today: today, status: status
  };

  /* Question pages: the one-line review state under the title. */
  function showReviewState(state) {
    document.querySelectorAll(".msib-review[data-qid]").forEach(function (el) {
      el.textContent = status.corrupt ? "Saved progress is damaged (see Practice)" : "Your progress: " + describe(state, el.getAttribute("data-qid"));
    });
  }

  /* Knowledge map and study plan: checklist items that link to a question become live ticks. */
  function liveChecklists(state) {
    document.querySelectorAll("li.task-list-item").forEach(function (li) {
      var box = li.querySelector("input[type=checkbox]");
      var link = li.querySelector("a");
      var m = link && /^Q(\d+)\s/.exec(link.textContent.trim());
      if (!box || !m) return;
      var id = Number(m[1]);
      box.disabled = false;
      box.checked = state.ticked.indexOf(id) >= 0;
      box.setAttribute("aria-label", "I can answer " + link.textContent.trim());
      box.addEventListener("change", function () {
        var s = load();
        if (status.corrupt) { box.checked = !box.checked; return; }
        var set = new Set(s.ticked);
        if (box.checked) set.add(id); else set.delete(id);
        s.ticked = Array.from(set).sort(function (a, b) { return a - b; });
        save(s);
        // The same question can appear under several topics: keep its other ticks in step.
        document.querySelectorAll("li.task-list-item").forEach(function (other) {
          var a = other.querySelector("a"), b = other.querySelector("input[type=checkbox]");
          if (a && b && b !== box && a.textContent.trim().indexOf("Q" + id + " ") === 0) b.checked = box.checked;
        });
      });
    });
  }

  function init() {
    var state = load();
    showReviewState(state);
    liveChecklists(state);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();

/* "Copy link" on a build without a public address (no SITE_URL, or a local one such as the default
 * 127.0.0.1:8000): copy the address the reader is on, with the follow-up's anchor, instead of a local
 * short link that means nothing in a chat. Offline (file://) the same rule applies. */
(function () {
  "use strict";
  var LOCAL = /^(localhost|127\.\d+\.\d+\.\d+|\[::1\]|0\.0\.0\.0)$/;
  function here() {
    document.querySelectorAll("button.msib-copy-link[data-clipboard-text]").forEach(function (button) {
      var text = button.getAttribute("data-clipboard-text"), host;
      try { host = new URL(text, location.href).hostname; } catch (e) { return; }
      if (!LOCAL.test(host)) return;
      var anchor = text.split("#")[1];
      var page = location.href.split("#")[0];
      button.setAttribute("data-clipboard-text", anchor ? page + "#" + anchor : page);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", here); else here();
})();

/* After load, once the browser is idle: closed blocks go back to the browser's own behaviour
 * (site.css keeps their contents out of layout while the page starts up).
 * Then code wider than its box gets keyboard access (tabindex 0), now and whenever a block opens:
 * Material gives it only on devices with hover, which leaves a phone with a keyboard unable to scroll it
 * (axe: scrollable-region-focusable). Measured at idle and on opening, never during start-up. */
(function () {
  "use strict";
  function focusableCode(root) {
    root.querySelectorAll(".md-typeset pre > code:not([tabindex])").forEach(function (code) {
      if (code.closest("details:not([open])")) return;
      if (code.scrollWidth > code.clientWidth) code.setAttribute("tabindex", "0");
    });
  }
  document.addEventListener("toggle", function (e) {
    if (e.target.open && document.documentElement.classList.contains("msib-settled")) focusableCode(e.target);
  }, true);
  function settle() {
    document.documentElement.classList.add("msib-settled");
    focusableCode(document);
  }
  function whenIdle() {
    if (typeof window.requestIdleCallback === "function") window.requestIdleCallback(settle, { timeout: 2000 });
    else setTimeout(settle, 200);
  }
  if (document.readyState === "complete") whenIdle(); else window.addEventListener("load", whenIdle);
})();

/* Printing: open every collapsed block for the printout, then restore what the reader had. */
(function () {
  "use strict";
  var opened = [];
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details:not([open])").forEach(function (d) { d.open = true; opened.push(d); });
  });
  window.addEventListener("afterprint", function () {
    opened.forEach(function (d) { d.open = false; });
    opened = [];
  });
})();
