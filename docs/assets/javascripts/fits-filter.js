/* Filters for the what-fits reference page: model, GPU and format. The full table stays in the HTML
   (for search and for readers without JavaScript); the filters only hide sections, rows and columns.
   The choice is kept in the address bar's query string (?model=&gpu=&fmt=). */
(function () {
  "use strict";
  var tables = document.querySelectorAll(".fits-table");
  if (!tables.length) { return; }
  var key = function (a, prefix) {
    var h = a ? a.getAttribute("href") || "" : "", i = h.indexOf("#" + prefix + "-");
    return i < 0 ? null : h.slice(i + prefix.length + 2);
  };
  var sections = [], gpus = [], seen = {}, fmts = [];
  tables.forEach(function (t) {
    var nodes = [t], n = t.previousElementSibling;
    while (n && n.tagName !== "H2") { nodes.push(n); n = n.previousElementSibling; }
    if (!n) { return; }
    nodes.push(n);
    sections.push({ key: t.getAttribute("data-model") || n.id.replace(/^fits-/, ""),
      name: n.firstChild.textContent.trim(), nodes: nodes, table: t });
    sections[sections.length - 1].rows = Array.prototype.map.call(t.querySelectorAll("tr"), function (tr) {
      var a = tr.querySelector("td a"), k = key(a, "gpu");
      if (k && !seen[k]) { seen[k] = true; gpus.push([k, a.textContent.trim()]); }
      return { tr: tr, gpu: k };
    });
  });
  tables[0].querySelectorAll("thead th").forEach(function (th, i) {
    var k = key(th.querySelector("a"), "format");
    if (k) { fmts.push([k, k, i]); }
  });
  if (!sections.length) { return; }
  var form = document.createElement("form"), status = document.createElement("p");
  form.className = "fits-filter"; form.setAttribute("aria-label", "Filter the table");
  status.className = "fits-filter__status"; status.setAttribute("role", "status");
  function select(name, label, all, items) {
    var wrap = document.createElement("div"), l = document.createElement("label"), s = document.createElement("select");
    s.id = "fits-" + name + "-filter"; s.name = name; l.htmlFor = s.id; l.textContent = label;
    [["", all]].concat(items).forEach(function (it) {
      var o = document.createElement("option"); o.value = it[0]; o.textContent = it[1]; s.appendChild(o);
    });
    wrap.appendChild(l); wrap.appendChild(s); form.appendChild(wrap);
    return s;
  }
  var sm = select("model", "Model", "All models", sections.map(function (s) { return [s.key, s.name]; }));
  var sg = select("gpu", "GPU", "All GPUs", gpus), sf = select("fmt", "Format", "All formats", fmts);
  var slot = document.getElementById("fits-filter"), first = sections[0].nodes[sections[0].nodes.length - 1];
  if (slot) { slot.appendChild(form); slot.appendChild(status); }  // space kept for it: no layout shift
  else { first.parentNode.insertBefore(form, first); first.parentNode.insertBefore(status, first); }
  var q = new URLSearchParams(location.search);
  [[sm, "model"], [sg, "gpu"], [sf, "fmt"]].forEach(function (p) {
    var v = q.get(p[1]);
    if (v && Array.prototype.some.call(p[0].options, function (o) { return o.value === v; })) { p[0].value = v; }
  });
  // Only elements whose state changes are touched: with no filter set, opening the page writes nothing.
  var set = function (node, hide) { if (node.hidden !== hide) { node.hidden = hide; } };
  var lastCol = null;
  function apply() {
    var col = null, shown = 0;
    fmts.forEach(function (f) { if (f[0] === sf.value) { col = f[2]; } });
    sections.forEach(function (s) {
      var on = !sm.value || sm.value === s.key;
      s.nodes.forEach(function (n) { set(n, !on); });
      if (on) { shown++; }
      s.rows.forEach(function (r) {
        set(r.tr, !!(sg.value && r.gpu && r.gpu !== sg.value));
        if (col !== lastCol) {
          Array.prototype.forEach.call(r.tr.children, function (cell, i) { set(cell, col !== null && i >= 2 && i !== col); });
        }
      });
    });
    lastCol = col;
    status.textContent = "Showing " + shown + (shown === 1 ? " model" : " models") + ", " +
      (sg.value ? "one GPU" : gpus.length + " GPUs") + ", " + (sf.value ? "one format" : fmts.length + " formats") + ".";
    var p = new URLSearchParams();
    if (sm.value) { p.set("model", sm.value); }
    if (sg.value) { p.set("gpu", sg.value); }
    if (sf.value) { p.set("fmt", sf.value); }
    var qs = p.toString();
    history.replaceState(null, "", (qs ? "?" + qs : location.pathname) + location.hash);
  }
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (ev) { ev.preventDefault(); });
  apply();
})();
