"""Deterministic budgets, checked on the strict build of the real site (the timed figures and Lighthouse
are in scripts/benchmark; see docs/contributing/performance.md).

- Page weight: every question page's HTML <= 60 KB raw; its first view (HTML and everything it loads,
  search index excluded) <= 150 KB gzipped. Sizes come from the built files (scripts/perf/weight.py);
  a browser test checks that this list misses nothing a real first view fetches.
- The search index size is reported in tests/.artifacts/budgets.txt.
- The strict build passes with the network disabled (an empty network namespace, `unshare -rn`).
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from sitekit import ROOT, SOURCE_DATE_EPOCH, page_html_path
from scripts.perf import weight

ARTIFACTS = ROOT / "tests" / ".artifacts"
KB = weight.KB
QUESTION_HTML_RAW_MAX = weight.BUDGET_HTML_RAW
FIRST_VIEW_GZ_MAX = weight.BUDGET_FIRST_VIEW_GZ


# --- the measuring code, on a site small enough to add up by hand ---------------------------------

@pytest.fixture
def tiny_site(tmp_path):
    site = tmp_path / "site"
    (site / "a" / "b").mkdir(parents=True)
    (site / "assets").mkdir()
    (site / "assets" / "x.css").write_bytes(b"c" * 1000)
    (site / "assets" / "y.js").write_bytes(b"j" * 300)
    (site / "assets" / "w.js").write_bytes(b"w" * 50)
    (site / "assets" / "lazy.png").write_bytes(b"p" * 7)
    (site / "assets" / "i.png").write_bytes(b"i" * 20)
    page = site / "a" / "b" / "index.html"
    page.write_text(
        '<html><head><link rel="stylesheet" href="../../assets/x.css">'
        '<link rel="canonical" href="https://example.org/a/b/">'  # a link, not a load
        '<link rel="icon" href="/assets/i.png">'
        '<script id="__config" type="application/json">{"search": "../../assets/w.js"}</script>'
        '</head><body><a href="../../assets/lazy.png">not loaded</a>'
        '<img src="../../assets/lazy.png" loading="lazy">'
        '<img src="data:image/png;base64,AAAA">'
        '<script src="../../assets/y.js"></script><script src="../../assets/y.js"></script>'
        '<script src="https://cdn.example.net/lib.js"></script></body></html>', encoding="utf-8")
    return site, page


def test_first_view_adds_up_by_hand(tiny_site):
    site, page = tiny_site
    view = weight.first_view(site, page)
    # Loaded: x.css (1000 B), i.png (20 B), y.js (300 B, counted once), w.js (the search worker, 50 B).
    # Not loaded: the canonical and <a> links, the lazy image, the data: URL. The CDN script is external.
    assert sorted(view.assets) == ["assets/i.png", "assets/w.js", "assets/x.css", "assets/y.js"]
    assert view.external == ["https://cdn.example.net/lib.js"]
    html_bytes = len(page.read_bytes())
    assert view.html.raw == html_bytes
    assert view.total.raw == html_bytes + 1000 + 20 + 300 + 50
    # gzip: 1000 repeats of one byte compress to far fewer than 100 bytes; the sum is of the parts.
    assert view.assets["assets/x.css"].gz < 100
    assert view.total.gz == view.html.gz + sum(w.gz for w in view.assets.values())
    assert view.assets["assets/x.css"].gz == len(gzip.compress(b"c" * 1000, 6, mtime=0))


def test_a_missing_asset_is_an_error_not_a_zero(tiny_site):
    site, page = tiny_site
    (site / "assets" / "y.js").unlink()
    with pytest.raises(FileNotFoundError, match="y.js"):
        weight.first_view(site, page)


# --- budgets on the real build --------------------------------------------------------------------

def question_pages(built_site, registry) -> dict[str, Path]:
    pages = {q.src: page_html_path(built_site, q.src) for q in registry.questions.values()}
    assert pages, "no question pages in the build"
    return pages


def test_question_page_html_within_budget(built_site, registry):
    sizes = {src: p.stat().st_size for src, p in question_pages(built_site, registry).items()}
    over = {src: n for src, n in sizes.items() if n > QUESTION_HTML_RAW_MAX}
    assert not over, ("question pages over the 60 KB HTML budget: "
                      + ", ".join(f"docs/{s} {n / KB:.1f} KB" for s, n in sorted(over.items())))


def test_first_view_within_budget(built_site, registry):
    pages = {"index.md": built_site / "index.html", **question_pages(built_site, registry)}
    over, external = {}, {}
    for src, page in pages.items():
        view = weight.first_view(built_site, page)
        if view.total.gz > FIRST_VIEW_GZ_MAX:
            over[src] = view.total.gz
        if view.external:
            external[src] = view.external
    assert not external, f"first views load from other hosts: {external}"
    assert not over, ("first view over 150 KB gzipped: "
                      + ", ".join(f"docs/{s} {n / KB:.1f} KB" for s, n in sorted(over.items())))


def test_first_view_list_misses_nothing_the_browser_loads(served_site, built_site, browser, registry):
    """The static list of a first view (weight.first_view) against what Chromium really fetches."""
    q = max(registry.questions.values(), key=lambda q: page_html_path(built_site, q.src).stat().st_size)
    page_file = page_html_path(built_site, q.src)
    url = served_site + page_file.relative_to(built_site).parent.as_posix() + "/"
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    fetched: list[str] = []
    pg.on("request", lambda r: fetched.append(r.url))
    try:
        pg.goto(url)
        pg.wait_for_load_state("networkidle")
    finally:
        context.close()
    assert fetched and fetched[0] == url
    loaded = set()
    for u in fetched[1:]:
        assert u.startswith(served_site), f"a request left the site: {u}"
        rel = unquote(urlsplit(u).path).lstrip("/")
        loaded.add(rel + "index.html" if rel == "" or rel.endswith("/") else rel)
    view = weight.first_view(built_site, page_file)
    missed = loaded - set(view.assets)
    assert not missed, f"the browser fetched files the page-weight figure does not count: {sorted(missed)}"
    # The search index waits for the reader (tests/test_search_on_demand.py), so a first view never has it.
    assert weight.SEARCH_INDEX not in loaded


INDEX_BUDGET = 300 * KB
INDEX_BUDGET_PAGES = 134


def test_search_index_is_reported(built_site, registry):
    idx = weight.search_index(built_site)
    assert idx is not None, "no search index in the build"
    docs = json.loads((built_site / weight.SEARCH_INDEX).read_text(encoding="utf-8"))["docs"]
    locations = {d["location"].split("#")[0] for d in docs}
    # Every question page is in the index.
    missing = [q.src for q in registry.questions.values()
               if page_html_path(built_site, q.src).relative_to(built_site).parent.as_posix() + "/"
               not in locations]
    assert not missing, f"question pages missing from the search index: {missing}"
    # Budget (issue 25): the whole index at most 300 KB gzipped with 134 question pages. With fewer
    # pages written, the size is scaled up to 134 (the non-question pages scale too: an overestimate).
    n = len(registry.questions)
    projected = idx.gz * max(1.0, INDEX_BUDGET_PAGES / n)
    assert projected <= INDEX_BUDGET, (f"search index {idx.gz} B gzipped at {n} question pages, "
                                       f"{projected:.0f} B projected at {INDEX_BUDGET_PAGES}: over {INDEX_BUDGET} B")
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    report = (f"search index: {idx.raw} B raw, {idx.gz} B gzip -{weight.GZIP_LEVEL}, "
              f"{len(registry.questions)} question pages, {idx.raw / len(registry.questions) / KB:.1f} KB "
              f"per question page\n")
    (ARTIFACTS / "budgets.txt").write_text(report, encoding="utf-8")
    print(report)


# --- robustness: no network at build time --------------------------------------------------------

PROBE = ("import socket\n"
         "try:\n    socket.create_connection(('1.1.1.1', 53), timeout=3)\n"
         "except OSError:\n    raise SystemExit(0)\n"
         "raise SystemExit('a connection to 1.1.1.1 succeeded: the network is not disabled')\n")


def no_network_prefix() -> list[str]:
    """`unshare -rn` (an empty network namespace; as root, or any user where user namespaces are allowed)."""
    unshare = shutil.which("unshare")
    for prefix in (["unshare", "-rn"], ["unshare", "-n"]):
        if unshare and subprocess.run(prefix + ["true"], capture_output=True).returncode == 0:
            return prefix
    pytest.fail("unshare cannot create a network namespace here (needs root or user namespaces); "
                "run the build under a firewall that blocks egress instead and see "
                "docs/contributing/performance.md")


def test_strict_build_passes_without_network(tmp_path):
    prefix = no_network_prefix()
    probe = subprocess.run(prefix + [sys.executable, "-c", PROBE], capture_output=True, text=True)
    assert probe.returncode == 0, probe.stderr or probe.stdout
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true",
               SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH)
    proc = subprocess.run(prefix + [sys.executable, "-m", "mkdocs", "build", "--strict",
                                    "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"strict build without network failed:\n{proc.stdout}\n{proc.stderr}"
    assert (tmp_path / "site" / "index.html").is_file()
