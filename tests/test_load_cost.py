"""What a page costs at load. The search index (about 300 KB gzipped) loads when the reader wants to
search, not with every page, and the contents of closed blocks stay out of layout until the page has
settled. These were the network and
main-thread costs that held question pages under the mobile Lighthouse target
(docs/contributing/performance.md). Checked in Chromium against the built site."""

from __future__ import annotations

import pytest

from sitebuild.structure import answer_html
from sitekit import online_url, page_html_path

pytestmark = pytest.mark.browser

INDEX = "search/search_index.json"


def _answer(built_site, q) -> str:
    return answer_html(page_html_path(built_site, q.src).read_text(encoding="utf-8"))


def _most_in_answer(registry, built_site, tag: str, at_least: int):
    """The question page whose reference answer holds the most ``tag`` elements (at least ``at_least``)."""
    counts = {q.id: _answer(built_site, q).count(tag) for q in registry.questions.values()}
    q = registry.questions[max(counts, key=counts.get)]
    assert counts[q.id] >= at_least, f"no reference answer has {at_least} {tag} elements"
    return q


def _code_page(registry, built_site):
    """The question page with the most code blocks inside its reference answer."""
    return _most_in_answer(registry, built_site, "<pre", 1)


def _index_requests(pg) -> list[str]:
    return [u for u in pg.requests if INDEX in u]


def _results(pg, query: str):
    """Type a query and wait until the result list reflects all of it; return the first result link."""
    box = pg.locator("input.md-search__input")
    box.press_sequentially(query, delay=20)
    pg.wait_for_function(
        "q => (document.querySelector('.md-search-result__item > a') || {}).href"
        " && document.querySelector('.md-search-result__item > a').href.includes('h=' + q)",
        arg=query.lower().replace(" ", "+"), timeout=15000)
    return pg.locator(".md-search-result__item > a").first


def test_a_page_load_does_not_fetch_the_search_index(page, served_site, registry, built_site):
    q = _code_page(registry, built_site)
    page.goto(online_url(served_site, q.src))
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    assert page.evaluate("window.MSIB.searchIndex.state()") == "held"
    assert not _index_requests(page), f"the index was fetched on load: {_index_requests(page)}"
    # Search itself is still there and still ready to be used.
    assert page.locator("input.md-search__input").count() == 1


def test_focusing_the_search_field_loads_the_index_and_search_works(page, served_site, registry):
    page.goto(served_site)
    page.wait_for_load_state("networkidle")
    assert not _index_requests(page)
    with page.expect_response(lambda r: INDEX in r.url and r.ok, timeout=15000):
        page.locator("input.md-search__input").click()
    first = _results(page, "KV cache")
    assert first.get_attribute("href"), "no result after the index loaded"


def test_keyboard_shortcut_loads_the_index(page, served_site):
    page.goto(served_site)
    page.wait_for_load_state("networkidle")
    with page.expect_response(lambda r: INDEX in r.url, timeout=15000):
        page.keyboard.press("/")
    assert page.evaluate("document.activeElement && document.activeElement.matches('input.md-search__input')")


def test_phone_search_button_loads_the_index(browser, served_site):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    pg = context.new_page()
    try:
        pg.goto(served_site)
        pg.wait_for_load_state("networkidle")
        with pg.expect_response(lambda r: INDEX in r.url and r.ok, timeout=15000):
            pg.locator("label.md-header__button[for='__search']").tap()
        pg.locator("input.md-search__input").wait_for(state="visible")
        assert _results(pg, "speculative decoding").get_attribute("href")
    finally:
        context.close()


def test_typing_before_the_index_arrives_still_gives_results(page, served_site):
    """A slow network: the reader types while the index is still downloading."""
    def slow(route):
        page.wait_for_timeout(1500)
        route.continue_()
    page.route("**/" + INDEX, slow)
    page.goto(served_site)
    page.wait_for_load_state("networkidle")
    page.locator("input.md-search__input").click()
    first = _results(page, "tensor parallelism")
    assert first.get_attribute("href")


def test_a_shared_search_link_opens_with_results(page, served_site):
    """?q= (Material's search.share) runs the search on load, so the index is fetched at once."""
    page.goto(served_site + "?q=continuous+batching")
    page.locator(".md-search-result__item > a").first.wait_for(state="attached", timeout=15000)
    assert _index_requests(page)


def test_only_the_index_request_waits(page, served_site):
    """Other requests go out at once; an index request aborted while it waits is never sent."""
    page.goto(served_site)
    page.wait_for_load_state("networkidle")
    status = page.evaluate("""() => new Promise(resolve => {
        const x = new XMLHttpRequest();
        x.open('GET', new URL('sitemap.xml', location.href));
        x.onload = () => resolve(x.status);
        x.onerror = () => resolve(-1);
        x.send();
    })""")
    assert status == 200
    assert page.evaluate("window.MSIB.searchIndex.state()") == "held"
    with page.expect_response(lambda r: INDEX in r.url, timeout=15000):
        page.evaluate("""() => {
            const x = new XMLHttpRequest();
            x.open('GET', new URL('search/search_index.json?probe=aborted', location.href));
            x.send();
            x.abort();
            window.MSIB.searchIndex.want();
        }""")
    page.wait_for_timeout(300)
    assert not [u for u in page.requests if "probe=aborted" in u], "an aborted request was sent"


@pytest.mark.parametrize("width", [1280, 412])
def test_code_in_a_closed_answer_works_once_opened(width, browser, served_site, registry, built_site):
    """Code inside a closed answer is measured while it takes no layout (site.css): opening the answer
    must still give every block its copy button, and every block wider than its box keyboard access,
    on a phone too (Material gives it only where there is hover; site.js does the rest)."""
    q = _code_page(registry, built_site)
    context = browser.new_context(viewport={"width": width, "height": 844}, is_mobile=width < 500,
                                  has_touch=width < 500)
    page = context.new_page()
    try:
        _open_code_and_check(page, online_url(served_site, q.src))
    finally:
        context.close()


def _open_code_and_check(page, url):
    page.goto(url)
    page.wait_for_load_state("networkidle")
    page.wait_for_function("document.documentElement.classList.contains('msib-settled')", timeout=10000)
    answer = page.locator("details.answer")
    answer.locator("summary").first.click()
    # Blocks can sit in a closed example inside the answer: open those the way a reader does.
    nested = answer.locator("details:not([open]) > summary")
    while nested.count():
        nested.first.scroll_into_view_if_needed()
        nested.first.click()
    blocks = answer.locator("pre")
    assert blocks.count() >= 1
    for i in range(blocks.count()):
        assert blocks.nth(i).locator("button.md-code__button[data-clipboard-target]").count() == 1
    page.wait_for_function("""() => [...document.querySelectorAll('details.answer pre > code')]
        .every(c => c.scrollWidth <= c.clientWidth || c.getAttribute('tabindex') === '0')""", timeout=5000)
    assert page.evaluate("""() => [...document.querySelectorAll('details.answer pre > code')]
        .some(c => c.scrollWidth > c.clientWidth)"""), "no code block overflows: the check above proved nothing"


def _big_answer_page(registry, built_site):
    """The question page whose reference answer has the most headings (each is a table-of-contents link)."""
    return _most_in_answer(registry, built_site, "<h4", 2)


def test_closed_blocks_rejoin_layout_once_the_page_settles(page, served_site, registry, built_site):
    q = _big_answer_page(registry, built_site)
    page.goto(online_url(served_site, q.src))
    page.wait_for_function("document.documentElement.classList.contains('msib-settled')", timeout=10000)
    content = "getComputedStyle(document.querySelector('details.answer:not([open])'), '::details-content')"
    child = "document.querySelector('details.answer:not([open]) > :not(summary)')"
    # Settled: the browser's own handling of a closed block (content-visibility: hidden, still laid out
    # when a script measures inside it).
    assert page.evaluate(f"{content}.display") != "none"
    assert page.evaluate(f"{child}.getBoundingClientRect().width") > 0
    # Before that (the class taken away again), the same contents take no part in layout.
    page.evaluate("document.documentElement.classList.remove('msib-settled')")
    assert page.evaluate(f"{content}.display") == "none"
    assert page.evaluate(f"{child}.getBoundingClientRect().width") == 0
    # Opening the block shows its contents even then.
    page.locator("details.answer > summary").first.click()
    assert page.locator("details.answer > :not(summary)").first.is_visible()


def test_a_link_to_a_section_inside_a_closed_answer_opens_it(page, served_site, registry, built_site):
    """The table of contents links headings inside the answer; following one opens the answer."""
    q = _big_answer_page(registry, built_site)
    body = _answer(built_site, q)
    anchor = body[body.find("<h4"):].split('id="', 1)[1].split('"', 1)[0]
    page.goto(online_url(served_site, q.src) + "#" + anchor)
    page.wait_for_function("document.querySelector('details.answer').open === true", timeout=5000)
    assert page.locator(f"[id='{anchor}']").is_visible()


# Long reference pages: blocks laid out only near the viewport (macros/render/blocks.py deferred_block).
DEFERRED_PAGES = ["reference/models.md", "guide/knowledge-map.md", "reference/what-fits.md"]


@pytest.mark.parametrize("src", DEFERRED_PAGES)
@pytest.mark.parametrize("width", [390, 1280])
def test_far_blocks_wait_and_their_placeholders_fit(src, width, browser, served_site):
    context = browser.new_context(viewport={"width": width, "height": 844})
    pg = context.new_page()
    try:
        pg.goto(online_url(served_site, src))
        pg.wait_for_load_state("networkidle")
        blocks = pg.locator(".md-typeset .msib-deferred")
        n = blocks.count()
        assert n >= 10, f"{src}: {n} deferred blocks"
        last = blocks.nth(n - 1)
        # Far below the fold: its contents are skipped until the reader gets there.
        assert last.evaluate("b => b.firstElementChild.checkVisibility({contentVisibilityAuto: true})") is False
        placeholder = last.evaluate("b => b.getBoundingClientRect().height")
        last.scroll_into_view_if_needed()
        pg.wait_for_function("b => b.firstElementChild.checkVisibility({contentVisibilityAuto: true})",
                             arg=last.element_handle(), timeout=5000)
        real = last.evaluate("b => b.firstElementChild.getBoundingClientRect().height")
        # The placeholder estimate keeps the scroll bar roughly right: within a factor of two.
        assert 0.5 <= placeholder / real <= 2, (f"{src} at {width}px: placeholder {placeholder:.0f} px, "
                                                f"real {real:.0f} px")
    finally:
        context.close()


def test_a_deep_link_past_deferred_blocks_lands_on_its_heading(page, served_site):
    page.goto(served_site + "reference/models/")
    last = page.locator(".md-typeset h3[id^='model-']").last.get_attribute("id")
    page.goto(served_site + f"reference/models/#{last}")
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(500)
    top = page.locator(f"[id='{last}']").evaluate("h => h.getBoundingClientRect().top")
    assert 0 <= top < 900 / 2, f"#{last} is at {top:.0f} px after the jump"
