"""The flash-card deck: one note per question page, as an Anki package (.apkg) and as a tab-separated
text file that Anki imports and any spreadsheet reads.

A note's front is the question and what the interviewer is probing; its back is the key points, the
page description and the question's short link. Tags name the part, the module or theme, the page's
tags and its difficulty (``part::deployment``, ``module::01``, ``tag::kv-cache``, ``difficulty::advanced``).

Identities come from the question ids: a note's ``guid`` is ``msib-q<id>``, and the note
type and deck ids are constants. Re-importing a newer deck therefore updates the notes (Anki matches
notes by guid and keeps the cards and their review history) instead of adding duplicates.

The package follows Anki's legacy collection format (schema 11: ``collection.anki2`` with the ``col``,
``notes``, ``cards``, ``revlog`` and ``graves`` tables, plus a ``media`` file), which every Anki release
since 2.1 imports. Output is deterministic: every timestamp is the build time passed in (from
``SOURCE_DATE_EPOCH`` in reproducible builds), rows are in id order, and zip entries carry fixed dates.

Pure Python (standard library and the ``markdown`` package); nothing here imports MkDocs.
"""

from __future__ import annotations

import csv
import hashlib
import html
import io
import json
import os
import re
import sqlite3
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import markdown as _markdown

from .registry import Question, Site, split_front_matter

DECK_NAME = "Model Serving Interview Bank"
DOWNLOAD_DIR = "downloads"
APKG_NAME = "model-serving-interview-bank.apkg"
TEXT_NAME = "model-serving-interview-bank.txt"
# Fixed identities: changing any of these makes Anki treat a new deck as a different one.
MODEL_ID = 1767225600001
DECK_ID = 1767225600002
NOTE_ID_BASE = 1767225600000_000  # note id = base + question id; card id = note id (one card per note)
GUID_PREFIX = "msib-q"
FIELDS = ("Question", "Probe", "Key points", "Summary", "Link")
FIELD_SEP = "\x1f"

_ANSWER = re.compile(r"^///\s*answer\b", re.M)
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_TAG = re.compile(r"<[^>]+>")


@dataclass(frozen=True)
class Note:
    qid: int
    guid: str
    fields: tuple[str, ...]  # in FIELDS order, HTML
    tags: tuple[str, ...]

    @property
    def front(self) -> str:
        return f"{self.fields[0]}{self.fields[1]}"

    @property
    def back(self) -> str:
        return f"{self.fields[2]}{self.fields[3]}{self.fields[4]}"


def note_guid(qid: int) -> str:
    """The note's permanent identity, ``msib-q<id>``. Anki matches notes on import by this string alone
    (its own guids are random; any string works); letters, digits and a hyphen need no quoting in the
    text export, and a guid never starts with ``#``, which Anki's text import reads as a comment."""
    return f"{GUID_PREFIX}{qid}"


def probe_markdown(page_text: str, where: str = "page") -> str:
    """What the interviewer is probing: the visible text between the front matter and ``/// answer``,
    with Markdown links reduced to their text and HTML comments removed."""
    _, body = split_front_matter(page_text)
    m = _ANSWER.search(body)
    if m is None:
        raise ValueError(f"{where}: no '/// answer' block, so the deck has no probe for it")
    probe = _COMMENT.sub("", body[: m.start()]).strip()
    if not probe:
        raise ValueError(f"{where}: no text before '/// answer' (the probe)")
    return _MD_LINK.sub(r"\1", probe)


def _html_of(md_text: str) -> str:
    """Markdown to one-line HTML (Anki's text import reads a line per note)."""
    out = _markdown.markdown(md_text, output_format="html")
    return re.sub(r"\s*\n\s*", " ", out).strip()


def note_tags(q: Question) -> tuple[str, ...]:
    sec = q.section
    field = sec.part.section_field
    key = f"{sec.key:02d}" if isinstance(sec.key, int) else str(sec.key)
    tags = [f"part::{sec.part.key}", f"{field}::{key}", f"difficulty::{q.difficulty}"]
    tags += [f"tag::{t}" for t in q.tags]
    return tuple(sorted(tags))


def build_notes(site: Site, docs_dir: str | Path, link_for) -> list[Note]:
    """One note per question in id order; ``link_for(question)`` gives the URL the back links to."""
    docs = Path(docs_dir)
    notes = []
    for q in site.questions.values():
        probe = probe_markdown((docs / q.src).read_text(encoding="utf-8"), f"docs/{q.src}")
        url = html.escape(link_for(q), quote=True)
        fields = (
            f"<b>{html.escape(q.label)} · {html.escape(q.title)}</b>",
            f'<div class="probe">{_html_of(probe)}</div>',
            _html_of("\n".join(f"- {p}" for p in q.key_points)) if q.key_points else "",
            f'<p class="summary">{html.escape(q.description)}</p>',
            f'<p><a href="{url}">{url}</a></p>',
        )
        notes.append(Note(q.id, note_guid(q.id), fields, note_tags(q)))
    return notes


# --- the Anki package -------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE col (id integer primary key, crt integer not null, mod integer not null, scm integer not null,
  ver integer not null, dty integer not null, usn integer not null, ls integer not null, conf text not null,
  models text not null, decks text not null, dconf text not null, tags text not null);
CREATE TABLE notes (id integer primary key, guid text not null, mid integer not null, mod integer not null,
  usn integer not null, tags text not null, flds text not null, sfld integer not null, csum integer not null,
  flags integer not null, data text not null);
CREATE TABLE cards (id integer primary key, nid integer not null, did integer not null, ord integer not null,
  mod integer not null, usn integer not null, type integer not null, queue integer not null, due integer not null,
  ivl integer not null, factor integer not null, reps integer not null, lapses integer not null,
  left integer not null, odue integer not null, odid integer not null, flags integer not null,
  data text not null);
CREATE TABLE revlog (id integer primary key, cid integer not null, usn integer not null, ease integer not null,
  ivl integer not null, lastIvl integer not null, factor integer not null, time integer not null,
  type integer not null);
CREATE TABLE graves (usn integer not null, oid integer not null, type integer not null);
CREATE INDEX ix_notes_usn on notes (usn);
CREATE INDEX ix_cards_usn on cards (usn);
CREATE INDEX ix_revlog_usn on revlog (usn);
CREATE INDEX ix_cards_nid on cards (nid);
CREATE INDEX ix_cards_sched on cards (did, queue, due);
CREATE INDEX ix_revlog_cid on revlog (cid);
CREATE INDEX ix_notes_csum on notes (csum);
"""

_CSS = (".card { font-family: system-ui, sans-serif; font-size: 18px; text-align: left; color: black; "
        "background-color: white; max-width: 40em; margin: 0 auto; }\n"
        ".nightMode .card, .night_mode .card { color: #eee; background-color: #222; }\n"
        ".probe { color: #555; } .nightMode .probe, .night_mode .probe { color: #bbb; }\n")
_QFMT = "{{Question}}{{Probe}}"
_AFMT = '{{FrontSide}}<hr id="answer">{{Key points}}{{Summary}}{{Link}}'


def _note_type(now: int) -> dict:
    return {
        "id": MODEL_ID, "name": f"{DECK_NAME} question", "type": 0, "mod": now, "usn": -1, "sortf": 0,
        "did": DECK_ID, "tags": [], "vers": [], "css": _CSS, "latexPre": "", "latexPost": "",
        "latexsvg": False, "req": [[0, "any", [0, 1]]],
        "flds": [{"name": n, "ord": i, "sticky": False, "rtl": False, "font": "Arial", "size": 20,
                  "media": []} for i, n in enumerate(FIELDS)],
        "tmpls": [{"name": "Question", "ord": 0, "qfmt": _QFMT, "afmt": _AFMT, "did": None,
                   "bqfmt": "", "bafmt": ""}],
    }


def _deck(deck_id: int, name: str, now: int, desc: str = "") -> dict:
    return {"id": deck_id, "name": name, "desc": desc, "mod": now, "usn": -1, "collapsed": False,
            "dyn": 0, "conf": 1, "extendNew": 10, "extendRev": 50, "newToday": [0, 0], "revToday": [0, 0],
            "lrnToday": [0, 0], "timeToday": [0, 0]}


_DCONF = {"1": {"id": 1, "name": "Default", "mod": 0, "usn": 0, "maxTaken": 60, "autoplay": True, "timer": 0,
                "replayq": True, "dyn": False,
                "new": {"delays": [1, 10], "ints": [1, 4, 7], "initialFactor": 2500, "order": 1, "perDay": 20,
                        "bury": True, "separate": True},
                "rev": {"perDay": 200, "ease4": 1.3, "fuzz": 0.05, "ivlFct": 1, "maxIvl": 36500, "bury": True,
                        "minSpace": 1},
                "lapse": {"delays": [10], "mult": 0, "minInt": 1, "leechFails": 8, "leechAction": 0}}}


def strip_html(text: str) -> str:
    return html.unescape(_TAG.sub("", text))


def field_checksum(first_field: str) -> int:
    """Anki's duplicate-check value: the first 8 hex digits of SHA-1 of the first field without HTML."""
    return int(hashlib.sha1(strip_html(first_field).encode("utf-8")).hexdigest()[:8], 16)


def _collection(notes: list[Note], now: int) -> bytes:
    con = sqlite3.connect(":memory:")
    try:
        con.executescript(_SCHEMA)
        conf = {"activeDecks": [DECK_ID], "curDeck": DECK_ID, "curModel": MODEL_ID, "nextPos": len(notes) + 1,
                "sortType": "noteFld", "sortBackwards": False, "addToCur": True, "newSpread": 0,
                "collapseTime": 1200, "timeLim": 0, "estTimes": True, "dueCounts": True}
        decks = {"1": _deck(1, "Default", now),
                 str(DECK_ID): _deck(DECK_ID, DECK_NAME, now,
                                     "One note per question of the Model Serving Interview Bank.")}
        con.execute("INSERT INTO col VALUES (1, ?, ?, ?, 11, 0, 0, 0, ?, ?, ?, ?, '{}')",
                    (now, now * 1000, now * 1000, json.dumps(conf, sort_keys=True),
                     json.dumps({str(MODEL_ID): _note_type(now)}, sort_keys=True),
                     json.dumps(decks, sort_keys=True), json.dumps(_DCONF, sort_keys=True)))
        for pos, n in enumerate(sorted(notes, key=lambda n: n.qid), start=1):
            nid = NOTE_ID_BASE + n.qid
            sfld = strip_html(n.fields[0])
            con.execute("INSERT INTO notes VALUES (?, ?, ?, ?, -1, ?, ?, ?, ?, 0, '')",
                        (nid, n.guid, MODEL_ID, now, f" {' '.join(n.tags)} ", FIELD_SEP.join(n.fields), sfld,
                         field_checksum(n.fields[0])))
            con.execute("INSERT INTO cards VALUES (?, ?, ?, 0, ?, -1, 0, 0, ?, 0, 0, 0, 0, 0, 0, 0, 0, '')",
                        (nid, nid, DECK_ID, now, pos))
        con.commit()
        return con.serialize()
    finally:
        con.close()


def _zip_entry(name: str, when: int) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=time.gmtime(max(when, 315532800))[:6])  # zip dates start in 1980
    info.compress_type = zipfile.ZIP_DEFLATED
    info.external_attr = 0o644 << 16
    return info


def apkg_bytes(notes: list[Note], now: int) -> bytes:
    """The Anki package: a zip holding ``collection.anki2`` and an empty ``media`` map."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(_zip_entry("collection.anki2", now), _collection(notes, now))
        z.writestr(_zip_entry("media", now), "{}")
    return buf.getvalue()


# --- the plain-text export ----------------------------------------------------------------------------

TEXT_COLUMNS = ("guid", "front", "back", "tags")


def text_export(notes: list[Note]) -> str:
    """Tab-separated, one note per line, with the file headers Anki 2.1.55+ reads: the separator, HTML
    on, the guid column (so re-imports update) and the tags column; Basic note type (Front/Back)."""
    out = io.StringIO()
    out.write("#separator:tab\n#html:true\n#notetype:Basic\n")
    out.write(f"#deck:{DECK_NAME}\n#guid column:1\n#tags column:{len(TEXT_COLUMNS)}\n")
    w = csv.writer(out, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    for n in sorted(notes, key=lambda n: n.qid):
        w.writerow([n.guid, n.front, n.back, " ".join(n.tags)])
    return out.getvalue()


def build_time() -> int:
    """The deck's timestamp: ``SOURCE_DATE_EPOCH`` when set (reproducible builds), else now. Anki
    updates an existing note on re-import when the incoming note is newer, so a later build must carry
    a later time."""
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if raw is None or not raw.strip():
        return int(time.time())
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"SOURCE_DATE_EPOCH: not a whole number of seconds: {raw!r}") from None


def deck_files(site: Site, docs_dir: str | Path, link_for, now: int) -> dict[str, bytes]:
    """{path under the site dir: content} for the package and the text export."""
    notes = build_notes(site, docs_dir, link_for)
    return {f"{DOWNLOAD_DIR}/{APKG_NAME}": apkg_bytes(notes, now),
            f"{DOWNLOAD_DIR}/{TEXT_NAME}": text_export(notes).encode("utf-8")}
