"""The generated navigation: parts, sections and questions, from the question registry."""

from __future__ import annotations

from .registry import Site


def build_nav(site: Site, head: list, tail: list) -> list:
    """MkDocs ``nav``: ``head`` entries, then each part -> section -> questions, then ``tail`` entries.

    Every section folder has an ``index.md`` (the section page); question entries are titled
    'Q<id> · <nav_title or title>'.
    """
    nav = list(head)
    for part in site.parts:
        part_entries: list = [f"{part.dir}/index.md"]
        for sec in part.sections:
            entries: list = [f"{sec.path}/index.md"]
            for q in site.section_questions(sec):
                entries.append({f"{q.label} · {q.nav_title or q.title}": q.src})
            part_entries.append({sec.label: entries})
        nav.append({part.title: part_entries})
    nav.extend(tail)
    return nav
