"""Compact the search index after Material's search plugin has written it (issue 25).

Every visitor's first search downloads the whole index, so it carries what search needs and little else:

- each section keeps a readable head (the teaser a result shows, at most three lines) and after it only
  the words the head does not already hold, each once, without the stop words lunr drops anyway.
  Material builds its index with ``b = 0`` (no length normalisation), so a word found once in a section
  ranks that section as it did before; only repeated words lose their term-frequency weight;
- markup is dropped from the text (entities stay escaped, so no text becomes markup);
- a question's ``keys`` (what ranks it, never shown) hold its title and description whole and then the
  words of its key points, each once, and the sections of its page leave those words to it (after their
  readable heads);
- a question page's title carries its id ("Q75 · What is the KV cache?"), so a reader finds a question
  by "Q75" or "75" (the separator splits an id's letter from its digits).

The tokenizer here mirrors the site's search separator (passed in), so the words kept are the words the
browser's index would have made.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# lunr 2's English stop-word list (lunr.stopWordFilter), the words its pipeline removes before indexing.
LUNR_STOP_WORDS = frozenset("""
a able about across after all almost also am among an and any are as at be because been but by can cannot
could dear did do does either else ever every for from get got had has have he her hers him his how however
i if in into is it its just least let like likely may me might most must my neither no nor not of off often
on only or other our own rather said say says she should since so some than that the their them then there
these they this tis to too twas us wants was we were what when where which while who whom why will with
would yet you your""".split())

REPEATS = 1     # a word's occurrences kept per section: enough for term frequency to separate pages
HEAD_CHARS = 170  # the result teaser shows two or three lines; the head covers about two
TAG = re.compile(r"<[^>]+>")
QID = re.compile(r"\bQ\d+\b")           # "Q75" in a cross-link's text: the id belongs to Q75's own entry
CAMEL = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")  # the words of a CamelCase name
IS_CAMEL = re.compile(r"[A-Za-z]*[a-z][A-Z][A-Za-z]*")
SPACE = re.compile(r"\s+")


def plain(text: str) -> str:
    """Text without markup, whitespace collapsed. Entities (&lt;, &amp;) stay as they are."""
    return SPACE.sub(" ", TAG.sub(" ", text)).strip()


def head_and_rest(text: str, limit: int = HEAD_CHARS) -> tuple[str, str]:
    """Split at the last space at or before ``limit`` (never inside a word or an entity)."""
    if len(text) <= limit:
        return text, ""
    cut = text.rfind(" ", 0, limit + 1)
    cut = cut if cut > 0 else limit
    return text[:cut], text[cut:]


def camel_parts(text: str, separator: re.Pattern, seen: dict[str, int]) -> list[str]:
    """The words inside CamelCase names ("PagedAttention" -> "Paged", "Attention") not yet in ``seen``:
    the name stays one token, so "PagedAttention" finds it exactly, and "paged attention" finds it too."""
    out = []
    for word in separator.split(text):
        if IS_CAMEL.fullmatch(word or ""):
            for part in CAMEL.findall(word):
                if part.lower() not in seen and part.lower() not in LUNR_STOP_WORDS:
                    seen[part.lower()] = 1
                    out.append(part)
    return out


def fresh_words(words, count: dict[str, int], repeats: int = REPEATS) -> list[str]:
    """The words not yet held ``repeats`` times in ``count`` (case-folded), stop words left out; ``count``
    is updated with the words returned."""
    out = []
    for word in words:
        low = word.lower()
        if not low or low in LUNR_STOP_WORDS or count.get(low, 0) >= repeats:
            continue
        count[low] = count.get(low, 0) + 1
        out.append(word)
    return out


def compact_text(text: str, separator: re.Pattern, page_words: dict[str, int] | None = None,
                 repeats: int = REPEATS) -> str:
    """A section's text as the index needs it: the readable head, then each further word at most
    ``repeats`` times in all (head included), stop words left out. ``page_words`` carries the counts
    over the sections of one page: a word an earlier section of the page holds is not repeated."""
    head, rest = head_and_rest(plain(QID.sub("", text)))
    count: dict[str, int] = {} if page_words is None else page_words
    for w in separator.split(head):
        if w:
            count[w.lower()] = count.get(w.lower(), 0) + 1
    extra = fresh_words(separator.split(rest), count, repeats)
    extra += camel_parts(head + rest, separator, count)
    return head + (" … " + " ".join(extra) if extra else "")


# Spelled-out forms of the abbreviations the pages use: a reader who types the long form finds the page
# whose summary uses the short one, and the reverse.
SYNONYMS = {
    "TTFT": "time to first token", "TPOT": "time per output token", "ITL": "inter-token latency",
    "SLO": "service level objective", "SLI": "service level indicator", "SLA": "service level agreement",
    "KV": "key value", "TP": "tensor parallel", "PP": "pipeline parallel", "EP": "expert parallel",
    "MoE": "mixture of experts", "GQA": "grouped-query attention", "MLA": "multi-head latent attention",
    "HPA": "horizontal pod autoscaler", "PSI": "population stability index", "OOM": "out of memory",
}


def question_keys(title: str, description: str, key_points: tuple[str, ...]) -> str:
    """What a question is about, for the ``keys`` field: its title, description and key points, with
    the long form of each abbreviation they use. Not shown in results; it only ranks."""
    text = " ".join((title, description, *key_points))
    longs = [long for short, long in SYNONYMS.items() if re.search(rf"\b{short}\b", text)]
    shorts = [short for short, long in SYNONYMS.items() if long in text.lower()]
    parts = camel_parts(text, re.compile(r"[^\w]+"), {})
    # The title repeats here on purpose: a page whose summary never names its own topic (its title does)
    # would otherwise lose to a page whose key points repeat the query's words. The key points follow as
    # their words, each once (the field is never shown; a word the title or description also holds
    # keeps the weight of its repeat, which is what ranks a page on its own topic): about a third of
    # the index's bytes at 160 question pages were this field.
    words = fresh_words((w.strip(".") for w in re.split(r"[^\w.%-]+", plain(" ".join(key_points)))), {}, 1)
    return plain(" ".join([title, description, *words, *longs, *shorts, *parts]))


def question_ids(qid: int) -> str:
    """The ``qid`` field: "Q7 7_id", repeated. Material appends a wildcard to every query term, so "Q7"
    also matches Q70-Q79: a shorter id repeats more often (term frequency), so the exact id ranks
    first. The bare number carries a suffix that no page text holds ("7" is in many texts, which would
    make it a common, low-weight term); "7" still finds "7_id" by its prefix."""
    return " ".join([f"Q{qid}", f"{qid}_id"] * (4 - len(str(qid))))


def compact_index(index: dict, questions: dict[str, dict]) -> dict:
    """The compacted index. ``questions`` maps a question page's location ("a/b/") to its ``title``
    (labelled "Q75 · ..."), ``keys`` and ``qid`` strings, added to the page's own entry."""
    separator = re.compile(index["config"]["separator"])
    docs = []
    words: dict[str, dict[str, int]] = {}
    for doc in index["docs"]:
        page = doc["location"].partition("#")[0]
        if page not in words:
            # A question's keys (its title, description and key points) rank its own entry at a boost of
            # 100; its sections need not repeat those words after their readable heads.
            q = questions.get(page)
            words[page] = {w.lower(): 1 for w in separator.split(q["keys"]) if w} if q else {}
        page_words = words[page]
        doc = dict(doc, text=compact_text(doc["text"], separator, page_words))
        q = questions.get(doc["location"])
        if q:
            doc.update(title=q["title"], keys=q["keys"], qid=q["qid"])
        docs.append(doc)
    return dict(index, docs=docs)


def rewrite(site_dir: Path, questions: dict[str, dict]) -> None:
    """Compact ``search/search_index.json`` in a built site, in place (no index: nothing to do)."""
    path = Path(site_dir) / "search" / "search_index.json"
    if not path.is_file():
        return
    index = json.loads(path.read_text(encoding="utf-8"))
    compacted = compact_index(index, questions)
    path.write_text(json.dumps(compacted, ensure_ascii=False, separators=(",", ":")), encoding="utf-8")


# --- page weight: the whitespace Material's templates leave between tags --------------------------

_PROTECTED = re.compile(r"(<(pre|textarea|script|style)\b.*?</\2>)", re.S | re.I)
_LINE_BREAK = re.compile(r"[ \t]*\n\s*")


def collapse_whitespace(html: str) -> str:
    """Each run of white space that holds a line break becomes one line break, outside ``pre``,
    ``textarea``, ``script`` and ``style`` (whose white space can matter). A browser renders a line
    break and the run it replaces alike, so the page reads the same and weighs about 1 KB less."""
    parts = _PROTECTED.split(html)
    # split() with two groups yields: text, whole protected element, its tag name, text, ...
    return "".join(_LINE_BREAK.sub("\n", p) if i % 3 == 0 else p for i, p in enumerate(parts) if i % 3 != 2)
