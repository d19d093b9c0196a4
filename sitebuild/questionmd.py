"""The question page's Markdown stage as a Python-Markdown extension, so that it runs under any builder
that runs Python-Markdown extensions (MkDocs, ProperDocs, Zensical), not only through MkDocs' hooks.

The stage (:func:`question_markdown`, pure): the heading from the front-matter title, the key points as
"In short" at the top of the reference answer, common mistakes collapsed, the related questions listed
with their titles, and the Sources section last, the two lists kept out of the search index. A page
whose Markdown opens with its own H1 is reported.

The extension (:class:`QuestionPageExtension`) runs the stage as a preprocessor, after the macros
(Zensical registers its macros preprocessor at 35; under MkDocs they run before Markdown) and before
pymdownx.snippets (32). It needs two things from the builder: which page is being converted
(``page_src``: the Markdown instance to a docs-relative source path) and where problems go
(``report``). The MkDocs hooks pass both (sitebuild/hooks.py); without them it reads the page from
Zensical's rendering-context preprocessor (``rendering_context``, whose ``page.path`` is the
docs-relative source in Zensical 0.0.73 to 0.1.3) and raises on a problem.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from markdown import Extension, Markdown
from markdown.preprocessors import Preprocessor

from sitebuild.contract import SOURCES_HEADING, collapse_mistakes, insert_key_points, split_sources
from sitebuild.registry import Site, load_site

PRIORITY = 34  # below Zensical's macros (35), above pymdownx.snippets (32)
SEARCH_EXCLUDE = " { data-search-exclude }"


class QuestionPageError(ValueError):
    """A question page breaks the contract in a way only its Markdown shows (an H1 of its own)."""


def question_markdown(markdown: str, q, site: Site) -> tuple[str, list[str]]:
    """(the page's Markdown as the site renders it, the problems found) for the question ``q``."""
    problems = []
    first = markdown.lstrip().splitlines()[0] if markdown.strip() else ""
    if first.startswith("# "):
        problems.append(f"docs/{q.src}: title: do not write an H1; the page heading comes "
                        "from the front-matter title")
    body, sources = split_sources(insert_key_points(markdown.rstrip(), q.key_points))
    body = collapse_mistakes(body)
    lines = [f"# {q.title}", "", body.rstrip(), ""]
    if q.related:
        # Lists of other pages' titles and of source links: kept out of the search index, where they
        # would make every page match every other page's topic and bloat the index.
        lines += ["## Related questions" + SEARCH_EXCLUDE, ""]
        for rid in q.related:
            r = site.questions[rid]
            lines.append(f"- [{r.label} · {r.title}]({r.link})")
        lines.append("")
    if sources:
        lines += [sources.rstrip().replace(SOURCES_HEADING, SOURCES_HEADING + SEARCH_EXCLUDE, 1), ""]
    return "\n".join(lines), problems


def zensical_page_src(md: Markdown) -> str | None:
    """The page Zensical is converting, from its rendering-context preprocessor; None elsewhere."""
    if "rendering_context" not in md.preprocessors:
        return None
    page = getattr(md.preprocessors["rendering_context"], "page", None)
    return getattr(page, "path", None)


def raise_problem(problem: str) -> None:
    raise QuestionPageError(problem)


class _QuestionPreprocessor(Preprocessor):
    def __init__(self, md: Markdown, ext: QuestionPageExtension):
        super().__init__(md)
        self.ext = ext

    def run(self, lines: list[str]) -> list[str]:
        src = self.ext.getConfig("page_src")(self.md)
        site = self.ext.site()
        q = site.by_src.get(src) if src else None
        if q is None:
            return lines
        text, problems = question_markdown("\n".join(lines), q, site)
        for problem in problems:
            self.ext.getConfig("report")(problem)
        return text.split("\n")


class QuestionPageExtension(Extension):
    def __init__(self, **kwargs):
        self.config = {
            "page_src": [zensical_page_src, "callable: Markdown instance -> docs-relative source, or None"],
            "report": [raise_problem, "callable: called with each problem found on a page"],
            # Not None: Python-Markdown reads a None default as a boolean option.
            "site": ["", "callable: () -> the question registry; empty: load_site(docs_dir)"],
            "docs_dir": ["docs", "the docs directory, for the default registry"],
        }
        super().__init__(**kwargs)
        self._site: Site | None = None

    def site(self) -> Site:
        getter: Callable[[], Site] | str = self.getConfig("site")
        if callable(getter):
            return getter()
        if self._site is None:
            self._site = load_site(Path(self.getConfig("docs_dir")))
        return self._site

    def extendMarkdown(self, md: Markdown) -> None:
        md.preprocessors.register(_QuestionPreprocessor(md, self), "msib_question_page", PRIORITY)


def makeExtension(**kwargs) -> QuestionPageExtension:
    return QuestionPageExtension(**kwargs)
