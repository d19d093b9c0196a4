"""Site macros: lists generated from the question registry (never typed by hand).

Each function returns Markdown. Links are docs-absolute (``/part/section/page.md``); MkDocs validates
them and rewrites them relative, so they work in the online and the offline build alike.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Callable

from macros.render.blocks import deferred_block

from .registry import Site, load_site

CHECKLIST_ITEM_REM = 2.2  # height of one checklist line on a phone (titles wrap), for the placeholder


def _question_row(q) -> str:
    tags = ", ".join(q.tags)
    return f"| [{q.label}]({q.link}) | [{q.title}]({q.link}) | {q.difficulty} | {tags} |"


def _question_table(questions) -> str:
    rows = ["| ID | Question | Level | Tags |", "|---|---|---|---|"]
    rows += [_question_row(q) for q in questions]
    return "\n".join(rows)


def site_macros(docs_dir: str, current_src: Callable[[], str]) -> dict[str, Callable[..., str]]:
    """Macros bound to the site under ``docs_dir``; ``current_src`` returns the calling page's path."""
    cache: dict[str, Site] = {}

    def site() -> Site:
        if "site" not in cache:
            cache["site"] = load_site(docs_dir)
        return cache["site"]

    def here_dir() -> str:
        return str(PurePosixPath(current_src()).parent)

    def section_index() -> str:
        """On a section's index.md: the table of its questions."""
        s = site()
        sec = s.section_for_dir(here_dir())
        if sec is None:
            raise ValueError(f"section_index() belongs on a section's index.md, not on {current_src()}")
        qs = s.section_questions(sec)
        if not qs:
            return "_No questions in this section yet._"
        return f"{len(qs)} questions.\n\n" + _question_table(qs)

    def part_index() -> str:
        """On a part's index.md: each section with its question count and questions."""
        s = site()
        part = s.part_for_dir(here_dir())
        if part is None:
            raise ValueError(f"part_index() belongs on a part's index.md, not on {current_src()}")
        out = []
        for sec in part.sections:
            qs = s.section_questions(sec)
            out.append(f"## [{sec.label}](/{sec.path}/index.md)\n")
            n = len(qs)
            out.append(f"{n} question{'s' if n != 1 else ''}.\n" if n else "_None written yet._\n")
            out.extend(f"- [{q.label} · {q.title}]({q.link})" for q in qs)
            out.append("")
        return "\n".join(out)

    def parts_overview() -> str:
        """Home page: per part, how many of its planned questions are written, then each section that
        has questions, with their titles; sections still empty are named in one line, not as boxes."""
        s = site()
        out = []
        for part in s.parts:
            total = sum(len(s.section_questions(sec)) for sec in part.sections)
            out.append(f"### [{part.title}](/{part.dir}/index.md)\n")
            out.append(f"{part.summary} **{total} of {part.planned} questions written.**\n")
            empty = []
            for sec in part.sections:
                qs = s.section_questions(sec)
                if not qs:
                    empty.append(sec.label)
                    continue
                out.append(f"**[{sec.label}](/{sec.path}/index.md)** ({len(qs)})\n")
                out.extend(f"- [{q.label} · {q.title}]({q.link})" for q in qs)
                out.append("")
            if empty:
                out.append(f"_Not written yet: {'; '.join(empty)}._\n")
        return "\n".join(out)

    def written_count() -> str:
        """'N of M': questions written of those the manifest plans, over all parts."""
        s = site()
        return f"{len(s.questions)} of {sum(p.planned for p in s.parts)}"

    def question_link(qid: int) -> str:
        """'[Q75 · title](link)' for a question id; an unknown id is an error."""
        s = site()
        if qid not in s.questions:
            raise ValueError(f"no question with id {qid!r} (known ids: {min(s.questions)}..{max(s.questions)})")
        q = s.questions[qid]
        return f"[{q.label} · {q.title}]({q.link})"

    def tag_vocabulary() -> str:
        """The controlled tag vocabulary with descriptions and usage counts."""
        s = site()
        rows = ["| Tag | Meaning | Questions |", "|---|---|---|"]
        for tag, meaning in s.tags.items():
            rows.append(f"| `{tag}` | {meaning} | {len(s.questions_with_tag(tag))} |")
        return "\n".join(rows)

    def section_by_path(path: str):
        s = site()
        sec = s.section_for_dir(path)
        if sec is None:
            valid = ", ".join(sec.path for part in s.parts for sec in part.sections)
            raise ValueError(f"unknown section {path!r} (sections: {valid})")
        return s, sec

    def section_checklist(path: str) -> str:
        """A task list of one section's questions, e.g. section_checklist("deployment/llm-inference")."""
        s, sec = section_by_path(path)
        qs = s.section_questions(sec)
        head = f"**[{sec.label}](/{sec.path}/index.md)** ({len(qs)} questions)\n\n"
        if not qs:
            return head + "_No questions in this section yet._"
        return head + "\n".join(f"- [ ] [{q.label} · {q.title}]({q.link})" for q in qs)

    def knowledge_map() -> str:
        """Every tag in use, with its questions as a checklist: a self-assessment map."""
        s = site()
        out = []
        for tag, meaning in s.tags.items():
            qs = s.questions_with_tag(tag)
            if not qs:
                continue
            out.append(f"## {tag} {{ #topic-{tag} }}\n\n{meaning} ({len(qs)} questions)\n")
            # 600 checklist items in all: each topic's list is laid out when near the viewport.
            items = "\n".join(f"- [ ] [{q.label} · {q.title}]({q.link})" for q in qs)
            out.append(deferred_block(items, CHECKLIST_ITEM_REM * len(qs)))
            out.append("")
        return "\n".join(out)

    def topics_overview() -> str:
        """Home page: a way in by topic: each tag in use with its question count, linked to its questions."""
        s = site()
        items = [(tag, len(s.questions_with_tag(tag))) for tag in s.tags]
        return " · ".join(f"[{tag}](/guide/knowledge-map.md#topic-{tag}) ({n})" for tag, n in items if n)

    def difficulty_levels() -> str:
        s = site()
        return "\n".join(f"- `{k}`: {v}" for k, v in s.difficulties.items())

    return {
        "section_index": section_index,
        "part_index": part_index,
        "parts_overview": parts_overview,
        "written_count": written_count,
        "question_link": question_link,
        "tag_vocabulary": tag_vocabulary,
        "difficulty_levels": difficulty_levels,
        "section_checklist": section_checklist,
        "knowledge_map": knowledge_map,
        "topics_overview": topics_overview,
    }
