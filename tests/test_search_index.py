"""The compacted search index (sitebuild/searchindex.py): what it keeps, what it drops, and that the
built index carries each question's id and summary fields. Ranking itself is checked in Chromium with
Material's own worker (tests/test_reading.py)."""

from __future__ import annotations

import json
import re

from sitebuild import searchindex as si

SEP = re.compile(r'[\s\-,:;!=\[\]()"`/{}<>]+|\.(?!\d)')


def words(text: str) -> list[str]:
    return [w.lower() for w in SEP.split(text) if w]


def test_head_is_kept_verbatim_and_later_words_once():
    head = "KV cache " * 40  # 360 characters: longer than the head
    text = f"<p>{head}</p> paged paged blocks the blocks PagedAttention"
    out = si.compact_text(text, SEP)
    shown, _, soup = out.partition(" … ")
    assert text.startswith("<p>" + shown)
    assert len(shown) <= si.HEAD_CHARS
    soup_words = words(soup)
    assert soup_words.count("paged") == 1 and soup_words.count("blocks") == 1
    assert "the" not in soup_words                      # a stop word lunr drops anyway
    assert "kv" not in soup_words and "cache" not in soup_words  # already in the head
    assert "pagedattention" in soup_words and "attention" in soup_words


def test_markup_goes_and_escaped_text_stays_escaped():
    out = si.compact_text('<p>Use <code>&lt;script&gt;alert(1)&lt;/script&gt;</code> &amp; more</p>', SEP)
    assert "<" not in out and ">" not in out
    assert "&lt;script&gt;" in out


def test_page_words_are_not_repeated_in_a_later_section():
    page: dict[str, int] = {}
    filler = "x " * 200
    si.compact_text(filler + "FlashMLA decode kernel", SEP, page)
    later = si.compact_text(filler + "FlashMLA again", SEP, page)
    assert "flashmla" not in words(later.partition(" … ")[2])
    assert "again" in words(later)


def test_cross_link_ids_leave_the_text():
    assert "q75" not in words(si.compact_text("See Q75 · What is the KV cache?", SEP))


def test_an_exact_id_repeats_more_than_the_ids_it_prefixes():
    assert si.question_ids(7).split().count("Q7") == 3
    assert si.question_ids(75).split().count("Q75") == 2
    assert si.question_ids(121).split() == ["Q121", "121_id"]


def test_keys_carry_both_forms_of_an_abbreviation():
    keys = si.question_keys("Why is TTFT high?", "Prefill queueing.", ("The SLO is on the p99.",))
    assert "time to first token" in keys and "service level objective" in keys
    keys = si.question_keys("What is time to first token?", "", ())
    assert "TTFT" in keys.split()


def test_keys_hold_each_key_point_word_once():
    keys = si.question_keys("How big is the KV cache?", "Bytes per token of the cache.",
                            ("KV bytes per token = 2 x layers x kv_heads x head_dim.",
                             "The cache grows with layers and with context."))
    words = keys.split()
    assert keys.startswith("How big is the KV cache? Bytes per token of the cache. ")
    tail = words[len("How big is the KV cache? Bytes per token of the cache.".split()):]
    # Each word once, no stop words; the topic's words (also in the title) keep one repeat here.
    assert "kv_heads" in tail and "head_dim" in tail and "context" in tail and "grows" in tail
    assert tail.count("layers") == 1 and tail.count("cache") == 1 and tail.count("KV") == 1
    assert not {"The", "with", "and"} & set(tail)


def test_sections_leave_a_questions_key_words_to_its_own_entry():
    filler = "a section head that is long enough to fill the readable part of the teaser shown in results, " * 2
    index = {"config": {"separator": r"[\s\-]+"}, "docs": [
        {"location": "a/b/", "title": "T", "text": "intro"},
        {"location": "a/b/#answer", "title": "Answer", "text": filler + "paged blocks and prefill chunking"},
        {"location": "c/d/#answer", "title": "Answer", "text": filler + "paged blocks and prefill chunking"}]}
    keys = {"a/b/": {"title": "Q1 · T", "keys": "How are paged blocks sized?", "qid": "Q1 1_id"}}
    docs = si.compact_index(index, keys)["docs"]
    rest = lambda d: d["text"].partition(" … ")[2].split()  # noqa: E731
    # The question's section drops what its keys hold; another page's section keeps every word.
    assert "paged" not in rest(docs[1]) and "blocks" not in rest(docs[1]) and "chunking" in rest(docs[1])
    assert {"paged", "blocks", "chunking"} <= set(rest(docs[2]))
    assert docs[1]["text"].startswith("a section head")  # the readable head is untouched


def test_built_index_is_compacted(built_site, registry):
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    assert set(index["config"]["fields"]) >= {"title", "text", "tags", "keys", "qid"}
    by_location = {d["location"]: d for d in index["docs"]}
    for q in registry.questions.values():
        entry = by_location[q.src[:-3] + "/"]
        assert entry["title"] == f"Q{q.id} · {q.title}"
        assert entry["qid"].split()[:2] == [f"Q{q.id}", f"{q.id}_id"]
        assert q.title in entry["keys"] and q.description in entry["keys"]
    assert not any(re.search(r"<[a-z/][^>]*>", d["text"]) for d in index["docs"]), "markup left in the index"


def test_whitespace_collapses_outside_preformatted_elements():
    html = ('<div>\n    <p>a\n\n   b</p>\n  </div>\n<pre><code>x\n    y\n\n</code></pre>\n'
            '<script>\n  var s = "a\n  b";\n</script>\n<textarea>\n  kept\n</textarea>')
    out = si.collapse_whitespace(html)
    assert out.startswith("<div>\n<p>a\nb</p>\n</div>\n")
    assert "<pre><code>x\n    y\n\n</code></pre>" in out
    assert '<script>\n  var s = "a\n  b";\n</script>' in out
    assert "<textarea>\n  kept\n</textarea>" in out
