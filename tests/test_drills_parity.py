"""The drills' browser engine against the Python reference, and the answer parser, in Chromium.

For every drill type a few hundred seeds are drawn by both sides in one batch: the problem, the answer
key, every named mistake's figure and every line of text must be equal (numbers to a relative 1e-9).
The mutation tests show that a formula changed on one side only fails the comparison. The parser has a
table of unit tests and a property test (hypothesis) over numbers, separators, exponents and units;
nothing it accepts can carry markup. The number formatting the texts use is compared with
macros/units.py directly, ties included."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import calckit
import drillkit
from macros import units as U
from macros.formulas import traps as T
from macros.render import blocks
from sitebuild import drills as D

pytestmark = pytest.mark.browser

SEEDS_PER_TYPE = 300
REL = calckit.REL


@pytest.fixture(scope="module")
def engine(browser, served_site):
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(served_site + "drills/")
    page.wait_for_function("window.MSIBDrills && MSIBDrills.types().length > 0")
    page.errors = errors
    yield page
    context.close()


@pytest.fixture(scope="module")
def parity(engine):
    rng = random.Random(20261202)
    cases = [(k, s) for k in D.TYPES for s in [*range(40), *(rng.randrange(2**32) for _ in range(SEEDS_PER_TYPE - 40))]]
    expected = drillkit.python_drills(cases)
    actual = drillkit.js_drills(engine, cases)
    source = engine.evaluate("fetch(document.querySelector('script[src*=\"drills-engine.js\"]').src)"
                             ".then(r => r.text())")
    return {"cases": cases, "expected": expected, "actual": actual, "page": engine, "source": source}


def test_cases_cover_every_type_and_mistake(parity):
    assert len(parity["cases"]) == len(D.TYPES) * SEEDS_PER_TYPE >= 12 * 300
    live = {t for e in parity["expected"] for t in e["traps"]}
    assert live >= {"query_heads", "hidden_size", "k_or_v_once", "mla_as_mha", "linear_as_attention", "window_ignored",
                    "gb_as_gib", "bits_as_bytes", "tp_share_forgotten", "bidirectional", "sparse_flops"}
    assert len(live) >= 35 and live <= set(T.TRAPS)


def test_browser_drills_equal_python_drills(parity):
    errors = [a["error"] for a in parity["actual"] if "error" in a]
    assert not errors, errors[:3]
    problems = calckit.all_mismatches(parity["expected"], parity["actual"])
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])
    assert not parity["page"].errors


def test_every_browser_mistake_differs_from_its_answer(parity):
    for a in parity["actual"]:
        for trap, value in a["traps"].items():
            if isinstance(a["answer"], list):
                assert value != a["answer"]
            else:
                assert abs(value - a["answer"]) >= D.MIN_TRAP_DIFF * abs(a["answer"]), (a["type"], a["seed"], trap)


def _rerun_with(page, source, old, new, cases):
    assert source.count(old) == 1, f"mutation target {old!r} not found once in drills-engine.js"
    page.add_script_tag(content=source.replace(old, new))
    page.evaluate("MSIBDrills.setData(window.MSIB_DRILLS)")
    try:
        return drillkit.js_drills(page, cases)
    finally:
        page.add_script_tag(content=source)
        page.evaluate("MSIBDrills.setData(window.MSIB_DRILLS)")


@pytest.mark.parametrize("old, new, field", [
    # a named mistake changed: query heads counted once
    ("kvQueryHeads: function (m, kv) { return 2 * m.num_attention_heads",
     "kvQueryHeads: function (m, kv) { return 1 * m.num_attention_heads", "query_heads"),
    # the bidirectional figure halved instead of doubled
    ("bidirectional: function (perDirection) { return 2 * perDirection; }",
     "bidirectional: function (perDirection) { return perDirection / 2; }", "bidirectional"),
    # the right answer changed: Little's law without the TTFT
    ("w = ttft + out * tpot, answer = rate * w", "w = ttft + out * tpot, answer = rate * out * tpot", "answer"),
    # a formatter changed: one decimal fewer under 1
    ("return fixed(x, 2 - Math.floor(Math.log10(a)));", "return fixed(x, 1 - Math.floor(Math.log10(a)));", "solution"),
    # a draw changed: the batch sizes of the KV drill
    ("batch = rng.pick([1, 4, 8, 16, 32, 64, 128])", "batch = rng.pick([1, 4, 8, 16, 32, 64, 256])", "prompt"),
])
def test_a_change_in_javascript_only_fails(parity, old, new, field):
    idx = list(range(0, len(parity["cases"]), 7))
    cases = [parity["cases"][i] for i in idx]
    actual = _rerun_with(parity["page"], parity["source"], old, new, cases)
    problems = calckit.all_mismatches([parity["expected"][i] for i in idx], actual)
    assert any(field in p for p in problems), problems[:5]


def test_a_mistake_changed_in_python_only_fails(parity, monkeypatch):
    original = T.kv_per_layer_hidden_size
    monkeypatch.setattr(T, "kv_per_layer_hidden_size", lambda m, kv: original(m, kv) / 2)
    idx = [i for i, c in enumerate(parity["cases"]) if c[0] == "kv_token"][:60]
    problems = calckit.all_mismatches(drillkit.python_drills([parity["cases"][i] for i in idx]),
                                      [parity["actual"][i] for i in idx])
    assert any("hidden_size" in p for p in problems)


def test_generator_hash_and_daily_sets_equal_python(engine):
    rng = random.Random(5)
    seeds = [0, 1, 2**32 - 1, *(rng.randrange(2**32) for _ in range(50))]
    js = engine.evaluate("(seeds) => seeds.map(s => { const r = new MSIBDrills.Rng(s); "
                         "return [r.random(), r.random(), r.random()]; })", seeds)
    for s, values in zip(seeds, js):
        r = D.Rng(s)
        assert values == [r.random(), r.random(), r.random()]
    texts = ["", "a", "msib-drills:2026-03-02", "é ü 日本", "x" * 300]
    assert engine.evaluate("(t) => t.map(MSIBDrills.fnv1a)", texts) == [D.fnv1a(t) for t in texts]
    days = [f"2026-{m:02d}-{d:02d}" for m in (1, 2, 12) for d in (1, 9, 28)]
    want = [[list(x) for x in D.daily_set(d)] for d in days]
    assert engine.evaluate("(d) => d.map(MSIBDrills.dailySet)", days) == want


# --- formatting: the browser's port of macros/units.py, ties and separators included ------------------

FORMATTERS = {"fmtInt": U.fmt_int, "fmtNum": U.fmt_num, "fmtGb": U.fmt_gb, "fmtBytes": U.fmt_bytes,
              "fmtBandwidth": U.fmt_bandwidth, "fmtFlops": U.fmt_flops, "fmtSeconds": U.fmt_seconds,
              "fmtUsd": U.fmt_usd, "fmtPct": U.fmt_pct, "n": blocks._n, "bits": blocks._bits, "gib": blocks._gib,
              "sci": blocks._sci}


def _numbers():
    rng = random.Random(11)
    out = [0.0, 0.125, 0.375, 2.5, 2.675, 1.005, 0.0625, 0.03125, 1e-7, 123456789.5, 9.995, 99.95, 0.9995,
           1024.0, 2**30, 2**40 + 0.5, 1e21 - 1, -0.04, -2.5]
    for _ in range(600):
        e = rng.uniform(-8, 16)
        out.append(rng.choice([1, -1]) * 10**e)
        out.append(round(10**e, rng.randint(0, 4)))
        out.append(rng.randint(1, 10**6) / 2**rng.randint(0, 12))  # exact binary fractions: ties
    return out


def test_formatters_equal_python(engine):
    xs = _numbers()
    for name, fn in FORMATTERS.items():
        sample = [x for x in xs if abs(x) >= 1] if name == "sci" else xs  # sci_ shows FLOP counts
        js = engine.evaluate(f"(xs) => xs.map(x => MSIBDrills.format.{name}(x))", sample)
        py = [fn(x) for x in sample]
        bad = [(x, p, j) for x, p, j in zip(sample, py, js) if p != j]
        assert not bad, f"{name}: {bad[:5]}"
    fr = [1.0, 0.5, 0.25, 0.125, 0.0625, 1 / 3, 1 / 12, 1 / 96, 0.99996, 0.3333333, 2 / 3, 0.1]
    assert engine.evaluate("(xs) => xs.map(MSIBDrills.format.frac)", fr) == [blocks._frac(x) for x in fr]


# --- the answer parser --------------------------------------------------------------------------------

GB, GiB = 1e9, 2**30
PARSED = [
    ("140 GB", "bytes", 140e9), ("130.4 GiB", "bytes", 130.4 * GiB), ("128 KiB", "bytes", 131072),
    ("140gb", "bytes", 140e9), ("140 GB.", "bytes", 140e9), ("~140 GB", "bytes", 140e9),
    ("about 140 GB", "bytes", 140e9), ("1.4 × 10^11 bytes", "bytes", 1.4e11), ("1.4x10^11 B", "bytes", 1.4e11),
    ("1.4·10¹¹ bytes", "bytes", 1.4e11), ("1.4e11 B", "bytes", 1.4e11), ("1.4E+11 bytes", "bytes", 1.4e11),
    ("140,000,000,000 bytes", "bytes", 1.4e11), ("1120 Gbit", "bytes", 140e9), ("21.5 gigabytes", "bytes", 21.5e9),
    ("327,680 bytes", "bytes", 327680), ("0.5 TB", "bytes", 5e11), ("2 TiB", "bytes", 2 * 2**40),
    ("0.35 s", "time", 0.35), ("350 ms", "time", 0.35), ("350ms", "time", 0.35), ("350 µs", "time", 3.5e-4),
    ("350 μs", "time", 3.5e-4), ("350 us", "time", 3.5e-4), ("2 min", "time", 120), ("1.5 seconds", "time", 1.5),
    ("2,300 tok/s", "rate", 2300), ("2.3k tok/s", "rate", 2300), ("2.3 ktok/s", "rate", 2300),
    ("2300 tokens per second", "rate", 2300), ("138,000 tokens/min", "rate", 2300), ("2.3k", "rate", 2300),
    ("2 300 tok/s", "rate", 2300), ("2_300 t/s", "rate", 2300),
    ("$0.35", "usd", 0.35), ("0.35", "usd", 0.35), ("$0.35/M tokens", "usd", 0.35), ("0.35 USD", "usd", 0.35),
    ("$0.00035 per 1k tokens", "usd", 0.35), ("US$0.35 per million tokens", "usd", 0.35), ("0.35 $", "usd", 0.35),
    ("4.25", "bits", 4.25), ("4.25 bits", "bits", 4.25), ("0.53125 bytes", "bits", 4.25), ("4.25 bpw", "bits", 4.25),
    ("5", "count", 5), ("5 sequences", "count", 5), ("292k tokens", "count", 292000),
    ("292,048 tokens", "count", 292048),
    ("1.2M", "count", 1.2e6), ("124.8 requests", "count", 124.8), ("batch 405", "count", 405),
    ("1, 2, 4, 8", "list", [1, 2, 4, 8]), ("1 2 4 8 16", "list", [1, 2, 4, 8, 16]), ("TP 1, 2, 4", "list", [1, 2, 4]),
    ("1,2,4,8", "list", [1, 2, 4, 8]), ("4, 2, 1, 2", "list", [1, 2, 4]), ("1, 2 and 4", "list", [1, 2, 4]),
]
REFUSED = [
    ("0.35 s", "bytes", "dimension", "is a time"), ("5 GB", "time", "dimension", "amount of memory"),
    ("5 GB", "count", "dimension", "amount of memory"), ("$5", "bytes", "dimension", "price"),
    ("140 GB/s", "bytes", "unit", "Unknown unit"), ("140 G", "bytes", "unit", "ambiguous"),
    ("130,4 GiB", "bytes", "syntax", "point for decimals"), ("130-140 GB", "bytes", "syntax", "not a range"),
    ("-5 GB", "bytes", "range", "positive"), ("<b>140</b> GB", "bytes", "syntax", "No number"),
    ("", "bytes", "empty", "Type an answer"), ("abc", "bytes", "syntax", "No number"),
    ("140 furlongs", "bytes", "unit", "Unknown unit"), ("1,2345 GB", "bytes", "syntax", "cannot be read"),
    ("x" * 81, "bytes", "syntax", "longer than any answer"), ("1, 2, 32", "list", "range", "1 to 16"),
    ("one, two", "list", "syntax", "whole numbers"), ("0.35 GB", "usd", "dimension", "amount of memory"),
    ("4.25 seconds", "bits", "dimension", "is a time"), ("14 ms/token", "rate", "dimension", "time per token"),
]


def test_parser_reads_answers_as_people_type_them(engine):
    got = drillkit.js_parse(engine, [(t, d) for t, d, _ in PARSED])
    for (text, dim, want), res in zip(PARSED, got):
        assert "error" not in res, (text, res)
        value = res["value"]
        if isinstance(want, list):
            assert value == want, text
        else:
            assert math.isclose(value, want, rel_tol=1e-12), (text, value, want)


def test_parser_refuses_with_a_message_not_a_verdict(engine):
    got = drillkit.js_parse(engine, [(t, d) for t, d, _, _ in REFUSED])
    for (text, dim, kind, words), res in zip(REFUSED, got):
        assert "value" not in res, (text, res)
        assert res["kind"] == kind and words in res["error"], (text, res)


def test_bare_numbers_follow_each_type_rule(engine):
    got = drillkit.js_read(engine, [("1.4e11", "weights"), ("140", "weights"), ("327680", "kv_token"),
                                    ("35", "kv_token"), ("0.35", "prefill"), ("350", "allreduce"),
                                    ("2300", "decode_b1"), ("12", "max_sequences"), ("4.25", "effective_bits")])
    assert got[0]["value"] == 1.4e11 and got[2]["value"] == 327680
    assert "GB, GiB or bytes" in got[1]["error"] and "GB, GiB or bytes" in got[3]["error"]
    assert got[4]["kind"] == "unit" and "ms" in got[4]["error"] and got[5]["kind"] == "unit"
    assert [g["value"] for g in got[6:]] == [2300, 12, 4.25]


# The property test: numbers written every way people write them, with every unit of their dimension.
UNITS = {"bytes": [("B", 1), ("bytes", 1), ("KB", 1e3), ("kB", 1e3), ("KiB", 1024), ("MB", 1e6), ("MiB", 2**20),
                   ("GB", 1e9), ("gb", 1e9), ("GiB", 2**30), ("TB", 1e12), ("TiB", 2**40), ("Gbit", 1.25e8)],
         "time": [("s", 1), ("sec", 1), ("seconds", 1), ("ms", 1e-3), ("µs", 1e-6), ("us", 1e-6), ("ns", 1e-9),
                  ("min", 60), ("h", 3600)],
         "rate": [("tok/s", 1), ("tokens/s", 1), ("tokens per second", 1), ("t/s", 1), ("k tok/s", 1e3),
                  ("ktok/s", 1e3), ("tokens/min", 1 / 60), ("", 1)],
         "count": [("", 1), ("sequences", 1), ("requests", 1), ("tokens", 1), ("k", 1e3), ("M", 1e6), ("million", 1e6)],
         "bits": [("", 1), ("bits", 1), ("bits per weight", 1), ("bytes", 8)],
         "usd": [("", 1), ("$", 1), ("/M tokens", 1), ("per million tokens", 1), ("per 1k tokens", 1e3)]}


@st.composite
def typed_answers(draw):
    dim = draw(st.sampled_from(sorted(UNITS)))
    unit, factor = draw(st.sampled_from(UNITS[dim]))
    whole = draw(st.integers(0, 10**9))
    frac = draw(st.one_of(st.just(""), st.text("0123456789", min_size=1, max_size=4)))
    style = draw(st.sampled_from(["plain", "comma", "space", "underscore", "e", "x10", "super"]))
    digits = str(whole)
    if style in ("comma", "space", "underscore") and not frac:
        sep = {"comma": ",", "space": " ", "underscore": "_"}[style]
        digits = f"{whole:,}".replace(",", sep)
    number = digits + (f".{frac}" if frac else "")
    value = float(str(whole) + (f".{frac}" if frac else ""))
    if style in ("e", "x10", "super"):
        exp = draw(st.integers(-6, 12))
        number += {"e": f"e{exp}", "x10": f" × 10^{exp}",
                   "super": "·10" + str(exp).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))}[style]
        value = float(f"{value!r}e{exp}")
    space = draw(st.sampled_from(["", " "])) if unit and unit[0].isalpha() else " "
    if dim == "usd" and unit == "$" and draw(st.booleans()):
        text = "$" + number
    else:
        text = number + (space + unit if unit else "")
    if draw(st.booleans()):
        text = draw(st.sampled_from(["~", "about ", "≈"])) + text
    return text, dim, value * factor


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(st.lists(typed_answers(), min_size=25, max_size=25))
def test_parser_property_numbers_separators_exponents_units(engine, answers):
    got = drillkit.js_parse(engine, [(t, d) for t, d, _ in answers])
    for (text, dim, want), res in zip(answers, got):
        assert "error" not in res, (text, dim, res)
        value = res["value"] if "value" in res else None
        assert value is not None and math.isclose(value, want, rel_tol=1e-12, abs_tol=1e-300), (text, value, want)


MARKUP = st.text(alphabet=st.sampled_from(list("0123456789.,e GBiKMs/tok$<>&\"'`=()[]{}-_;:!?ab")), min_size=1,
                 max_size=40).filter(lambda s: any(c in s for c in "<>&\"'`=()[]{}"))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(st.lists(st.tuples(MARKUP, st.sampled_from(sorted(UNITS) + ["list"])), min_size=20, max_size=20))
def test_nothing_the_parser_accepts_carries_markup(engine, items):
    got = drillkit.js_parse(engine, items)
    for (text, dim), res in zip(items, got):
        assert "error" in res and "value" not in res, (text, dim, res)


# --- grading -------------------------------------------------------------------------------------------

def _grade(engine, inst, value):
    return engine.evaluate("([inst, v]) => MSIBDrills.grade(inst, v)", [inst, value])


def test_grading_right_wrong_named_and_near(engine):
    inst = next(i for i in (D.make("kv_batch", s) for s in range(500))
                if "k_or_v_once" in i["traps"] and "gb_as_gib" in i["traps"])
    x = inst["answer"]
    assert _grade(engine, inst, x) == {"right": True, "off": 0, "traps": [], "near": []}
    assert _grade(engine, inst, x * 1.09)["right"] and not _grade(engine, inst, x * 1.11)["right"]
    half = _grade(engine, inst, inst["traps"]["k_or_v_once"] * 1.03)   # napkin-rounded, K or V once
    assert not half["right"] and half["traps"] == ["k_or_v_once"]
    near = _grade(engine, inst, inst["traps"]["gb_as_gib"])             # inside 10%, but it is the GiB slip
    assert near["right"] and near["near"] == ["gb_as_gib"] and near["traps"] == []
    far = _grade(engine, inst, x * 1000)
    assert not far["right"] and far["traps"] == [], "a figure far from every mistake names none"


def test_grading_lists_and_the_slack_of_small_counts(engine):
    tp = next(i for i in (D.make("valid_tp", s) for s in range(200)) if "kv_capped_tp" in i["traps"])
    assert _grade(engine, tp, tp["answer"])["right"]
    assert _grade(engine, tp, tp["traps"]["kv_capped_tp"]) == {"right": False, "traps": ["kv_capped_tp"], "near": []}
    seqs = next(i for i in (D.make("max_sequences", s) for s in range(300)) if 3 <= i["answer"] <= 8)
    assert _grade(engine, seqs, seqs["answer"] + 1)["right"]          # one sequence off passes a small count
    assert not _grade(engine, seqs, seqs["answer"] + 2)["right"]
