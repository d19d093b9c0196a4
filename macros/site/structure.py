"""Structure check for a rendered question page (HTML of the page body, as Markdown produced it).

The contract: exactly one reference answer (``<details class="answer">``), at least two follow-ups
(``<details class="followup">``), each follow-up with a stable ``id`` of the form ``fu-<slug>``, unique on
the page, and a non-empty answer below its summary. Blocks must sit at the top level of the page body,
not inside one another.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from html.parser import HTMLParser

FOLLOWUP_ID = re.compile(r"^fu-[a-z0-9]+(?:-[a-z0-9]+)*$")
MIN_FOLLOWUPS = 2
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Block:
    kind: str  # "answer" | "followup"
    id: str | None
    summary: str = ""
    body_text: str = ""
    nested: bool = False


@dataclass
class _Open:
    block: Block
    depth: int
    in_summary: bool = False


class _Scanner(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.stack: list[_Open] = []
        self.depth = 0
        self.details_depth = 0

    def handle_starttag(self, tag, attrs):
        if tag in _VOID:
            return
        self.depth += 1
        if tag == "details":
            classes = (dict(attrs).get("class") or "").split()
            kind = "answer" if "answer" in classes else "followup" if "followup" in classes else None
            if kind:
                b = Block(kind, dict(attrs).get("id"), nested=self.details_depth > 0)
                self.blocks.append(b)
                self.stack.append(_Open(b, self.depth))
            self.details_depth += 1
        elif tag == "summary" and self.stack and self.stack[-1].depth == self.depth - 1:
            self.stack[-1].in_summary = True

    def handle_endtag(self, tag):
        if tag in _VOID:
            return
        if tag == "summary" and self.stack:
            self.stack[-1].in_summary = False
        if tag == "details":
            self.details_depth -= 1
            if self.stack and self.stack[-1].depth == self.depth:
                self.stack.pop()
        self.depth -= 1

    def handle_data(self, data):
        if not self.stack:
            return
        top = self.stack[-1]
        if top.in_summary:
            top.block.summary += data
        else:
            top.block.body_text += data


def scan(html: str) -> list[Block]:
    s = _Scanner()
    s.feed(html)
    s.close()
    return s.blocks


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
