"""Page weight of a built site: bytes of a page's HTML and of everything its first view loads.

"First view" is what a browser fetches when the page is opened with an empty cache and nobody
touches it: the HTML, its stylesheets, scripts, images and favicon, and the search worker that
Material starts on load (named in the page's ``__config`` JSON). The search index is not part of it:
it loads when the reader first reaches for search (docs/assets/javascripts/search-on-demand.js), and
it is counted on its own, because it is the one item that grows with the number of pages.

Sizes are read from the files of the build; "gzip" is the size after ``gzip -6`` (zlib's default
level, what Apache's mod_deflate and most static hosts use), with the header's timestamp zeroed so
that the figure is reproducible.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

# Page-weight budgets (issue "Performance, accessibility and robustness budgets"). KB = 1000 bytes,
# as GB = 10^9 everywhere on this site.
KB = 1000
BUDGET_HTML_RAW = 60 * KB
BUDGET_FIRST_VIEW_GZ = 150 * KB

GZIP_LEVEL = 6
SEARCH_INDEX = "search/search_index.json"
SEARCH_INDEX_OFFLINE = "search/search_index.js"


def gzip_size(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0))


@dataclass(frozen=True)
class Weight:
    raw: int
    gz: int

    def __add__(self, other: "Weight") -> "Weight":
        return Weight(self.raw + other.raw, self.gz + other.gz)


def file_weight(path: Path) -> Weight:
    data = path.read_bytes()
    return Weight(len(data), gzip_size(data))


class _Refs(HTMLParser):
    """Collects the URLs a page loads by itself (not the ones it only links to)."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.urls: list[str] = []
        self._in_config = False
        self.config_text = ""

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "link":
            rel = (a.get("rel") or "").lower().split()
            if {"stylesheet", "icon", "preload", "modulepreload"} & set(rel) and a.get("href"):
                self.urls.append(a["href"])
        elif tag == "script":
            if a.get("src"):
                self.urls.append(a["src"])
            self._in_config = a.get("id") == "__config"
        elif tag in ("img", "source", "video", "audio", "iframe", "embed") and a.get("src"):
            if (a.get("loading") or "").lower() != "lazy":
                self.urls.append(a["src"])
        elif tag == "object" and a.get("data"):
            self.urls.append(a["data"])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_config = False

    def handle_data(self, data):
        if self._in_config:
            self.config_text += data


@dataclass
class FirstView:
    page: Path
    html: Weight
    assets: dict[str, Weight] = field(default_factory=dict)  # site-relative path -> weight
    external: list[str] = field(default_factory=list)       # URLs that are not files of the site

    @property
    def total(self) -> Weight:
        total = self.html
        for w in self.assets.values():
            total = total + w
        return total


def page_references(html_path: Path) -> list[str]:
    """The URLs (as written, relative or absolute) that the page at ``html_path`` loads on first view."""
    parser = _Refs()
    parser.feed(html_path.read_text(encoding="utf-8"))
    urls = list(parser.urls)
    if parser.config_text.strip():
        config = json.loads(parser.config_text)
        if config.get("search"):
            urls.append(config["search"])
    return urls


def resolve(site: Path, html_path: Path, url: str) -> str | None:
    """Site-relative path of the file ``url`` refers to from ``html_path``; None if it leaves the site."""
    parts = urlsplit(url)
    if parts.scheme in ("data", "blob"):
        return ""
    if parts.scheme or parts.netloc:
        return None
    page_url = "/" + html_path.relative_to(site).as_posix()
    target = unquote(urlsplit(urljoin(page_url, parts.path)).path).lstrip("/")
    if target == "" or target.endswith("/"):
        target += "index.html"
    return target


def first_view(site: Path, html_path: Path) -> FirstView:
    """Weight of the page at ``html_path`` and of every file its first view loads, search index excluded."""
    view = FirstView(html_path, file_weight(html_path))
    for url in page_references(html_path):
        rel = resolve(site, html_path, url)
        if rel is None:
            view.external.append(url)
        elif rel and rel not in view.assets:
            target = site / rel
            if not target.is_file():
                raise FileNotFoundError(f"{html_path.relative_to(site)} loads {url}, which is not in the build")
            view.assets[rel] = file_weight(target)
    return view


def search_index(site: Path) -> Weight | None:
    for rel in (SEARCH_INDEX, SEARCH_INDEX_OFFLINE):
        if (site / rel).is_file():
            return file_weight(site / rel)
    return None


def kb(n: int) -> str:
    return f"{n / KB:.1f} KB"
