"""The page contract's text rules: key points, the Sources section, and the two rewrites the build
applies to a question page's Markdown (key points as "In short" at the top of the answer, common
mistakes collapsed). Pure Python, tested alone; :mod:`sitebuild.hooks` applies them during the build.
"""

from __future__ import annotations

import re

KEY_POINTS_MIN, KEY_POINTS_MAX = 3, 6
KEY_POINT_WORDS_MAX = 25   # the guide asks for about 20; the build rejects a point longer than this
SOURCES_MIN = 2            # primary sources a page lists under its '## Sources' heading
SOURCES_HEADING = "## Sources"


def key_points_problems(points) -> list[str]:
    """What is wrong with a page's ``key_points`` (empty when it complies)."""
    if not isinstance(points, list) or not all(isinstance(p, str) for p in points):
        return [f"must be a list of strings (one checkable statement each), got {points!r}"]
    out = []
    if not KEY_POINTS_MIN <= len(points) <= KEY_POINTS_MAX:
        out.append(f"{len(points)} key points; a question carries {KEY_POINTS_MIN} to {KEY_POINTS_MAX}")
    for i, point in enumerate(points, 1):
        words = len(point.split())
        if not words:
            out.append(f"point {i} is empty")
        elif words > KEY_POINT_WORDS_MAX:
            out.append(f"point {i} has {words} words; at most {KEY_POINT_WORDS_MAX} (one checkable statement)")
    if len({p.strip().lower() for p in points}) != len(points):
        out.append("a point is listed twice")
    return out


_FENCE = re.compile(r"^(```|~~~)")
_LIST_ITEM = re.compile(r"^[-*+] +(.*)")
# A Markdown or autolink to an http(s) address, or a facts macro that renders one (engine_src links a
# file of the reference release's source on its tag).
_EXTERNAL_LINK = re.compile(r"\]\((https?://[^)\s]+)[^)]*\)|<(https?://[^>\s]+)>|\{\{\s*engine_src\(")


def sources_section(body: str) -> list[str] | None:
    """The list items under the page's ``## Sources`` heading (outside code fences), or None if absent."""
    lines, in_fence, start = body.splitlines(), False, None
    for i, line in enumerate(lines):
        if _FENCE.match(line.lstrip()):
            in_fence = not in_fence
        elif not in_fence and line.rstrip() == SOURCES_HEADING:
            start = i + 1
            break
    if start is None:
        return None
    items: list[str] = []
    for line in lines[start:]:
        if line.startswith("## ") or line.startswith("# "):
            break
        m = _LIST_ITEM.match(line)
        if m:
            items.append(m.group(1))
        elif items and line.startswith("  ") and line.strip():
            items[-1] += " " + line.strip()
    return items


def split_sources(body: str) -> tuple[str, str]:
    """(body before the '## Sources' section, the section to the end); ('body', '') without one."""
    lines, in_fence = body.splitlines(keepends=True), False
    for i, line in enumerate(lines):
        if _FENCE.match(line.lstrip()):
            in_fence = not in_fence
        elif not in_fence and line.rstrip() == SOURCES_HEADING:
            return "".join(lines[:i]), "".join(lines[i:])
    return body, ""


_ANSWER_OPENER = re.compile(r"^/// answer\b.*$", re.M)


def insert_key_points(body: str, points: tuple[str, ...]) -> str:
    """Put the key points at the top of the reference answer, as its 'In short' list."""
    if not points:
        return body
    m = _ANSWER_OPENER.search(body)
    if m is None:
        return body
    end = m.end()
    rest = body[end:]
    # The block's option lines (indented, right after the opener) stay attached to it.
    options = re.match(r"(?:\n(?: {4}|\t)[^\n]*\S[^\n]*)*", rest).group(0)
    items = "\n".join(f"- {p}" for p in points)
    box = f'\n\n<div class="in-short" markdown>\n\n**In short**\n\n{items}\n\n</div>\n'
    return body[:end] + options + box + rest[len(options):]


MISTAKES_HEADING = "## Common mistakes"


def collapse_mistakes(body: str) -> str:
    """Wrap the content of the 'Common mistakes' section in a collapsed block, keeping its heading
    (so the table of contents and its anchor stay); a page without the section is returned as is."""
    lines, in_fence = body.splitlines(), False
    start = end = None
    for i, line in enumerate(lines):
        if _FENCE.match(line.lstrip()):
            in_fence = not in_fence
        elif in_fence:
            continue
        elif start is None and line.rstrip() == MISTAKES_HEADING:
            start = i + 1
        elif start is not None and (line.startswith("## ") or line.startswith("# ")):
            end = i
            break
    if start is None:
        return body
    end = len(lines) if end is None else end
    inner = "\n".join(lines[start:end]).strip("\n")
    block = ["", "/// details | Show the common mistakes", "    attrs: {class: mistakes}", "", inner, "", "///", ""]
    return "\n".join(lines[:start] + block + lines[end:])


def sources_problems(body: str) -> list[str]:
    """What is wrong with a question page's Sources section (empty when it complies)."""
    items = sources_section(body)
    if items is None:
        return [f"the page has no '{SOURCES_HEADING}' section (at least {SOURCES_MIN} primary sources, "
                "each a list item with a link)"]
    out = []
    linked = [item for item in items if _EXTERNAL_LINK.search(item)]
    if len(linked) < SOURCES_MIN:
        out.append(f"{len(linked)} linked sources; at least {SOURCES_MIN} required (list items with an "
                   "http(s) link)")
    for item in items:
        if not _EXTERNAL_LINK.search(item):
            out.append(f"a source without an http(s) link: {item[:60]!r}")
    return out
