"""Browser checks of the pages changed since the last commit (``git diff HEAD`` and untracked files under
docs/), the part of ``./scripts/test --quick`` that opens pages: axe-core in both colour schemes with
every block open and at phone width, no request leaving the site, and on a question page the reference
answer collapsed until clicked and every follow-up opened by its deep link. Where no page changed (a
clean checkout, as in CI), or no question page did, the first question page stands in, so the checks
themselves always run; every page type is checked by test_accessibility.py and test_browser.py in the
whole suite."""

from __future__ import annotations

import functools

import pytest

from scripts.quickcheck import NotAGitCheckout, changed_files, changed_pages
from sitekit import ROOT, online_url
from test_accessibility import check_axe, check_axe_at_phone_width
from test_browser import assert_no_foreign_requests, check_answer_opens_on_click, check_deep_link_opens

pytestmark = pytest.mark.browser


@functools.cache
def _site():
    from sitebuild import load_site
    return load_site(ROOT / "docs")


def pages_to_check() -> list[str]:
    try:
        pages = changed_pages(changed_files(ROOT))
    except NotAGitCheckout:
        pages = []
    return pages or [_first_question()]


def _first_question() -> str:
    site = _site()
    return site.questions[min(site.questions)].src


PAGES = pages_to_check()
# The question checks run on the changed question pages, or on the first question page when none changed.
QUESTION_PAGES = [src for src in PAGES if src in _site().by_src] or [_first_question()]


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("src", PAGES)
def test_changed_page_passes_axe(src, scheme, served_site, browser):
    check_axe(online_url(served_site, src), browser, scheme, served_site)


@pytest.mark.parametrize("src", PAGES)
def test_changed_page_passes_axe_at_phone_width(src, served_site, browser):
    check_axe_at_phone_width(online_url(served_site, src), browser)


@pytest.mark.parametrize("src", QUESTION_PAGES)
def test_changed_question_opens_its_answer_and_every_follow_up(src, served_site, page):
    url = online_url(served_site, src)
    check_answer_opens_on_click(page, url)
    ids = page.eval_on_selector_all("details.followup", "els => els.map(e => e.id)")
    assert len(ids) >= 2, f"docs/{src}: {len(ids)} follow-up blocks"
    for target in ids:
        page.goto("about:blank")  # land on the page afresh, as a reader following the link does
        check_deep_link_opens(page, url, target)
    assert_no_foreign_requests(page, served_site)
