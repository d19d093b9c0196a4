"""The napkin-math drills' Python reference (sitebuild/drills/): every type draws a complete problem
from any seed, the answer key is the engine's, every named mistake moves the answer, the draws cover
the attention designs they must, the napkin method the prompt supports lands within the tolerance, and
the data script fails the build, naming what is missing, when a linked page is not in the site."""

from __future__ import annotations

import collections
import datetime as dt
import json
import re

import pytest

from macros import formulas as F
from macros.catalog import load_catalog
from macros.formulas import traps as T
from sitebuild import drills as D
from sitebuild.calcsheet import evaluate
from sitebuild.calculator import DEFAULTS

SEEDS = range(200)
CAT = load_catalog()


@pytest.fixture(scope="module")
def drawn():
    return {key: [D.make(key, s) for s in SEEDS] for key in D.TYPES}


def test_at_least_twelve_types_each_with_named_mistakes(drawn):
    assert len(D.TYPES) >= 12
    for key, insts in drawn.items():
        seen = collections.Counter(t for i in insts for t in i["traps"])
        assert seen, f"{key}: no draw has a named mistake"
        assert all(t in T.TRAPS for t in seen), key
        assert sum(1 for i in insts if i["traps"]) >= len(insts) * 0.9, f"{key}: too many draws without a mistake"


def test_the_same_seed_draws_the_same_drill_and_others_vary(drawn):
    for key, insts in drawn.items():
        assert D.make(key, 7) == insts[7]
        assert len({i["prompt"] for i in insts}) >= 10, f"{key}: the draws hardly vary"


def test_every_named_mistake_differs_from_the_answer(drawn):
    for key, insts in drawn.items():
        for i in insts:
            for trap, value in i["traps"].items():
                if isinstance(i["answer"], list):
                    assert value != i["answer"], (key, i["seed"], trap)
                else:
                    assert abs(value - i["answer"]) >= D.MIN_TRAP_DIFF * abs(i["answer"]), (key, i["seed"], trap)


def test_every_drill_is_complete_and_its_texts_are_filled(drawn):
    for key, insts in drawn.items():
        for i in insts:
            s = i["solution"]
            assert i["prompt"] and i["ask"].endswith("?"), (key, i["seed"])
            assert s["title"] and s["formulas"] and s["inputs"] and s["steps"] and s["results"], (key, i["seed"])
            text = json.dumps(i, ensure_ascii=False)
            assert not re.search(r"\{[a-z0-9_]+\}|\?[a-z_]+:|!\w+:", text), (key, i["seed"])
            assert "None" not in text and "nan" not in text.lower().replace("nanosecond", ""), (key, i["seed"])
            assert "<" not in text, "drill texts are plain text"
            for label, value, source in s["inputs"]:
                assert source in ("model", "gpu", "fmt", "efmt", "kv", "price", "api", "given") or \
                    source.startswith("assumption"), (key, source)
                if source in i["refs"] or source in ("given",) or source.startswith("assumption"):
                    continue
                pytest.fail(f"{key} seed {i['seed']}: source {source!r} names no drawn entry")
            assert i["question"] in D.question_ids()


def test_the_answer_is_the_engine_figure(drawn):
    """Recomputed here from the formulas directly, for a few seeds of every type."""
    for i in drawn["kv_token"][:40]:
        m, kv = CAT.model(i["refs"]["model"]), CAT.format(i["refs"]["kv"])
        assert i["answer"] == F.kv_bytes_per_token(m, kv)
    for i in drawn["weights"][:40]:
        r = i["refs"]
        fe = CAT.format(r["efmt"]) if "efmt" in r else None
        assert i["answer"] == F.weight_bytes(CAT.model(r["model"]), CAT.format(r["fmt"]), fe)
    for i in drawn["valid_tp"][:40]:
        assert i["answer"] == F.valid_tp_degrees(CAT.model(i["refs"]["model"]))
    for i in drawn["effective_bits"]:
        assert i["answer"] == CAT.format(i["refs"]["fmt"]).bits_per_weight
    for i in drawn["max_sequences"][:20]:
        r = i["refs"]
        n = int(re.search(r"on (\d+) ×", i["solution"]["title"]).group(1))
        s = evaluate(CAT.model(r["model"]), CAT.gpu(r["gpu"]), CAT.format(r["fmt"]), CAT.format(r["kv"]), None, n,
                     int(re.search(r"sequences of ([\d,]+) tokens", i["ask"]).group(1).replace(",", "")), 1,
                     DEFAULTS["gpu_util"])
        assert i["answer"] == s["max_sequences"] >= 1


def test_kv_draws_cover_gqa_mla_sliding_window_and_hybrid_models(drawn):
    for key in ("kv_token", "kv_batch"):
        classes = collections.Counter(D.kv_class(CAT.model(i["refs"]["model"])) for i in drawn[key])
        assert set(classes) == {"gqa", "mla", "sliding", "hybrid"}, classes
        assert min(classes.values()) >= len(drawn[key]) // 8, classes
        traps = {t for i in drawn[key] for t in i["traps"]}
        assert {"query_heads", "hidden_size", "k_or_v_once", "mla_as_mha", "linear_as_attention"} <= traps
    assert any("window_ignored" in i["traps"] for i in drawn["kv_batch"])


def test_the_mistakes_the_issue_names_are_all_live(drawn):
    live = {t for insts in drawn.values() for i in insts for t in i["traps"]}
    for trap in ("query_heads", "hidden_size", "k_or_v_once", "gb_as_gib", "gib_as_gb", "bits_as_bytes",
                 "tp_share_forgotten", "bidirectional", "sparse_flops"):
        assert trap in live, trap
    assert live <= set(T.TRAPS)


@pytest.mark.parametrize("key", [k for k, t in D.TYPES.items() if t.dim != "list"])
def test_the_napkin_method_lands_within_half_the_tolerance(drawn, key):
    tol = D.TYPES[key].tolerance
    for i in drawn[key]:
        if "napkin" in i:
            assert abs(i["napkin"] - i["answer"]) <= tol / 2 * abs(i["answer"]), (key, i["seed"])


def test_tolerances_and_units_are_stated():
    for t in D.TYPES.values():
        assert t.dim in ("bytes", "count", "list", "rate", "time", "usd", "bits")
        assert (t.tolerance == 0) == (t.dim == "list")
        assert 0 <= t.tolerance <= 0.1
        assert t.bare is None or t.bare >= 0
    assert D.TYPES["effective_bits"].tolerance < T.element_bits(CAT.format("mxfp4")) / 4.25 * 0.06
    assert D.TYPES["prefill"].bare is None and D.TYPES["allreduce"].bare is None  # "0.35" could be s or ms


def test_answer_text_shows_both_byte_units_and_the_rate():
    assert D.answer_text(D.TYPES["kv_batch"], 21474836480) == "21.5 GB (20.0 GiB)"
    assert D.answer_text(D.TYPES["kv_token"], 327680) == "327,680 bytes (320 KiB)"
    assert D.answer_text(D.TYPES["decode_b1"], 68.4) == "68.4 tokens/s"
    assert D.answer_text(D.TYPES["prefill"], 0.35) == "350.0 ms"
    assert D.answer_text(D.TYPES["max_sequences"], 12) == "12 sequences"
    assert D.answer_text(D.TYPES["valid_tp"], [1, 2, 4]) == "1, 2, 4"


def test_the_generator_is_pinned():
    # Every shared link and daily set is a seed: a change to the generator would change them all. The
    # browser's generator is held equal to this one in tests/test_drills_parity.py.
    r = D.Rng(0)
    assert [int(r.random() * 2**32) for _ in range(3)] == [1144304738, 1416247, 958946056]


def test_daily_set_is_fixed_by_the_date_and_uses_distinct_types():
    day = D.daily_set("2026-03-02")
    assert day == D.daily_set("2026-03-02") and len(day) == D.DAILY_SIZE
    assert len({k for k, _ in day}) == D.DAILY_SIZE
    days = {tuple(D.daily_set((dt.date(2026, 1, 1) + dt.timedelta(days=i)).isoformat())) for i in range(30)}
    assert len(days) == 30
    assert D.fnv1a("") == 0x811C9DC5 and D.fnv1a("a") == 0xE40C292C  # FNV-1a test vectors


def test_fill_keeps_conditions_and_refuses_a_missing_value():
    assert D.fill("?a:x {a}", {"a": "1"}) == "x 1"
    assert D.fill("?a:x", {}) is None and D.fill("!a:x", {}) == "x" and D.fill("!a:x", {"a": ""}) is None
    assert D.fill("?a:!b:y", {"a": ""}) == "y" and D.fill("?a:!b:y", {"a": "", "b": ""}) is None
    with pytest.raises(KeyError, match="needs the value 'b'"):
        D.fill("{b}", {})


def test_a_bad_seed_or_type_is_refused():
    with pytest.raises(ValueError, match="seed"):
        D.make("weights", -1)
    with pytest.raises(ValueError, match="seed"):
        D.make("weights", 2**32)
    with pytest.raises(KeyError):
        D.make("no_such_type", 1)


def _urls():
    questions = {q: (f"q{q}/", f"Question {q}") for q in D.question_ids()}
    pages = {src: src[:-3] + "/" for src in D.REF_PAGES.values()}
    return questions, pages


def test_data_script_is_a_script_with_every_type_and_no_markup_break():
    questions, pages = _urls()
    text = D.drills_script(questions, pages)
    assert text.startswith("window.MSIB_DRILLS=") and text.endswith(";\n")
    data = json.loads(text[len("window.MSIB_DRILLS="):-2])
    assert [t["key"] for t in data["types"]] == list(D.TYPES)
    assert data["defaults"] == DEFAULTS and data["defaults"]["gpu_util"] == F.DEFAULT_GPU_UTILIZATION
    assert data["questions"]["75"] == {"url": "q75/", "title": "Question 75"}
    assert "</" not in text


def test_data_script_names_a_missing_question_or_page():
    questions, pages = _urls()
    del questions[75]
    with pytest.raises(D.DrillExportError, match="Q75"):
        D.drills_script(questions, pages)
    questions, pages = _urls()
    del pages["reference/gpus.md"]
    with pytest.raises(D.DrillExportError, match="docs/reference/gpus.md"):
        D.drills_script(questions, pages)
