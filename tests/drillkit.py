"""Helpers for the napkin-math drill tests: the same drills drawn by the Python reference
(sitebuild.drills) and by the browser engine (drills-engine.js in Chromium, one batch), the parser and
formatters run in the page, and the worked solution rendered by the site's own worked-example wrapper
(macros.render.blocks.Example, through Markdown) for comparison with what the browser shows."""

from __future__ import annotations

import html
import re

import markdown

from macros.catalog import load_catalog
from macros.render.blocks import Example, catalog_link
from sitebuild import drills as D

JS_MAKE = """(cases) => cases.map(c => {
  try { return MSIBDrills.make(c[0], c[1]); } catch (e) { return {error: String(e && e.stack || e)}; }
})"""


def python_drills(cases) -> list[dict]:
    return [D.make(k, s) for k, s in cases]


def js_drills(page, cases) -> list[dict]:
    return page.evaluate(JS_MAKE, [list(c) for c in cases])


def js_parse(page, items) -> list[dict]:
    """``items``: (text, dim) pairs through MSIBDrills.parse."""
    return page.evaluate("(items) => items.map(i => MSIBDrills.parse(i[0], i[1]))", [list(i) for i in items])


def js_read(page, items) -> list[dict]:
    """``items``: (text, drill type) pairs through MSIBDrills.read (the type's rule for bare numbers)."""
    return page.evaluate("(items) => items.map(i => MSIBDrills.read(i[0], MSIBDrills.type(i[1])))",
                         [list(i) for i in items])


_KINDS = {"model": "model", "gpu": "gpu", "fmt": "format", "efmt": "format", "kv": "format", "price": "price",
          "api": "api"}


def _source(inst: dict, spec: str) -> str:
    kind = _KINDS.get(spec)
    if kind is None or spec not in inst["refs"]:
        return spec
    key, cat = inst["refs"][spec], load_catalog()
    name = {"model": lambda: cat.model(key).name, "gpu": lambda: cat.gpu(key).name,
            "format": lambda: cat.format(key).name}.get(kind, lambda: f"{key} (illustrative)")()
    return catalog_link(kind, key, name)


def solution_markdown(inst: dict) -> str:
    """The drill's worked solution through the site's worked-example wrapper, as a page would show it."""
    s = inst["solution"]
    ex = Example(s["title"])
    for f in s["formulas"]:
        ex.formula(f)
    for label, value, spec in s["inputs"]:
        ex.input(label, value, _source(inst, spec))
    for step in s["steps"]:
        ex.step(step)
    for r in s["results"]:
        ex.result(r)
    for n in s["notes"]:
        ex.note(n)
    return ex.render()


def visible_text(markup: str) -> str:
    """Text content of rendered HTML, blank space folded, as the browser's textContent would give it."""
    text = re.sub(r"<[^>]+>", " ", markup)
    return " ".join(html.unescape(text).split())


def solution_text(inst: dict) -> str:
    body = markdown.markdown(solution_markdown(inst), extensions=["tables", "md_in_html", "attr_list"])
    return visible_text(body)
