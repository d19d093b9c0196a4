"""Reading, finding and sharing (issue 25), in headless Chromium on the online build: search finds what
is on the pages (code identifiers, CamelCase, question ids), wide tables show that they scroll,
answers read at body size, a question prints compactly with its answer open, and the home page and
question headers say what is there."""

from __future__ import annotations

import re

import pytest

from sitekit import page_html_path

pytestmark = pytest.mark.browser

# query -> ids of which one must be among the first three results. One id where a single page owns the
# topic; several where the word genuinely belongs to more than one (the test then checks any of them).
QUERIES = {
    "KV cache": {75}, "speculative decoding": {78}, "tensor parallelism": {79},
    "continuous batching": {76}, "PagedAttention": {77}, "TensorRT": {14, 16}, "HPA": {45},
    "ONNX Runtime": {13}, "operator fusion": {15}, "INT8 calibration": {16, 25},
    "Triton": {17, 34, 39}, "CUDA graph": {20}, "GGUF": {21}, "llama.cpp": {21},
    "prefill decode": {81}, "long context": {83, 116}, "Little's law": {6},
    "warm-up": {9}, "dynamic batching": {34, 8},
    "gRPC": {33}, "graceful shutdown": {40}, "rate limiting": {36, 93}, "GPTQ": {27},
    "AWQ": {27}, "SmoothQuant": {32}, "BF16": {26},
    "histogram_quantile": {56}, "liveness probe": {44}, "CrashLoopBackOff": {43},
    "model registry": {65}, "shadow deployment": {68}, "token bucket": {93},
    "sliding window P99": {91}, "FlashMLA": {75}, "Sarathi": {76, 81}, "EAGLE3": {78},
    "Polygraphy": {25, 16}, "gpu_memory_utilization": {18, 4, 80, 31, 35},
    "max_num_seqs": {20, 36, 67}, "SLO": {54, 142},
    # Spaced forms of CamelCase names, phrases whose page ranked low before, and ids.
    "paged attention": {77}, "time to first token": {3, 81, 74, 112}, "arithmetic intensity": {7},
    "error budget": {54}, "training serving skew": {69}, "Q75": {75}, "75": {75}, "Q7": {7},
    "q121": {121}, "Q4_K_M": {21},
}


# Material's own search worker, run in Chromium on the built index: the page the reader would see
# first for a query, without the timing of a typed query in the way (tests/test_search.py types).
RUN_QUERIES = """async ([queries]) => {
  const config = JSON.parse(document.getElementById('__config').textContent);
  const worker = new Worker(new URL(config.search, location.href));
  const index = await (await fetch(new URL('search/search_index.json', new URL(config.base, location.href)))).json();
  const ask = message => new Promise(resolve => {
    worker.onmessage = event => resolve(event.data); worker.postMessage(message); });
  await ask({type: 0, data: {config: index.config, docs: index.docs, options: {suggest: false}}});
  const out = {};
  for (const q of queries) {
    const reply = await ask({type: 2, data: q});
    out[q] = reply.data.items.slice(0, 3).map(group => group[0].location.split('#')[0]);
  }
  worker.terminate();
  return out;
}"""


def top_pages(page, site: str, queries) -> dict[str, list[str]]:
    """query -> locations of the first three result pages (Material groups a page's sections)."""
    page.goto(site)
    return page.evaluate(RUN_QUERIES, [list(queries)])


def test_search_query_set(served_site, page, registry):
    """Every query of the set has its page among the first three result pages."""
    assert len(QUERIES) >= 40
    top = top_pages(page, served_site, QUERIES)
    misses = []
    for query, ids in QUERIES.items():
        ids = {i for i in ids if i in registry.questions}
        assert ids, f"{query!r}: none of its pages exists"
        wanted = {registry.questions[i].src[:-3] + "/" for i in ids}
        if not wanted & set(top[query]):
            misses.append(f"{query!r}: top 3 {top[query]}, wanted one of {sorted(ids)}")
    assert not misses, "\n".join(misses)


def test_an_exact_id_outranks_the_ids_it_prefixes(served_site, page, registry):
    """Material appends a wildcard to every query term, so "Q7" also matches Q70-Q79 and "12" matches
    Q120-Q129: the question with exactly that id comes first, typed with or without the Q."""
    ids = [i for i in (1, 7, 12, 75, 121) if i in registry.questions]
    queries = [f"Q{i}" for i in ids] + [str(i) for i in ids] + [f"q{i}" for i in ids]
    top = top_pages(page, served_site, queries)
    for query in queries:
        qid = int(query.lstrip("Qq"))
        assert top[query][:1] == [registry.questions[qid].src[:-3] + "/"], f"{query!r}: {top[query]}"


def test_worked_examples_are_not_in_the_search_index(built_site):
    """Digits of generated tables stay out of the index: worked examples carry data-search-exclude."""
    import json
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    text = " ".join(d["text"] for d in index["docs"])
    assert "Worked example —" not in text, "a generated worked example reached the search index"
    html = (built_site / "deployment" / "llm-inference" / "kv-cache" / "index.html").read_text(encoding="utf-8")
    assert 'class="worked-example" data-search-exclude=""' in html


@pytest.mark.parametrize("width", [390, 1366])
def test_wide_tables_scroll_visibly(width, served_site, browser, registry):
    """A table wider than the column scrolls inside its own box, which shows a scroll shadow, and the
    page itself never scrolls sideways."""
    context = browser.new_context(viewport={"width": width, "height": 900})
    pg = context.new_page()
    checked = 0
    for src in (registry.questions[85].src, "reference/what-fits.md", registry.questions[26].src
                if 26 in registry.questions else registry.questions[75].src):
        url = served_site + (src[:-3] + "/")
        pg.goto(url)
        assert pg.evaluate("document.scrollingElement.scrollWidth <= window.innerWidth + 1"), f"{url} at {width}px"
        wide = pg.evaluate("""() => [...document.querySelectorAll('.md-typeset__scrollwrap')]
            .filter(w => w.scrollWidth > w.clientWidth + 1)
            .map(w => [getComputedStyle(w).overflowX, getComputedStyle(w).backgroundImage])""")
        for overflow, background in wide:
            assert overflow in ("auto", "scroll") and "radial-gradient" in background, (url, width)
            checked += 1
    if width == 390:
        assert checked, "at 390 px at least one of these tables must be wider than the screen"
    context.close()


def test_answers_read_at_body_size(served_site, page, registry):
    q = registry.questions[85]
    page.goto(served_site + q.src[:-3] + "/")
    page.click("details.answer > summary")
    body = page.evaluate("parseFloat(getComputedStyle(document.querySelector('article > p')).fontSize)")
    for sel in ("details.answer > p", "details.answer .in-short li", "details.followup > summary"):
        size = page.evaluate(f"parseFloat(getComputedStyle(document.querySelector('{sel}')).fontSize)")
        assert size >= body - 0.5, f"{sel}: {size}px against {body}px body text"


def test_question_prints_compactly_with_its_answer_open(served_site, page, registry):
    q = registry.questions[85]
    page.goto(served_site + q.src[:-3] + "/")
    page.emulate_media(media="print")
    assert page.locator(".md-sidebar--primary").is_hidden() and page.locator(".md-header").is_hidden()
    box = page.locator("details.answer .in-short").bounding_box()
    assert box and box["height"] > 20, "the answer must be open in print"
    assert page.locator("details.followup").first.locator("p").first.bounding_box(), "follow-ups open in print"
    assert page.locator(".msib-copy-link").first.is_hidden()
    pdf = page.pdf(format="A4")
    pages = len(re.findall(rb"/Type\s*/Page\b", pdf))
    # The 70B question printed on 14 A4 pages, the first mostly blank, before the print stylesheet.
    assert 1 < pages <= 10, f"{pages} A4 pages"


def test_home_page_starts_readers_and_counts_what_exists(built_site, registry):
    from bs4 import BeautifulSoup
    doc = BeautifulSoup((built_site / "index.html").read_text(encoding="utf-8"), "html.parser")
    text = doc.get_text(" ", strip=True)
    assert "Start here" in text
    planned = sum(p.planned for p in registry.parts)
    assert f"{len(registry.questions)} of {planned} written" in text
    for part in registry.parts:
        n = sum(1 for q in registry.questions.values() if q.section.part is part)
        assert f"{n} of {part.planned} questions written" in text
    links = {a.get_text(" ", strip=True) for a in doc.select("article a")}
    for q in registry.questions.values():
        assert f"{q.label} · {q.title}" in links, f"home page lists {q.label}"
    # A section without questions is named once, not drawn as an empty box with a count.
    for part in registry.parts:
        for sec in part.sections:
            if not any(q.section is sec for q in registry.questions.values()):
                assert f"({0})" not in text and sec.label in text


def test_question_header_shows_id_section_and_level(built_site, registry):
    from bs4 import BeautifulSoup
    for q in registry.questions.values():
        doc = BeautifulSoup(page_html_path(built_site, q.src).read_text(encoding="utf-8"), "html.parser")
        meta = doc.select_one("article h1 + p.msib-meta")
        assert meta is not None, q.src
        words = meta.get_text(" ", strip=True)
        assert words.startswith(f"{q.label} · {q.section.label} · {q.difficulty}"), (q.src, words)
        when = meta.select_one(".msib-verified time")
        assert when is not None and when["datetime"] == q.verified.isoformat(), q.src
        assert f"verified {q.verified.day} {q.verified:%b %Y}" in words
