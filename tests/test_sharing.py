"""Sharing: short links for every question, "copy link" buttons, and link-preview meta tags."""

from __future__ import annotations

import re

import pytest
from bs4 import BeautifulSoup

from sitekit import ROOT, build, first_question, h1_text, make_fixture_site, page_html_path

PUBLISHED = [int(line) for line in (ROOT / "tests" / "published_ids.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]


def test_every_published_id_still_has_a_page(registry):
    missing = [i for i in PUBLISHED if i not in registry.questions]
    assert not missing, f"published ids without a page (short links would break): {missing}"


@pytest.mark.parametrize("which, directory_urls", [("built_site", True), ("offline_site", False)])
def test_short_links_redirect_to_the_question(which, directory_urls, request, registry):
    site = request.getfixturevalue(which)
    for qid in sorted(set(PUBLISHED) | set(registry.questions)):
        q = registry.questions[qid]
        page_file = page_html_path(site, q.src, directory_urls=directory_urls)
        for short, up in ((site / "q" / str(qid) / "index.html", 2), (site / "q" / f"{qid}.html", 1)):
            assert short.exists(), f"no short link {short.relative_to(site)}"
            doc = BeautifulSoup(short.read_text(encoding="utf-8"), "html.parser")
            refresh = doc.find("meta", attrs={"http-equiv": "refresh"})["content"]
            target = refresh.split("url=", 1)[1]
            resolved = (short.parent / target)
            resolved = resolved / "index.html" if target.endswith("/") else resolved
            assert resolved.resolve() == page_file.resolve(), f"q/{qid} -> {target}"
            assert "location.hash" in doc.script.string, "the redirect must keep the #fragment"


def test_every_page_has_link_preview_tags(built_site, registry, http_server):
    by_url = {}
    for q in registry.questions.values():
        by_url[page_html_path(built_site, q.src).resolve()] = q
    pages = [p for p in built_site.rglob("*.html") if p.parts[len(built_site.parts)] != "q"]
    assert len(pages) > len(registry.questions)
    for html in pages:
        doc = BeautifulSoup(html.read_text(encoding="utf-8"), "html.parser")
        where = html.relative_to(built_site)
        tags = {m.get("property") or m.get("name"): m.get("content") for m in doc.find_all("meta")}
        for name in ("og:title", "og:description", "og:type", "twitter:card", "description"):
            assert tags.get(name), f"{where}: missing {name}"
        canonical = doc.find("link", rel="canonical")
        if html.name != "404.html":  # the 404 page is served at any address, so it has no canonical URL
            assert canonical and canonical["href"].startswith(http_server.base_url), f"{where}: canonical"
            assert tags["og:url"] == canonical["href"], f"{where}: og:url differs from canonical"
        q = by_url.get(html.resolve())
        if q:
            assert tags["og:title"] == q.title and tags["og:description"] == q.description, where
            assert tags["og:type"] == "article"


@pytest.mark.parametrize("which, directory_urls", [("built_site", True), ("offline_site", False)])
def test_copy_link_buttons_carry_the_short_link(which, directory_urls, request, registry, http_server):
    site = request.getfixturevalue(which)
    for q in registry.questions.values():
        doc = BeautifulSoup(page_html_path(site, q.src, directory_urls=directory_urls).read_text(encoding="utf-8"),
                            "html.parser")
        short = f"{http_server.base_url}q/{q.id}/"
        h1_button = doc.select_one("article h1 button.msib-copy-link")
        assert h1_button and h1_button["data-clipboard-text"] == short, q.src
        for fu in doc.select("details.followup"):
            button = fu.find_previous_sibling()
            assert button.name == "button" and "msib-copy-link" in button["class"], (q.src, fu["id"])
            assert button and button["data-clipboard-text"] == f"{short}#{fu['id']}", (q.src, fu["id"])


@pytest.mark.browser
def test_short_link_lands_on_the_page_and_anchor(served_site, page, registry):
    for q in list(registry.questions.values())[:3]:
        page.goto(f"{served_site}q/{q.id}/")
        page.wait_for_url(re.compile(re.escape(q.src[:-3]) + "/$"))
        assert h1_text(page) == q.title
        fu = page.eval_on_selector_all("details.followup", "els => els.map(e => e.id)")[0]
        page.goto(f"{served_site}q/{q.id}/#{fu}")
        page.wait_for_url(re.compile(re.escape(q.src[:-3]) + "/#" + fu + "$"))
        page.wait_for_function(f"document.getElementById('{fu}').open === true", timeout=5000)


@pytest.mark.browser
def test_short_link_works_offline(offline_site, page, registry):
    q = first_question(registry)
    page.goto((offline_site / "q" / f"{q.id}.html").as_uri())
    page.wait_for_url(re.compile(re.escape(q.src[:-3]) + r"\.html$"))
    assert h1_text(page) == q.title
    fu = page.eval_on_selector_all("details.followup", "els => els.map(e => e.id)")[-1]
    page.goto((offline_site / "q" / str(q.id) / "index.html").as_uri() + "#" + fu)
    page.wait_for_url(re.compile(re.escape(q.src[:-3]) + r"\.html#" + fu + "$"))
    page.wait_for_function(f"document.getElementById('{fu}').open === true", timeout=5000)


@pytest.mark.browser
def test_copy_link_puts_the_short_link_on_the_clipboard(served_site, browser, registry):
    context = browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=served_site.rstrip("/"))
    pg = context.new_page()
    q = first_question(registry)
    page_url = served_site + q.src[:-3] + "/"
    pg.goto(page_url)
    # This build has no public address (SITE_URL is the local test server): "copy link" copies the
    # address the reader is on, with the follow-up's anchor, never a 127.0.0.1 short link.
    pg.locator("article h1 button.msib-copy-link").click()
    assert pg.evaluate("navigator.clipboard.readText()") == page_url
    fu = pg.locator("details.followup").nth(1)
    fu_id = fu.get_attribute("id")
    pg.locator(f"button.msib-copy-link[data-clipboard-text$='#{fu_id}']").click()
    assert pg.evaluate("navigator.clipboard.readText()") == f"{page_url}#{fu_id}"
    assert fu.evaluate("d => d.open") is False, "clicking copy must not toggle the follow-up"
    # The copied link works: it opens the page with that follow-up expanded.
    pg.goto(f"{served_site}q/{q.id}/#{fu_id}")
    pg.wait_for_function(f"document.getElementById('{fu_id}').open === true", timeout=5000)
    context.close()


@pytest.mark.browser
def test_tag_page_lists_the_right_questions(served_site, page, registry):
    page.goto(served_site + "tags/")
    used = sorted({t for q in registry.questions.values() for t in q.tags})
    assert used, "no tags in use"
    for tag in used:
        hrefs = page.eval_on_selector_all(
            f"h2[id='tag:{tag}'] + ul a", "els => els.map(a => new URL(a.href).pathname)")
        # In id order, as the front matter has them.
        expected = ["/" + q.src[:-3] + "/" for q in sorted(registry.questions_with_tag(tag), key=lambda q: q.id)]
        assert hrefs == expected, f"tag {tag!r}: page lists {hrefs}, front matter says {expected}"


@pytest.mark.browser
def test_404_page_offers_search(served_site, page):
    page.goto(served_site + "404.html")
    assert "not found" in page.locator("article h1").inner_text().lower()
    page.get_by_text("Search the questions").click()
    box = page.locator("input.md-search__input")
    box.wait_for(state="visible")
    box.press_sequentially("cache", delay=30)
    page.locator(".md-search-result__item").first.wait_for(state="attached", timeout=15000)


def test_public_address_is_copied_and_previewed(tmp_path):
    """Built with a public SITE_URL, the buttons hand out the public short link (no local marker), and
    a pasted short link previews as the question: its title, description and canonical address."""
    from test_bad_input import GOOD, page
    site = make_fixture_site(tmp_path / "src", {GOOD: page(1)})
    out = tmp_path / "out"
    proc = build(site, out, site_url="https://bank.example.org/serving/")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = BeautifulSoup((out / GOOD[:-3] / "index.html").read_text(encoding="utf-8"), "html.parser")
    button = doc.select_one("article h1 button.msib-copy-link")
    assert button["data-clipboard-text"] == "https://bank.example.org/serving/q/1/"
    for rel in ("q/1/index.html", "q/1.html"):
        short = BeautifulSoup((out / rel).read_text(encoding="utf-8"), "html.parser")
        tags = {m.get("property") or m.get("name"): m.get("content") for m in short.find_all("meta")}
        assert short.title.get_text() == "Question 1?"
        assert tags["og:title"] == "Question 1?" and tags["og:description"] == "A test page."
        assert tags["description"] == "A test page." and tags["twitter:title"] == "Question 1?"
        page_url = "https://bank.example.org/serving/" + GOOD[:-3] + "/"
        assert tags["og:url"] == page_url and short.find("link", rel="canonical")["href"] == page_url


def test_report_a_mistake_opens_an_issue_on_the_configured_repository(tmp_path):
    """With REPO_URL set, each question offers "Report a mistake": a new issue on that repository with
    the question's id in the title and the page's public address in the body. A repository address
    that is not https:// fails the build with a message naming the setting."""
    from urllib.parse import parse_qs, urlsplit

    from test_bad_input import GOOD, page
    site = make_fixture_site(tmp_path / "src", {GOOD: page(1)})
    out = tmp_path / "out"
    proc = build(site, out, site_url="https://bank.example.org/", extra_env={"REPO_URL": "https://github.com/o/bank"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = BeautifulSoup((out / GOOD[:-3] / "index.html").read_text(encoding="utf-8"), "html.parser")
    link = doc.select_one("article p.msib-meta a.msib-report")
    assert link is not None and link.get_text() == "Report a mistake"
    url = urlsplit(link["href"])
    assert (url.scheme, url.netloc, url.path) == ("https", "github.com", "/o/bank/issues/new")
    fields = parse_qs(url.query)
    assert fields["title"] == ["Q1: "]
    assert "https://bank.example.org/" + GOOD[:-3] + "/" in fields["body"][0]

    bad = build(site, tmp_path / "bad", extra_env={"REPO_URL": "javascript:alert(1)"})
    assert bad.returncode != 0
    assert "extra.repository (REPO_URL) must be an https:// address" in bad.stdout + bad.stderr


def test_without_a_repository_there_is_no_report_link(built_site, registry):
    q = next(iter(registry.questions.values()))
    html = page_html_path(built_site, q.src).read_text(encoding="utf-8")
    assert "msib-meta" in html and "msib-report" not in html
