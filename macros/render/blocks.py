"""The building blocks of every rendered macro: catalog links, the worked-example wrapper, and the
number formatting shared by the topic modules.

``example_block`` is the single place the worked-example wrapper is defined and ``catalog_href`` the
single place the reference-page URLs are built. Byte results are shown in GB (1e9) and GiB (2**30).
Pure Python: nothing here imports MkDocs.
"""

from __future__ import annotations

import math
import re

from .. import units as U
from ..catalog import Format, Gpu, Model

#: Reference pages, docs-relative. Worked examples link their inputs to anchors on these pages.
REFERENCE_PAGES = {
    "model": "/reference/models.md",
    "gpu": "/reference/gpus.md",
    "format": "/reference/formats.md",
    "price": "/reference/prices.md",
    "api": "/reference/prices.md",
    "what-fits": "/reference/what-fits.md",
}


def anchor_id(kind: str, key: str) -> str:
    """HTML id of a catalog entry's heading: ``model-llama-3-1-70b`` (dots become hyphens)."""
    return f"{kind}-{key.replace('.', '-')}"


def catalog_href(kind: str, key: str) -> str:
    """Link target of a catalog entry, e.g. ``/reference/models.md#model-llama-3-1-70b``."""
    return f"{REFERENCE_PAGES[kind]}#{anchor_id(kind, key)}"


def catalog_link(kind: str, key: str, text: str) -> str:
    """A Markdown link to a catalog entry."""
    return f"[{text}]({catalog_href(kind, key)})"


def example_block(title: str, body_md: str) -> str:
    """Wrap a worked example. Every block macro goes through here; change the wrapper only here."""
    # data-search-exclude: generated tables are numbers, kept out of the search index.
    head = '<div class="worked-example" data-search-exclude="" markdown>'
    return f"{head}\n\n**Worked example — {title}**\n\n{body_md}\n\n</div>"


def deferred_block(body_md: str, height_rem: float, *, classes: str = "", attrs: str = "") -> str:
    """Markdown the browser lays out only when it comes near the viewport (``.msib-deferred`` in site.css:
    ``content-visibility: auto``), for long reference pages whose tables and lists made a phone's
    start-up slow. ``height_rem`` is the placeholder height until the first layout, after which the
    browser remembers the real one; an estimate from the row count keeps the scroll bar honest."""
    if not (math.isfinite(height_rem) and height_rem > 0):
        raise ValueError(f"deferred_block: height_rem must be a positive number, got {height_rem!r}")
    cls = " ".join(["msib-deferred", *classes.split()])
    extra = f" {attrs.strip()}" if attrs.strip() else ""
    return (f'<div class="{cls}"{extra} style="contain-intrinsic-size: auto {height_rem:.0f}rem" markdown>'
            f"\n\n{body_md}\n\n</div>")


def _i(n) -> str:
    return U.fmt_int(n)


def _gib(n_bytes: float) -> str:
    """Bytes in GiB only, for intermediate steps that mix with GiB allowances."""
    return f"{_n(U.bytes_to_gib(n_bytes))} GiB"


_MD_SPECIAL = re.compile(r"([\\`*_\[\]])")


def _esc(text: str, cell: bool = False) -> str:
    """Free text from the catalog, escaped so Markdown shows it literally (``*``, ``_``, brackets, ``<``);
    in a table cell ``|`` is escaped too and newlines become spaces."""
    out = _MD_SPECIAL.sub(r"\\\1", text).replace("<", "&lt;")
    if cell:
        out = out.replace("|", "\\|").replace("\n", " ")
    return out


def _n(x: float) -> str:
    """A number as given: whole values without decimals ('12,000'), others at fmt_num precision."""
    if isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and float(x).is_integer():
        return _i(x)
    return U.fmt_num(x)


def _sci(x: float) -> str:
    """A large count in scientific notation: 4.624e15 -> '4.62 × 10^15'."""
    if x == 0:
        return "0"
    exp = int(math.floor(math.log10(abs(x))))
    return f"{x / 10**exp:.2f} × 10^{exp}"


def _frac(x: float) -> str:
    """A share such as 0.5 or 0.125 without trailing zeros."""
    return f"{x:.4g}"


def _bits(x: float) -> str:
    s = f"{x:.6f}".rstrip("0").rstrip(".")
    return s


def _bytes_el(x: float) -> str:
    """Bytes per element: 2, 1, 0.515625 ..."""
    return _bits(x)


def _mlink(m: Model) -> str:
    return catalog_link("model", m.key, m.name)


def _glink(g: Gpu) -> str:
    return catalog_link("gpu", g.key, g.name)


def _flink(f: Format) -> str:
    return catalog_link("format", f.key, f.name)


def fmt_name(f: Format, expert_fmt: Format | None = None) -> str:
    """A format for a title, with the routed experts' format when it differs: 'BF16 / FP16, experts MXFP4'."""
    return f.name if expert_fmt is None or expert_fmt.key == f.key else f"{f.name}, experts {expert_fmt.name}"


GIVEN = "given"


class Example:
    """Collects the parts of a worked example and renders them in a fixed order."""

    def __init__(self, title: str):
        self.title = title
        self.formulas: list[str] = []
        self.inputs: list[tuple[str, str, str]] = []
        self.steps: list[str] = []
        self.results: list[str] = []
        self.notes: list[str] = []
        self.tables: list[str] = []

    def formula(self, text: str) -> "Example":
        self.formulas.append(text)
        return self

    def input(self, name: str, value: str, source: str) -> "Example":
        self.inputs.append((name, value, source))
        return self

    def step(self, text: str) -> "Example":
        self.steps.append(text)
        return self

    def result(self, text: str) -> "Example":
        self.results.append(text)
        return self

    def note(self, text: str) -> "Example":
        self.notes.append(text)
        return self

    def table(self, markdown: str) -> "Example":
        """A Markdown table of computed rows, shown after the substitution and before the result."""
        self.tables.append(markdown)
        return self

    def render(self) -> str:
        parts: list[str] = []
        if self.formulas:
            label = "Formula" if len(self.formulas) == 1 else "Formulas"
            parts.append(f"**{label}**")
            parts.append("\n".join(f"- `{f}`" for f in self.formulas))
        if self.inputs:
            rows = ["| Input | Value | Source |", "| --- | --- | --- |"]
            rows += [f"| {n} | {v} | {s} |" for n, v, s in self.inputs]
            parts.append("\n".join(rows))
        if self.steps:
            parts.append("**Substitution**")
            parts.append("\n".join(f"- {s}" for s in self.steps))
        parts.extend(self.tables)
        if len(self.results) == 1:
            parts.append(f"**Result:** {self.results[0]}")
        elif self.results:
            parts.append("**Result**")
            parts.append("\n".join(f"- {r}" for r in self.results))
        if self.notes:
            parts.append("*Assumptions and notes:* " + " ".join(self.notes))
        return example_block(self.title, "\n\n".join(parts))


def _k(tokens: int) -> str:
    """Compact token count: 131072 -> '128K', 8192 -> '8K', 1500 -> '1,500'."""
    if tokens >= 1024 and tokens % 1024 == 0:
        return f"{tokens // 1024:,}K"
    if tokens >= 10240:
        return f"{tokens / 1024:,.0f}K"
    return _i(tokens)


def _domain(url: str) -> str:
    """Link text for a source URL: its host and path start, e.g. 'nvidia.com/…/h200'."""
    m = re.match(r"https?://(?:www\.)?([^/]+)(/.*)?$", url)
    if not m:
        return url
    path = (m.group(2) or "").rstrip("/")
    tail = path.rsplit("/", 1)[-1] if path else ""
    return m.group(1) + (f"/…/{tail}" if path.count("/") > 1 else path)


def _src_cell(src: str) -> str:
    return f"[{_domain(src)}]({src})" if src.startswith("http") else _esc(src, cell=True)


#: Formats and KV dtypes the reference pages show for every model.
REFERENCE_FORMATS = ("bf16", "fp8", "int4-g128")
REFERENCE_KV = ("bf16", "fp8")
