"""Practice mode's data: what the practice page and the question pages' review line need, generated at
build time from the same front matter and rendered HTML as the pages themselves (never a second list).

Pure Python: the build hook collects each question page's rendered body (:func:`page_extract`) and
writes the two scripts (:func:`practice_scripts`); the browser code is docs/assets/javascripts/.
The data arrives as scripts, not JSON fetched at run time, because browsers refuse ``fetch()`` of local
files and the offline bundle is opened from disk.
"""

from __future__ import annotations

import html
import json
import re

from .registry import Site

DATA_SCRIPT = "assets/javascripts/practice-data.js"
FOLLOWUPS_SCRIPT = "assets/javascripts/practice-followups.js"

_ANSWER = re.compile(r'<details class="answer"')
_FOLLOWUP = re.compile(
    r'<details class="followup"[^>]*\bid="(fu-[a-z0-9-]+)"[^>]*>\s*<summary>(.*?)</summary>(.*?)</details>', re.S)
_H1 = re.compile(r"<h1\b.*?</h1>", re.S)
_TAG = re.compile(r"<[^>]+>")
_ANCHOR = re.compile(r"<a\b[^>]*>(.*?)</a>", re.S)
_BUTTON = re.compile(r"<button\b.*?</button>", re.S)
_SVG = re.compile(r"<svg\b.*?</svg>", re.S)
_IDS = re.compile(r'\s(?:id|aria-labelledby|aria-describedby)="[^"]*"')
_CODE = re.compile(r"`([^`]+)`")


def _text(fragment: str) -> str:
    return " ".join(html.unescape(_TAG.sub(" ", fragment)).split())


def _portable(fragment: str) -> str:
    """Site HTML made safe to show on another page: links become plain text (their targets are
    relative to the question page), copy-link buttons and icons go, element ids go (no clashes)."""
    out = _BUTTON.sub("", fragment)
    out = _SVG.sub("", out)
    out = _ANCHOR.sub(r"\1", out)
    out = _IDS.sub("", out)
    return out.strip()


def page_extract(body_html: str) -> dict:
    """The probe (visible text between the heading and the answer) and the follow-ups of one page."""
    start = _H1.search(body_html)
    head_end = start.end() if start else 0
    answer = _ANSWER.search(body_html)
    probe_html = body_html[head_end:answer.start()] if answer else ""
    probe_html = re.sub(r'<p class="msib-meta".*?</p>', "", probe_html, flags=re.S)
    followups = [{"id": fid, "prompt": _text(summary), "answer": _portable(inner)}
                 for fid, summary, inner in _FOLLOWUP.findall(body_html)]
    return {"probe": _text(probe_html), "followups": followups}


def key_point_html(point: str) -> str:
    """A key point (Markdown with inline code at most) as escaped HTML."""
    return _CODE.sub(r"<code>\1</code>", html.escape(point, quote=False))


def _script(var: str, payload) -> str:
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    # Inside a <script> file nothing can close a tag, but keep '</' escaped all the same.
    text = text.replace("</", "<\\/")
    return f"window.{var}={text};\n"


def practice_scripts(site: Site, extracts: dict[int, dict], urls: dict[int, str]) -> dict[str, str]:
    """{path under the site: script text} for the practice data and the follow-up answers.

    ``extracts`` maps question id -> :func:`page_extract` of its page; ``urls`` maps id -> the page's
    URL relative to the site root (as MkDocs wrote it: directory URLs online, .html offline).
    """
    scopes = []
    for part in site.parts:
        scopes.append({"key": f"part:{part.dir}", "label": part.title,
                       "ids": [q.id for q in site.questions.values() if q.section.part is part]})
        for sec in part.sections:
            ids = [q.id for q in site.section_questions(sec)]
            if ids:
                scopes.append({"key": f"section:{sec.path}", "label": f"{part.title} / {sec.label}", "ids": ids})
    questions = []
    followups = {}
    for q in site.questions.values():
        ex = extracts.get(q.id, {"probe": "", "followups": []})
        questions.append({
            "id": q.id, "title": q.title, "probe": ex["probe"], "url": urls[q.id],
            "section": q.section.label, "part": q.section.part.title, "difficulty": q.difficulty,
            "tags": list(q.tags), "points": [key_point_html(p) for p in q.key_points],
            "followups": [f["prompt"] for f in ex["followups"]],
        })
        followups[str(q.id)] = [{"id": f["id"], "answer": f["answer"]} for f in ex["followups"]]
    data = {"questions": questions, "scopes": scopes, "tags": sorted(site.tags),
            "difficulties": list(site.difficulties)}
    return {DATA_SCRIPT: _script("MSIB_PRACTICE", data), FOLLOWUPS_SCRIPT: _script("MSIB_FOLLOWUPS", followups)}
