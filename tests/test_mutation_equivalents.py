"""The mutation benchmark's record of equivalent mutants (scripts/perf/mutation_equivalent.yaml) names
only mutants that exist: each recorded line is still a line of its function, and the mutated line is
different and still parses. Also how mutmut's mutant names and diffs map to those stable ids."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from scripts.perf.mutation import (EQUIVALENT_FILE, MutantId, function_lines, function_name, function_source,
                                   load_equivalents, parse_diff)

ROOT = Path(__file__).resolve().parent.parent
RECORDED = [(module, mid) for module, entries in load_equivalents().items() for mid in entries]


@pytest.mark.parametrize(("module", "mid"), RECORDED, ids=[f"{m}:{i.function}:{i.after[:40]}" for m, i in RECORDED])
def test_each_recorded_mutant_is_a_line_of_its_function(module, mid):
    source = (ROOT / "livecoding" / f"{module}.py").read_text(encoding="utf-8")
    lines = function_lines(source, mid.function)
    assert lines is not None, f"{EQUIVALENT_FILE.name}: livecoding/{module}.py has no function {mid.function}"
    assert mid.before in lines, f"{EQUIVALENT_FILE.name}: {mid.function} has no line {mid.before!r} (edited?)"
    assert mid.after != mid.before
    # The mutated function still parses: a recorded `after` that mutmut could not have produced would not.
    body = function_source(source, mid.function)
    mutated = "\n".join(line.replace(mid.before, mid.after) if line.strip() == mid.before else line
                        for line in body.splitlines())
    assert mutated != body
    ast.parse(mutated)


def test_the_record_is_not_empty_and_has_reasons():
    data = load_equivalents()
    assert data["prefix_router"], "Q152's equivalents are recorded"
    assert all(len(reason.split()) >= 4 for entries in data.values() for reason in entries.values())


def test_mutmut_names_and_diffs_map_to_stable_ids():
    assert function_name("livecoding.prefix_router.xǁPrefixRouterǁroute__mutmut_37") == "PrefixRouter.route"
    assert function_name("livecoding.prefix_router.x_block_hashes__mutmut_5") == "block_hashes"
    assert function_name("livecoding.kv_block_pool.xǁBlockPoolǁ__init____mutmut_2") == "BlockPool.__init__"
    diff = ("--- livecoding/prefix_router.py\n+++ livecoding/prefix_router.py\n@@ -1,4 +1,4 @@\n"
            " def route(self, tokens):\n-            if not best or key < best_key:\n"
            "+            if not best or key <= best_key:\n             best = name\n")
    assert parse_diff("livecoding.prefix_router.xǁPrefixRouterǁroute__mutmut_37", diff) == MutantId(
        "PrefixRouter.route", "if not best or key < best_key:", "if not best or key <= best_key:")
    with pytest.raises(ValueError, match="mutmut mutant name"):
        function_name("livecoding.prefix_router.route")


@pytest.mark.parametrize(("text", "problem"), [
    ("- a list\n", "expected a mapping"),
    ("nosuchmodule: []\n", "not a live-coding module"),
    ("prefix_router: {a: 1}\n", "expected a list"),
    ("prefix_router:\n  - {function: f, before: x}\n", "expected non-empty strings"),
    ("prefix_router:\n  - {function: f, before: x, after: y, reason: r}\n"
     "  - {function: f, before: x, after: y, reason: again}\n", "recorded twice"),
    ("prefix_router: [a: b: c]\n", "not valid YAML"),
])
def test_a_malformed_record_is_refused_naming_the_file(tmp_path, text, problem):
    path = tmp_path / "mutation_equivalent.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=problem) as err:
        load_equivalents(path)
    assert str(path) in str(err.value)
