"""Structure check for a rendered question page (HTML of the page body, as Markdown produced it).

The contract: exactly one reference answer (``<details class="answer">``), at least two follow-ups
(``<details class="followup">``), each follow-up with a stable ``id`` of the form ``fu-<slug>``, unique on
the page, and a non-empty answer below its summary. Blocks must sit at the top level of the page body,
not inside one another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

FOLLOWUP_ID = re.compile(r"^fu-[a-z0-9]+(?:-[a-z0-9]+)*$")
MIN_FOLLOWUPS = 2


@dataclass
class Block:
    kind: str  # "answer" | "followup"
    id: str | None
    summary: str = ""
    body_text: str = ""
    body_html: str = ""  # below the summary, nested blocks included
    nested: bool = False


_TOKEN = re.compile(r"<(/?)(details|summary)\b([^>]*)>", re.I)
_CLASS = re.compile(r'\bclass="([^"]*)"')
_ID = re.compile(r'\bid="([^"]*)"')
_TAG = re.compile(r"<[^>]+>")


def _text(html: str) -> str:
    return _TAG.sub(" ", html)


def scan(html: str) -> list[Block]:
    """The answer and follow-up blocks of a page, found by walking its <details>/<summary> tags.

    A regular-expression walk over just these two tags (not a full HTML parse): Markdown emits them
    well-formed, and this check runs on every question page of every build.
    """
    blocks: list[Block] = []
    # stack entries: [block or None, offset where its content starts, summary start, summary end,
    #                 offset after </summary>]
    stack: list[list] = []
    for m in _TOKEN.finditer(html):
        closing, tag, attrs = m.group(1), m.group(2).lower(), m.group(3)
        if tag == "details" and not closing:
            classes = (_CLASS.search(attrs).group(1) if _CLASS.search(attrs) else "").split()
            kind = "answer" if "answer" in classes else "followup" if "followup" in classes else None
            block = None
            if kind:
                id_match = _ID.search(attrs)
                block = Block(kind, id_match.group(1) if id_match else None, nested=bool(stack))
                blocks.append(block)
            stack.append([block, m.end(), None, None, None])
        elif tag == "summary" and stack and stack[-1][2] is None and not closing:
            stack[-1][2] = m.end()
        elif tag == "summary" and stack and closing and stack[-1][3] is None:
            stack[-1][3], stack[-1][4] = m.start(), m.end()
        elif tag == "details" and closing and stack:
            block, start, s_start, s_end, after_summary = stack.pop()
            if block is not None:
                if s_start is not None and s_end is not None:
                    block.summary = _text(html[s_start:s_end])
                    body = html[after_summary:m.start()]
                else:
                    body = html[start:m.start()]
                block.body_html = body
                block.body_text = _text(body)
    return blocks


def answer_html(html: str) -> str:
    """The reference answer's HTML below its summary, nested blocks included ("" when there is none)."""
    return next((b.body_html for b in scan(html) if b.kind == "answer"), "")


def check_question_html(html: str) -> list[str]:
    """Return the list of contract problems in a question page's body HTML (empty when it complies)."""
    blocks = scan(html)
    problems: list[str] = []
    answers = [b for b in blocks if b.kind == "answer"]
    followups = [b for b in blocks if b.kind == "followup"]
    if len(answers) != 1:
        problems.append(f"structure: {len(answers)} reference answers ('/// answer' blocks); exactly 1 required")
    for b in answers:
        if not b.body_text.strip():
            problems.append("structure: the reference answer is empty")
    if len(followups) < MIN_FOLLOWUPS:
        problems.append(f"structure: {len(followups)} follow-ups ('/// followup' blocks); "
                        f"at least {MIN_FOLLOWUPS} required")
    seen: set[str] = set()
    for b in followups:
        name = b.summary.strip() or "(no prompt)"
        if not b.id:
            problems.append(f"structure: follow-up {name!r} has no id (add `attrs: {{id: fu-...}}`)")
        elif not FOLLOWUP_ID.match(b.id):
            problems.append(f"structure: follow-up id {b.id!r} must look like 'fu-some-slug'")
        elif b.id in seen:
            problems.append(f"structure: follow-up id {b.id!r} is used twice")
        else:
            seen.add(b.id)
        if not b.summary.strip():
            problems.append(f"structure: follow-up {b.id!r} has no prompt")
        if not b.body_text.strip():
            problems.append(f"structure: follow-up {name!r} has an empty answer")
    for b in blocks:
        if b.nested:
            problems.append(f"structure: a '{b.kind}' block is nested inside another collapsible block")
    return problems
