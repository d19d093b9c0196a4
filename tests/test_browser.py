"""Headless Chromium (Debian's /usr/bin/chromium) through Playwright, on the online build served over
HTTP on 127.0.0.1 and on the offline build opened from file://. These tests never skip: a missing
browser is a failure (conftest.browser_launch_args)."""

from __future__ import annotations

import re
import pytest

from sitekit import ROOT, first_question, foreign_requests, h1_text

pytestmark = pytest.mark.browser
ARTIFACTS = ROOT / "tests" / ".artifacts"


@pytest.fixture(params=["online", "offline"])
def site(request, served_site, offline_site):
    """(mode, function mapping a docs source path to its URL, allowed URL prefix)."""
    if request.param == "online":
        return "online", (lambda src: served_site + (src[:-3] + "/" if not src.endswith("index.md")
                                                     else src[:-8])), served_site
    root = offline_site.as_uri() + "/"
    return "offline", (lambda src: root + src[:-3] + ".html"), root


def search_word(title: str) -> str:
    """The longest word of the title: specific enough that search should find the page by it."""
    return max(re.findall(r"[A-Za-z]{4,}", title), key=len).lower()


def assert_no_foreign_requests(pg, allowed: str):
    foreign = foreign_requests(pg.requests, allowed)
    assert not foreign, f"requests left the site: {foreign}"
    assert pg.requests, "no request was recorded at all"


def check_answer_opens_on_click(page, url: str) -> None:
    """The page's one reference answer starts collapsed and opens on a click on its summary."""
    page.goto(url)
    answer = page.locator("details.answer")
    assert answer.count() == 1
    assert answer.evaluate("d => d.open") is False
    body = answer.locator(":scope > :not(summary)").first
    assert not body.is_visible()
    answer.locator("summary").click()
    assert answer.evaluate("d => d.open") is True
    body.wait_for(state="visible")


def check_deep_link_opens(page, url: str, target: str) -> None:
    """``url#target`` opens the follow-up block ``target`` and leaves the reference answer collapsed."""
    page.goto(url + "#" + target)
    block = page.locator(f"details#{target}")
    page.wait_for_function(f"document.getElementById('{target}').open === true", timeout=5000)
    assert block.locator(":scope > :not(summary)").first.is_visible()
    # Only the linked block opens; the reference answer stays collapsed.
    assert page.locator("details.answer").evaluate("d => d.open") is False


def test_answer_is_collapsed_then_opens_on_click(site, page, registry):
    mode, url_of, allowed = site
    check_answer_opens_on_click(page, url_of(first_question(registry).src))
    if mode == "online":
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "question-page.png"))
    assert_no_foreign_requests(page, allowed)


def test_search_finds_the_page_by_typing(site, page, registry):
    mode, url_of, allowed = site
    q = first_question(registry)
    page.goto(url_of("index.md"))
    page.locator("label.md-search__icon[for='__search']").first.click() if not page.locator(
        "input.md-search__input").is_visible() else page.locator("input.md-search__input").click()
    box = page.locator("input.md-search__input")
    box.press_sequentially(search_word(q.title), delay=40)
    hit = page.locator(".md-search-result__item a", has_text=q.title).first
    hit.wait_for(state="attached", timeout=15000)
    hit.click()
    page.wait_for_load_state()
    assert h1_text(page) == q.title
    assert_no_foreign_requests(page, allowed)


def test_copy_link_icons_render_and_take_no_extra_space(site, page, registry):
    mode, url_of, allowed = site
    page.goto(url_of(first_question(registry).src))
    defs = page.locator(".msib-icon-defs")
    assert defs.count() == 1
    box = defs.bounding_box()
    assert box is None or (box["width"] == 0 and box["height"] == 0), box
    icon = page.locator("article h1 button.msib-copy-link svg").bounding_box()
    assert icon and icon["width"] > 0 and icon["height"] > 0, "the copy-link icon does not render"
    # The heading sits at the top of the article, not pushed down by anything invisible.
    article_top = page.locator("article").bounding_box()["y"]
    assert page.locator("article h1").bounding_box()["y"] - article_top < 120


def test_dark_mode_toggle(site, page, registry):
    mode, url_of, allowed = site
    page.goto(url_of(first_question(registry).src))
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "default"
    page.locator("label.md-header__button[title='Switch to dark mode']").click()
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    page.locator("label.md-header__button[title='Switch to light mode']").click()
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "default"
    assert_no_foreign_requests(page, allowed)


def test_deep_link_opens_the_follow_up(site, page, registry):
    mode, url_of, allowed = site
    for q in list(registry.questions.values())[:3]:
        page.goto(url_of(q.src))
        ids = page.eval_on_selector_all("details.followup", "els => els.map(e => e.id)")
        check_deep_link_opens(page, url_of(q.src), ids[-1])
    assert_no_foreign_requests(page, allowed)
