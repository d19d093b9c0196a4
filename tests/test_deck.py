"""The flash-card deck (sitebuild/deck.py): the Anki package and the text export in the built site, read
the way Anki reads them (a zip holding a SQLite collection; a tab-separated file with '#' headers), and
two successive decks merged by note guid as Anki's importer does."""

from __future__ import annotations

import csv
import html
import io
import json
import sqlite3
import zipfile
from pathlib import Path

import pytest

from sitebuild import deck
from sitebuild.registry import load_site
from sitekit import ROOT, make_fixture_site, page_html_path

APKG = f"{deck.DOWNLOAD_DIR}/{deck.APKG_NAME}"
TEXT = f"{deck.DOWNLOAD_DIR}/{deck.TEXT_NAME}"


def read_collection(apkg: bytes, tmp_path: Path, name: str = "c") -> sqlite3.Connection:
    """Open the package's collection with SQLite, as Anki does after unzipping it."""
    with zipfile.ZipFile(io.BytesIO(apkg)) as z:
        assert sorted(z.namelist()) == ["collection.anki2", "media"]
        assert json.loads(z.read("media")) == {}
        db = tmp_path / f"{name}.anki2"
        db.write_bytes(z.read("collection.anki2"))
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    return con


def notes_of(con) -> dict[str, sqlite3.Row]:
    return {r["guid"]: r for r in con.execute("SELECT * FROM notes ORDER BY id")}


def anki_import(into: sqlite3.Connection, incoming: sqlite3.Connection) -> None:
    """Anki's rule for an incoming note: a note with the same guid and note type is updated when the
    incoming one is newer (its cards, and so their review history, stay); an unknown guid is added."""
    have = notes_of(into)
    for n in incoming.execute("SELECT * FROM notes"):
        old = have.get(n["guid"])
        if old is None:
            into.execute("INSERT INTO notes SELECT * FROM inc.notes WHERE id = ?", (n["id"],))
            into.execute("INSERT INTO cards SELECT * FROM inc.cards WHERE nid = ?", (n["id"],))
        elif old["mid"] == n["mid"] and n["mod"] > old["mod"]:
            into.execute("UPDATE notes SET flds = ?, tags = ?, mod = ?, sfld = ?, csum = ? WHERE id = ?",
                         (n["flds"], n["tags"], n["mod"], n["sfld"], n["csum"], old["id"]))
    into.commit()


@pytest.fixture(scope="module")
def site_deck(built_site, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deck")
    return read_collection((built_site / APKG).read_bytes(), tmp), (built_site / TEXT).read_text(encoding="utf-8")


def test_one_note_per_question_with_its_fields_tags_and_identity(site_deck, registry, http_server):
    con, _ = site_deck
    notes = notes_of(con)
    assert list(notes) == [f"msib-q{qid}" for qid in registry.questions]
    models = json.loads(con.execute("SELECT models FROM col").fetchone()[0])
    model = models[str(deck.MODEL_ID)]
    assert [f["name"] for f in model["flds"]] == list(deck.FIELDS)
    decks = json.loads(con.execute("SELECT decks FROM col").fetchone()[0])
    assert decks[str(deck.DECK_ID)]["name"] == deck.DECK_NAME
    for q in registry.questions.values():
        n = notes[f"msib-q{q.id}"]
        assert n["id"] == deck.NOTE_ID_BASE + q.id and n["mid"] == deck.MODEL_ID
        fields = dict(zip(deck.FIELDS, n["flds"].split("\x1f"), strict=True))
        assert html.unescape(deck.strip_html(fields["Question"])) == f"{q.label} · {q.title}"
        assert fields["Probe"].strip() and "/// answer" not in fields["Probe"] and "](" not in fields["Probe"]
        text = html.unescape(deck.strip_html(fields["Key points"]))
        for point in q.key_points:
            assert html.unescape(deck.strip_html(deck._html_of(point))) in text
        assert html.unescape(deck.strip_html(fields["Summary"])) == q.description
        assert f'href="{http_server.base_url}q/{q.id}/"' in fields["Link"]
        tags = n["tags"].split()
        sec = q.section
        assert f"part::{sec.part.key}" in tags and f"difficulty::{q.difficulty}" in tags
        assert any(t.startswith(f"{sec.part.section_field}::") for t in tags)
        assert {f"tag::{t}" for t in q.tags} <= set(tags)
        assert n["csum"] == deck.field_checksum(fields["Question"])
        card = con.execute("SELECT * FROM cards WHERE nid = ?", (n["id"],)).fetchall()
        assert len(card) == 1 and card[0]["did"] == deck.DECK_ID and card[0]["type"] == 0


def test_text_export_parses_as_tab_separated_and_matches_the_package(site_deck):
    con, text = site_deck
    lines = text.splitlines()
    headers = [ln for ln in lines if ln.startswith("#")]
    assert headers == ["#separator:tab", "#html:true", "#notetype:Basic", f"#deck:{deck.DECK_NAME}",
                       "#guid column:1", "#tags column:4"]
    body = "\n".join(lines[len(headers):])
    rows = list(csv.reader(io.StringIO(body), delimiter="\t"))
    notes = notes_of(con)
    assert [r[0] for r in rows] == list(notes)
    for guid, front, back, tags in rows:
        flds = notes[guid]["flds"].split("\x1f")
        assert front == flds[0] + flds[1] and back == "".join(flds[2:])
        assert tags.split() == notes[guid]["tags"].split()


def test_the_deck_is_linked_from_the_home_page_online_and_offline(built_site, offline_site):
    home = page_html_path(built_site, "index.md").read_text(encoding="utf-8")
    assert f'href="{APKG}"' in home and f'href="{TEXT}"' in home
    off = page_html_path(offline_site, "index.md", directory_urls=False).read_text(encoding="utf-8")
    assert f'href="{APKG}"' in off
    assert (offline_site / APKG).read_bytes() == (built_site / APKG).read_bytes()


def test_a_newer_deck_updates_notes_instead_of_duplicating_them(tmp_path):
    page = (ROOT / "docs/deployment/inference-fundamentals/memory-bandwidth-bottleneck.md").read_text(encoding="utf-8")
    other = (ROOT / "docs/deployment/llm-inference/prefill-vs-decode.md").read_text(encoding="utf-8")
    rel, rel2 = "deployment/inference-fundamentals/a.md", "deployment/llm-inference/b.md"
    strip = "related: [1, 2, 5, 8, 75, 79, 81, 82]"
    assert strip in page
    page = page.replace(strip, "related: []")
    other = "\n".join(ln if not ln.startswith("related:") else "related: [7]" for ln in other.splitlines()) + "\n"
    src = make_fixture_site(tmp_path / "src", {rel: page, rel2: other})
    docs = src / "docs"
    link = lambda q: f"https://example.org/q/{q.id}/"  # noqa: E731
    first = deck.deck_files(load_site(docs), docs, link, 1_767_225_600)
    old_point = load_site(docs).questions[7].key_points[0]
    new_point = "A kernel is bandwidth-bound below the ridge point, peak FLOP/s divided by memory bandwidth."
    (docs / rel).write_text(page.replace(old_point, new_point), encoding="utf-8")
    second = deck.deck_files(load_site(docs), docs, link, 1_767_312_000)

    mine = read_collection(first[APKG], tmp_path, "mine")
    cid_before = {r["nid"]: r["id"] for r in mine.execute("SELECT id, nid FROM cards")}
    # the user reviews a card: its scheduling lives on the card, which an update must keep
    mine.execute("UPDATE cards SET type = 2, queue = 2, ivl = 10, reps = 3 WHERE nid = ?", (deck.NOTE_ID_BASE + 7,))
    mine.commit()
    newer = read_collection(second[APKG], tmp_path, "newer")
    assert set(notes_of(newer)) == set(notes_of(mine)) == {"msib-q7", "msib-q81"}
    mine.execute("ATTACH DATABASE ? AS inc", (str(tmp_path / "newer.anki2"),))
    anki_import(mine, newer)

    notes = notes_of(mine)
    assert len(notes) == 2, "re-import duplicated notes"
    flds = notes["msib-q7"]["flds"]
    assert html.escape(new_point, quote=False) in flds and html.escape(old_point, quote=False) not in flds
    card = mine.execute("SELECT * FROM cards WHERE nid = ?", (deck.NOTE_ID_BASE + 7,)).fetchone()
    assert card["reps"] == 3 and card["ivl"] == 10, "the review history was lost"
    assert {r["nid"]: r["id"] for r in mine.execute("SELECT id, nid FROM cards")} == cid_before
    # the text export keeps the same identities
    rows = [ln.split("\t") for ln in second[TEXT].decode().splitlines() if not ln.startswith("#")]
    assert [r[0] for r in rows] == ["msib-q7", "msib-q81"]


def test_the_package_is_byte_identical_for_the_same_time_and_pages(registry):
    link = lambda q: f"https://example.org/q/{q.id}/"  # noqa: E731
    a = deck.deck_files(registry, ROOT / "docs", link, 1_767_225_600)
    b = deck.deck_files(registry, ROOT / "docs", link, 1_767_225_600)
    assert a == b
    c = deck.deck_files(registry, ROOT / "docs", link, 1_767_225_601)
    assert c[APKG] != a[APKG], "a later build must carry a later note time, or Anki keeps the old fields"


def test_a_page_without_an_answer_block_is_named():
    with pytest.raises(ValueError, match=r"docs/x\.md: no '/// answer' block"):
        deck.probe_markdown("---\nid: 1\n---\n\nProbe only.\n", "docs/x.md")


def test_bad_source_date_epoch_is_named(monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(ValueError, match="SOURCE_DATE_EPOCH"):
        deck.build_time()
