"""The real site: strict build, the page contract on every question page (checked here independently of
the build hook, with BeautifulSoup), no third-party requests in the HTML, the offline bundle, and
reproducible builds."""

from __future__ import annotations

import filecmp
import re

import pytest
from bs4 import BeautifulSoup

from sitekit import ROOT, build, make_fixture_site, page_html_path

FOLLOWUP_ID = re.compile(r"^fu-[a-z0-9]+(-[a-z0-9]+)*$")


def soup_of(path):
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


def test_strict_build_produces_home_and_every_question(built_site, registry):
    assert (built_site / "index.html").exists()
    assert registry.questions, "no question pages found"
    for q in registry.questions.values():
        assert page_html_path(built_site, q.src).exists(), q.src


def test_question_pages_honour_the_contract(built_site, registry):
    for q in registry.questions.values():
        doc = soup_of(page_html_path(built_site, q.src))
        article = doc.select_one("article.md-content__inner")
        where = f"docs/{q.src}"
        assert article.h1.get_text(strip=True).rstrip("¶") == q.title, where
        answers = article.select("details.answer")
        assert len(answers) == 1, f"{where}: {len(answers)} reference answers"
        assert not answers[0].has_attr("open"), f"{where}: the answer must start collapsed"
        body = answers[0].get_text(" ", strip=True).replace(answers[0].summary.get_text(strip=True), "", 1)
        assert len(body.split()) >= 60, f"{where}: reference answer is too short ({len(body.split())} words)"
        followups = article.select("details.followup")
        assert len(followups) >= 2, f"{where}: {len(followups)} follow-ups"
        ids = [f.get("id") for f in followups]
        assert all(i and FOLLOWUP_ID.match(i) for i in ids), f"{where}: follow-up ids {ids}"
        assert len(set(ids)) == len(ids), f"{where}: duplicate follow-up ids {ids}"
        for f in followups:
            prompt = f.summary.get_text(strip=True)
            answer = f.get_text(" ", strip=True)[len(prompt):].strip()
            assert prompt and answer, f"{where}: follow-up {f.get('id')} lacks a prompt or an answer"
            assert not f.has_attr("open"), f"{where}: follow-up {f.get('id')} must start collapsed"
        meta = doc.find("meta", attrs={"name": "description"})
        assert meta and meta["content"] == q.description, f"{where}: meta description"
        mistakes = doc.find("h2", id="common-mistakes")
        if mistakes is not None:  # collapsed, so it does not give the answer away
            block = mistakes.find_next_sibling()
            assert block.name == "details" and "mistakes" in block["class"] and not block.has_attr("open"), where
            assert block.select("li"), f"{where}: the common mistakes block is empty"


def test_related_questions_are_rendered_with_titles(built_site, registry):
    checked = 0
    for q in registry.questions.values():
        if not q.related:
            continue
        doc = soup_of(page_html_path(built_site, q.src))
        heading = doc.find("h2", id="related-questions")
        assert heading, f"docs/{q.src}: no Related questions section"
        items = heading.find_next("ul").find_all("a")
        assert [a.get_text() for a in items] == [
            f"Q{r} · {registry.questions[r].title}" for r in q.related], q.src
        checked += 1
    assert checked, "no page has related questions"


def test_no_unrendered_template_syntax_or_error_text(built_site):
    for html in built_site.rglob("*.html"):
        text = soup_of(html).select_one("article")
        if text is None:
            continue
        for code in text.find_all(["code", "pre"]):
            code.decompose()
        body = text.get_text(" ")
        for marker in ("{{", "{%", "Macro Rendering Error", "Traceback (most recent call last)", "None None"):
            assert marker not in body, f"{html.relative_to(built_site)}: {marker!r}"


THIRD_PARTY = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//(?!127\.0\.0\.1)""", re.I)


@pytest.mark.parametrize("which", ["built_site", "offline_site"])
def test_pages_reference_no_third_party_assets(which, request):
    site = request.getfixturevalue(which)
    for html in site.rglob("*.html"):
        doc = soup_of(html)
        for tag in doc.find_all(["script", "link", "img", "iframe", "source"]):
            url = tag.get("src") or tag.get("href") or ""
            if tag.name == "link" and tag.get("rel") and tag.get("rel")[0] in ("canonical", "alternate"):
                continue
            assert not re.match(r"^(https?:)?//", url), f"{html.relative_to(site)} loads {url}"
    assert "fonts.googleapis" not in (site / "index.html").read_text(encoding="utf-8")


def test_offline_bundle_is_self_contained(offline_site):
    assert (offline_site / "search" / "search_index.js").exists(), "offline search index missing"
    shim = offline_site / "assets" / "vendor" / "iframe-worker" / "shim.js"
    assert shim.exists()
    # (Material's bundle names CDN fallbacks for ResizeObserver and Mermaid, loaded only when needed;
    # the browser tests record every request and show none leaves the site.)
    for f in offline_site.rglob("*.html"):
        assert "unpkg.com" not in f.read_text(encoding="utf-8"), f
    index = (offline_site / "index.html").read_text(encoding="utf-8")
    assert 'src="assets/vendor/iframe-worker/shim.js"' in index
    # The offline build uses file names, not directory URLs, so links work from file://.
    assert 'href="tags.html"' in index


def test_online_build_keeps_directory_urls(built_site):
    index = (built_site / "index.html").read_text(encoding="utf-8")
    assert 'href="tags/"' in index
    assert "iframe-worker" not in index, "the offline shim belongs to the offline build only"


def test_macro_table_renders_inside_a_collapsed_block(tmp_path):
    """A multi-line macro output (a Markdown table) placed inside the answer block becomes a real table
    inside the collapsed <details>, not literal pipes."""
    from test_bad_input import BODY, page
    body = BODY.replace("The answer.", "The answer.\n\n{{ tag_vocabulary() }}\n")
    site = make_fixture_site(tmp_path / "src", {"deployment/inference-fundamentals/a.md": page(1, body=body)})
    proc = build(site, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = soup_of(tmp_path / "out" / "deployment" / "inference-fundamentals" / "a" / "index.html")
    table = doc.select_one("details.answer table")
    assert table is not None, "the macro's table did not render inside the answer block"
    import yaml
    vocabulary = yaml.safe_load((ROOT / "sitebuild" / "tags.yml").read_text(encoding="utf-8"))
    assert len(table.select("tbody tr")) == len(vocabulary)
    assert "|" not in doc.select_one("details.answer").get_text()


def test_two_builds_are_byte_identical(built_site, http_server, tmp_path):
    again = tmp_path / "again"
    proc = build(ROOT, again, site_url=http_server.base_url)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    first = sorted(p.relative_to(built_site) for p in built_site.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert first == second
    different = [str(p) for p in first if not filecmp.cmp(built_site / p, again / p, shallow=False)]
    assert not different, f"files differ between two builds: {different[:10]}"


def test_key_points_open_the_reference_answer(built_site, registry):
    """Contract v2: each page's key points are the 'In short' list at the top of its answer, in order."""
    checked = 0
    for q in registry.questions.values():
        if not q.key_points:
            continue
        doc = soup_of(page_html_path(built_site, q.src))
        box = doc.select_one("details.answer > .in-short")
        assert box is not None, f"docs/{q.src}: no 'In short' box at the top of the reference answer"
        items = [li.get_text(" ", strip=True) for li in box.select("li")]
        plain = [BeautifulSoup(p.replace("`", ""), "html.parser").get_text(" ", strip=True) for p in q.key_points]
        assert [" ".join(i.split()) for i in items] == [" ".join(p.split()) for p in plain], f"docs/{q.src}"
        sources = doc.find("h2", id="sources")
        assert sources is not None and len(sources.find_next("ul").select("li a[href^=http]")) >= 2, q.src
        checked += 1
    assert checked == len(registry.questions), "every question page carries key points (contract v2)"


def test_answer_html_is_the_whole_answer_below_its_summary():
    from sitebuild.structure import answer_html
    page = ('<p>intro <pre>outside</pre></p><details class="answer"><summary>Reference answer</summary>'
            '<h4 id="a">A</h4><details class="example"><summary>x</summary><pre>inner</pre></details>'
            '<pre>own</pre></details><h2 id="follow-ups">Follow-ups</h2>'
            '<details class="followup" id="fu-x"><summary>Q</summary><pre>fu</pre></details>')
    body = answer_html(page)
    assert body.startswith('<h4 id="a">') and body.endswith("<pre>own</pre>")
    assert body.count("<pre") == 2          # the nested example's code counts; the follow-up's does not
    assert answer_html("<p>no answer</p>") == ""
