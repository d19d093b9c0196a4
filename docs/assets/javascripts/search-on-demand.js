/* The search index on demand.
 *
 * Material's bundle requests search/search_index.json (about 300 KB gzipped) on every page load,
 * parses it on the main thread and copies it to the search worker, whether or not the reader ever
 * searches. On a throttled phone that request competes with the page's own paint and the parse and
 * copy are long tasks (docs/contributing/performance.md). This script runs just before the bundle and
 * holds that one request until the reader shows they want to search:
 *   - focus enters the search form (typing, or the s, f and / shortcuts, which focus the field);
 *   - the search toggle opens, or a pointer or finger reaches a search button (warms the index early);
 *   - the address carries a search (?q=) or a highlight (?h=) that Material acts on when loading.
 * Every other request passes through untouched, and so does this one once released.
 * window.MSIB.searchIndex.state() says "held", "released" (tests and the benchmark read it).
 */
(function () {
  "use strict";
  var XHR = window.XMLHttpRequest && window.XMLHttpRequest.prototype;
  if (!XHR || typeof Promise !== "function" || typeof WeakSet !== "function") return;
  var INDEX_PATH = /\/search\/search_index\.json$/;
  var open = XHR.open, send = XHR.send, abort = XHR.abort;
  var forIndex = new WeakSet();   // opened for the index
  var waiting = new WeakSet();    // sent for the index, held until release
  var released = false;
  var release;
  var wanted = new Promise(function (resolve) { release = resolve; });

  function want() {
    if (released) return;
    released = true;
    release();
  }
  function isIndex(method, url) {
    try {
      var u = new URL(String(url), location.href);
      return String(method).toUpperCase() === "GET" && u.origin === location.origin &&
        INDEX_PATH.test(u.pathname);
    } catch (e) {
      return false;
    }
  }

  // Material 9.8 loads the index with XMLHttpRequest (responseType "blob"). Only a GET of this
  // site's search_index.json made before release waits; aborted or reopened meanwhile, it is never
  // sent (abort() on a request that was not sent changes nothing the held send could see).
  XHR.open = function (method, url) {
    waiting.delete(this);
    if (isIndex(method, url)) forIndex.add(this); else forIndex.delete(this);
    return open.apply(this, arguments);
  };
  XHR.send = function () {
    var xhr = this, args = arguments;
    if (released || !forIndex.has(xhr)) return send.apply(xhr, args);
    waiting.add(xhr);
    wanted.then(function () {
      if (!waiting.has(xhr)) return;
      waiting.delete(xhr);
      send.apply(xhr, args);
    });
  };
  XHR.abort = function () {
    waiting.delete(this);
    return abort.apply(this, arguments);
  };

  function inSearch(target) {
    return !!(target && target.closest &&
              target.closest("label[for='__search'], [data-md-component='search']"));  // the form is inside
  }
  document.addEventListener("focusin", function (e) { if (inSearch(e.target)) want(); }, true);
  document.addEventListener("change", function (e) {
    if (e.target && e.target.id === "__search" && e.target.checked) want();
  }, true);
  ["pointerover", "pointerdown", "touchstart"].forEach(function (type) {
    document.addEventListener(type, function (e) { if (inSearch(e.target)) want(); },
                              { capture: true, passive: true });
  });
  var params = new URLSearchParams(location.search);
  if (params.has("q") || params.has("h")) want();

  window.MSIB = window.MSIB || {};
  window.MSIB.searchIndex = {
    want: want,
    state: function () { return released ? "released" : "held"; }
  };
})();
