"""MkDocs hooks (``hooks:`` in mkdocs.yml): the page contract, the generated navigation, the related
questions and the short links.

The logic lives in the rest of :mod:`sitebuild` (pure Python, tested alone); this file only connects
it to MkDocs events and turns contract violations into build errors that name the file and the field.
MkDocs loads it by path; its imports resolve because the project is installed (``pip install -e .``).
"""

from __future__ import annotations

import re
from pathlib import Path

from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File

from sitebuild import deck, lcbundle, searchindex
from sitebuild.calculator import CALCULATOR_PAGE, DATA_SCRIPT, CalculatorExportError, calculator_script
from sitebuild.drills import DATA_SCRIPT as DRILLS_SCRIPT
from sitebuild.drills import DRILLS_PAGE, REF_PAGES, DrillExportError, drills_script
from sitebuild.nav import build_nav
from sitebuild.practice import page_extract, practice_scripts
from sitebuild.questionmd import QuestionPageExtension
from sitebuild.registry import SiteError, load_site
from sitebuild.shortlinks import (SHORT_LINK_DIR, add_copy_link_buttons, icon_symbol, short_link_url,
                                  write_short_links)
from sitebuild.structure import check_question_html

# The nav entry in mkdocs.yml that is replaced by the generated question navigation.
NAV_PLACEHOLDER = "QUESTIONS"

_state: dict = {"site": None, "problems": []}


def _link_icon() -> str:
    """Material's own 'link-variant' icon, read from the installed theme."""
    if "icon" not in _state:
        import material
        path = Path(material.__file__).parent / "templates" / ".icons" / "material" / "link-variant.svg"
        _state["icon"] = path.read_text(encoding="utf-8").strip()
    return _state["icon"]


def on_config(config):
    try:
        site = load_site(config.docs_dir)
    except SiteError as exc:
        raise PluginError(str(exc)) from None
    repo = (config.extra or {}).get("repository") or ""
    if repo and not re.fullmatch(r"https://[^\s\"'<>]+", repo):
        raise PluginError(f"mkdocs.yml: extra.repository (REPO_URL) must be an https:// address, got {repo!r}")
    _state["site"] = site
    _state["problems"] = []
    try:  # before any page is built: a catalog field the calculator cannot size fails the build at once
        _state["calculator"] = calculator_script()
    except CalculatorExportError as exc:
        raise PluginError(str(exc)) from None
    _state["extracts"], _state["urls"] = {}, {}
    nav = list(config.nav or [])
    if NAV_PLACEHOLDER not in nav:
        raise PluginError(f"mkdocs.yml: nav: the entry '{NAV_PLACEHOLDER}' marks where the generated "
                          "question navigation goes; it is missing")
    i = nav.index(NAV_PLACEHOLDER)
    config.nav = build_nav(site, nav[:i], nav[i + 1:])
    _state["page_src"] = None
    config.markdown_extensions = [e for e in config.markdown_extensions if not isinstance(e, QuestionPageExtension)]
    config.markdown_extensions.append(QuestionPageExtension(
        page_src=lambda md: _state["page_src"], report=_state["problems"].append, site=lambda: _state["site"]))
    return config


def _question(page):
    site = _state["site"]
    return site.by_src.get(page.file.src_uri) if site else None


def on_page_markdown(markdown, page, config, files):
    # The question page's Markdown stage runs inside Markdown (sitebuild/questionmd.py, added to the
    # extensions in on_config); it learns here which page is converted, until on_page_content.
    _state["page_src"] = page.file.src_uri
    return markdown


def on_page_content(html, page, config, files):
    _state["page_src"] = None
    if page.file.src_uri == CALCULATOR_PAGE:  # the results' copy-link buttons use the page's icon symbol
        return icon_symbol(_link_icon())[0] + html
    q = _question(page)
    if q is not None:
        for problem in check_question_html(html):
            _state["problems"].append(f"docs/{q.src}: {problem}")
        html = add_copy_link_buttons(html, short_link_url(config.site_url, q.id), _link_icon())
        html = _add_meta_line(html, q, page, files, config)
        _state["extracts"][q.id] = page_extract(html)
        _state["urls"][q.id] = page.url
    return html


PRACTICE_PAGE = "practice.md"


def report_link(page, q, config) -> str:
    """' · Report a mistake', a new issue on the repository named by REPO_URL (extra.repository), with
    the question and the page's address filled in; nothing when no repository is configured."""
    from html import escape
    from urllib.parse import urlencode
    repo = (config.get("extra") or {}).get("repository") or ""
    if not repo:
        return ""
    address = config.site_url.rstrip("/") + "/" + page.url
    body = f"Page: {address}\n\nWhat is wrong, and the source that shows it:\n"
    query = urlencode({"title": f"{q.label}: ", "body": body})
    href = escape(f"{repo.rstrip('/')}/issues/new?{query}")
    return f' · <a class="msib-report" href="{href}" rel="nofollow">Report a mistake</a>'


def _add_meta_line(html, q, page, files, config):
    """Under the heading: id, module or theme, difficulty, this browser's review state, 'practice this'."""
    from mkdocs.utils import get_relative_url
    practice = files.get_file_from_path(PRACTICE_PAGE)
    link = ""
    if practice is not None:
        href = get_relative_url(practice.url, page.url)
        link = f' · <a href="{href}#q={q.id}">Practice this</a>'
    verified = ""
    if q.verified is not None:
        verified = (f' · <span class="msib-verified">verified <time datetime="{q.verified.isoformat()}">'
                    f'{q.verified.day} {q.verified:%b %Y}</time></span>')
    report = report_link(page, q, config)
    # The review state (filled in by site.js from this browser's progress) has a line of its own,
    # reserved before the script runs, so filling it in never moves the page (layout shift).
    line = (f'<p class="msib-meta" data-search-exclude>{q.label} · {q.section.label} · {q.difficulty}{verified}'
            f'{link}{report}<span class="msib-review" data-qid="{q.id}"></span></p>')
    end = html.find("</h1>")
    return html if end < 0 else html[: end + 5] + line + html[end + 5:]


def on_post_build(config):
    site, files = _state["site"], _state.get("files")
    # Runs after the search plugin has written its index (hooks follow the plugins) and before the
    # offline plugin inlines it (priority -100).
    searchindex.rewrite(Path(config.site_dir), {
        files.get_file_from_path(q.src).url: {
            "title": f"{q.label} · {q.title}", "qid": searchindex.question_ids(q.id),
            "keys": searchindex.question_keys(q.title, q.description, q.key_points)}
        for q in site.questions.values()})
    if files.get_file_from_path(PRACTICE_PAGE) is not None:
        for rel, text in practice_scripts(site, _state["extracts"], _state["urls"]).items():
            out = Path(config.site_dir) / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, encoding="utf-8")
    if files.get_file_from_path(CALCULATOR_PAGE) is not None:
        out = Path(config.site_dir) / DATA_SCRIPT
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(_state["calculator"], encoding="utf-8")
    if files.get_file_from_path(DRILLS_PAGE) is not None:
        out = Path(config.site_dir) / DRILLS_SCRIPT
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(_state["drills"], encoding="utf-8")
    write_short_links(Path(config.site_dir), site.questions.values(), config.site_url,
                      lambda q: files.get_file_from_path(q.src).url)


def on_files(files, config):
    for f in files:
        if f.src_uri.startswith(SHORT_LINK_DIR + "/"):
            raise PluginError(f"docs/{f.src_uri}: docs/{SHORT_LINK_DIR}/ is reserved for the generated short links")
    _state["files"] = files
    site = _state["site"]
    try:
        generated = deck.deck_files(site, config.docs_dir, lambda q: short_link_url(config.site_url, q.id),
                                    deck.build_time())
    except ValueError as exc:
        raise PluginError(f"flash-card deck: {exc}") from None
    try:
        bundles = lcbundle.bundle_files(site.questions)  # only for live-coding pages in this site
    except (ValueError, OSError, SyntaxError) as exc:
        raise PluginError(f"live-coding practice bundles: {exc}") from None
    for rel, content in {**generated, **bundles}.items():
        if files.get_file_from_path(rel) is not None:
            raise PluginError(f"docs/{rel}: reserved for a generated download (flash-card deck or live-coding bundle)")
        files.append(File.generated(config, rel, content=content))
    return files


def on_env(env, config, files):
    # Every page has been converted by now and none has been written: fail before a half-built site exists.
    if _state["problems"]:
        raise PluginError("page contract violated:\n  " + "\n  ".join(_state["problems"]))
    if files.get_file_from_path(DRILLS_PAGE) is not None:
        site = _state["site"]
        questions = {q.id: (files.get_file_from_path(q.src).url, q.title) for q in site.questions.values()}
        pages = {src: f.url for src in REF_PAGES.values() if (f := files.get_file_from_path(src)) is not None}
        try:
            _state["drills"] = drills_script(questions, pages)
        except DrillExportError as exc:
            raise PluginError(str(exc)) from None
    return env


def on_post_page(output, page, config):
    return searchindex.collapse_whitespace(output)
