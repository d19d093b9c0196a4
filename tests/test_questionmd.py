"""The question page's Markdown stage (sitebuild/questionmd.py): the pure stage on a hand-made page, and
the Python-Markdown extension that runs it under any builder: which page it is told it converts, where
it sits among the other preprocessors, how it reports, and Zensical's way of naming the page."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import markdown
import pytest
from markdown.preprocessors import Preprocessor

from sitebuild.questionmd import PRIORITY, QuestionPageError, QuestionPageExtension, question_markdown
from sitekit import ROOT

PAGE = """Probe sentence.

/// answer | Reference answer

The answer.

///

## Common mistakes

- Mixing up the two.

## Sources

- [A primary source](https://example.org/spec), section 1.
- [Another source](https://example.org/paper), table 2.
"""


def _q(qid, related=(), src=None):
    return SimpleNamespace(id=qid, src=src or f"part/sec/q{qid}.md", title=f"Question {qid}?",
                           key_points=("First point.", "Second point.", "Third point."), related=tuple(related),
                           label=f"Q{qid}", link=f"/part/sec/q{qid}.md")


def _site(*questions):
    return SimpleNamespace(questions={q.id: q for q in questions}, by_src={q.src: q for q in questions})


Q1, Q2 = _q(1, related=[2]), _q(2)
SITE = _site(Q1, Q2)


def test_the_stage_adds_heading_in_short_related_and_puts_sources_last():
    text, problems = question_markdown(PAGE, Q1, SITE)
    assert problems == []
    assert text.startswith("# Question 1?\n\nProbe sentence.\n")
    answer = text[text.index("/// answer"):]
    assert answer.index("First point.") < answer.index("Third point.") < answer.index("The answer.")
    assert "## Common mistakes" in text and "Mixing up the two." in text
    related = text.index("## Related questions { data-search-exclude }\n\n- [Q2 · Question 2?](/part/sec/q2.md)")
    sources = text.index("## Sources { data-search-exclude }")
    assert related < sources and text.rstrip().endswith("table 2.")
    assert text.count("## Sources") == 1


def test_a_page_without_related_questions_has_no_such_section():
    text, _ = question_markdown(PAGE, Q2, SITE)
    assert "Related questions" not in text


def test_an_h1_of_its_own_is_reported_with_the_file():
    _, problems = question_markdown("# My title\n\n" + PAGE, Q2, SITE)
    assert problems == ["docs/part/sec/q2.md: title: do not write an H1; the page heading comes from the "
                        "front-matter title"]


def _convert(text, src, **config):
    ext = QuestionPageExtension(page_src=lambda md: src, site=lambda: SITE, **config)
    return markdown.Markdown(extensions=["pymdownx.blocks.details", "toc", ext]).convert(text)


def test_the_extension_renders_the_question_page_it_is_told_it_converts():
    html = _convert(PAGE, Q1.src)
    assert '<h1 id="question-1">Question 1?</h1>' in html
    assert '<a href="/part/sec/q2.md">Q2 · Question 2?</a>' in html
    assert "First point." in html and html.index("First point.") < html.index("The answer.")


def test_other_pages_pass_through_unchanged():
    plain = markdown.Markdown(extensions=["pymdownx.blocks.details", "toc"]).convert(PAGE)
    assert _convert(PAGE, "guide/other.md") == plain
    assert _convert(PAGE, None) == plain


def test_problems_go_to_the_report_callable_or_raise_by_default():
    seen = []
    _convert("# Mine\n\n" + PAGE, Q2.src, report=seen.append)
    assert len(seen) == 1 and seen[0].startswith("docs/part/sec/q2.md: title: do not write an H1")
    with pytest.raises(QuestionPageError, match="docs/part/sec/q2.md: title: do not write an H1"):
        _convert("# Mine\n\n" + PAGE, Q2.src)


class _Recorder(Preprocessor):
    def __init__(self, md, seen, name, change=None):
        super().__init__(md)
        self.seen, self.name, self.change = seen, name, change

    def run(self, lines):
        self.seen.append((self.name, "\n".join(lines)))
        return [self.change(line) for line in lines] if self.change else lines


def test_it_runs_after_a_macros_pass_and_before_snippets():
    """Zensical's macros preprocessor sits at 35 and pymdownx.snippets at 32: the stage sees the rendered
    macros (here a stand-in that fills in a word) and snippets see the stage's output."""
    seen = []
    md = markdown.Markdown(extensions=[QuestionPageExtension(page_src=lambda md: Q2.src, site=lambda: SITE)])
    md.preprocessors.register(_Recorder(md, seen, "macros", lambda s: s.replace("MACRO", "Probe")), "macros", 35)
    md.preprocessors.register(_Recorder(md, seen, "snippets"), "snippets", 32)
    md.convert(PAGE.replace("Probe", "MACRO"))
    assert 32 < PRIORITY < 35
    assert [name for name, _ in seen] == ["macros", "snippets"]
    assert seen[1][1].startswith("# Question 2?\n\nProbe sentence.")


class _ZensicalContext(Preprocessor):
    """Shaped like Zensical's rendering-context preprocessor (zensical/extensions/context.py, 0.1.3)."""

    def __init__(self, md, path):
        super().__init__(md)
        self.page = SimpleNamespace(path=path, url="x/", meta={})

    def run(self, lines):
        return lines


def test_without_a_page_source_it_reads_zensicals_rendering_context():
    md = markdown.Markdown(extensions=[QuestionPageExtension(site=lambda: SITE)])
    md.preprocessors.register(_ZensicalContext(md, Q2.src), "rendering_context", 0)
    assert md.convert(PAGE).startswith('<h1>Question 2?</h1>')
    plain = markdown.Markdown(extensions=[QuestionPageExtension(site=lambda: SITE)])
    assert not plain.convert(PAGE).startswith("<h1>"), "with no context and no page_src nothing is a question"


def test_the_default_registry_is_the_sites_own(registry):
    q = registry.questions[min(registry.questions)]
    md = markdown.Markdown(extensions=[QuestionPageExtension(docs_dir=str(ROOT / "docs"))])
    md.preprocessors.register(_ZensicalContext(md, q.src), "rendering_context", 0)
    assert md.convert((ROOT / "docs" / q.src).read_text(encoding="utf-8").split("---", 2)[2]).count("<h1>") == 1


def test_the_stage_imports_nothing_from_mkdocs():
    code = ("import sys, sitebuild.questionmd; "
            "found = sorted(m for m in sys.modules if m.split('.')[0] in ('mkdocs', 'material', 'properdocs')); "
            "print(found); sys.exit(1 if found else 0)")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
