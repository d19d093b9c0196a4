"""Search ranks a question by its title and tags first: typing a topic puts the question that owns it
at the top of Material's result list (checked in the browser, typing key by key)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

# query -> id of the question that owns the topic
TOP_RESULT = {
    "KV cache": 75,
    "speculative decoding": 78,
    "tensor parallelism": 79,
    "continuous batching": 76,
    "PagedAttention": 77,
    "TensorRT": 14,
    "HPA": 45,
    "Q75": 75,
    "paged attention": 77,
}


@pytest.mark.parametrize("query", sorted(TOP_RESULT))
def test_top_search_result(query, served_site, page, registry):
    q = registry.questions[TOP_RESULT[query]]
    page.goto(served_site)
    box = page.locator("input.md-search__input")
    box.click()
    box.press_sequentially(query, delay=30)
    first = page.locator(".md-search-result__item > a").first
    first.wait_for(state="attached", timeout=15000)
    # Results render as the query is refined; wait until the list reflects the whole query.
    page.wait_for_function(
        "q => (document.querySelector('.md-search-result__item > a') || {}).href"
        " && document.querySelector('.md-search-result__item > a').href.includes('h=' + q)",
        arg=query.lower().replace(" ", "+"), timeout=15000)
    href = first.get_attribute("href")
    assert q.src[:-3] + "/" in href, f"{query!r}: first result {href}, expected {q.src}"
