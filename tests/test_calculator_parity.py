"""The calculator's browser engine against the Python engine: thousands of cases generated in Python
(every catalog model x GPU x format, random contexts, concurrencies, memory fractions and custom GPUs,
and the pasted-config path on the config.json fixtures, intact and broken) run through
calc-engine.js in Chromium in one batch; every output must match to a relative 1e-9. The mutation tests
show that a formula changed on either side only fails the comparison."""

from __future__ import annotations

import pytest

import calckit
from macros import formulas
from macros.catalog import load_catalog
from macros.formulas import memory, speed
from sitebuild import hfconfig


@pytest.fixture(scope="module")
def parity(browser, served_site, built_site):
    cases = calckit.cases()
    expected = calckit.python_results(cases)
    context = browser.new_context()
    page = context.new_page()
    page.goto(served_site + "calculator/")
    actual = calckit.js_results(page, cases)
    source = (built_site / "assets" / "javascripts" / "calc-engine.js").read_text(encoding="utf-8")
    yield {"cases": cases, "expected": expected, "actual": actual, "page": page, "source": source}
    context.close()


def test_cases_cover_every_model_gpu_and_format(parity):
    cat = load_catalog()
    cases = parity["cases"]
    assert len(cases) >= 1000
    grid = {(c["model"], c["gpu"], c["fmt"]) for c in cases if c["kind"] == "grid"}
    assert grid == {(m, g, f) for m in cat.models for g in cat.gpus for f in cat.formats}
    pasted = [c for c in cases if c["kind"] == "config"]
    assert len({id(c["config"]) for c in pasted}) == len(cat.models)  # one fixture per catalog model
    assert any(c["kind"] == "random" and isinstance(c["gpu"], dict) for c in cases)
    # the cases reach every branch that matters: invalid TP, no fit, fit, both limits on context
    results = [e["result"] for e in parity["expected"] if e["result"]]
    assert any(r["tp_problem"] for r in results)
    assert any(r.get("fits") is False for r in results) and any(r.get("fits") for r in results)
    assert {r.get("max_context_limit") for r in results} >= {"memory", "max_position_embeddings"}
    assert any("prefill_s" not in r and "kv_budget" in r for r in results)  # no FP8 rate on that GPU
    assert sum(1 for e in parity["expected"] if e["parse"] and e["parse"]["errors"]) >= 30


def test_browser_engine_equals_python_engine(parity):
    problems = calckit.all_mismatches(parity["expected"], parity["actual"])
    assert not problems, f"{len(problems)} differences, first ones:\n" + "\n".join(problems[:20])


def _rerun_with(page, source: str, old: str, new: str, cases):
    assert source.count(old) == 1, f"mutation target {old!r} not found once in calc-engine.js"
    page.add_script_tag(content=source.replace(old, new))  # redefines window.MSIBCalcEngine
    try:
        return calckit.js_results(page, cases)
    finally:
        page.add_script_tag(content=source)


@pytest.mark.parametrize("old, new, field", [
    ("return 2 * numLayers * numKvHeads * headDim * elementBytes;",
     "return numLayers * numKvHeads * headDim * elementBytes;", "kv_per_token"),
    ("return numExperts * (1 - Math.pow(1 - topK / numExperts, batch));",
     "return topK;", "decode_step_s"),
    ("} else { shared = s / width; }", "} else { shared = 0; }", "num_shared_experts"),
    ("4 * p + headDim + heads", "4 * p + heads", "params_total"),                        # KDA projections
    ("(la.kda ? 1 / tp : kvFractionPerGpu(m, tp))", "(la.kda ? 1 : kvFractionPerGpu(m, tp))",
     "kv_per_sequence_gpu"),                                                            # KDA state split by TP
    ("b.latent_projections * spread + kda", "kda", "weights_per_gpu"),                  # replicated latent MoE
    ("return g.cuda_total_bytes != null ? g.cuda_total_bytes : g.memory_bytes;",
     "return g.memory_bytes;", "kv_budget"),                                            # nvidia-smi, not CUDA total
])
def test_a_formula_changed_in_javascript_only_fails(parity, old, new, field):
    actual = _rerun_with(parity["page"], parity["source"], old, new, parity["cases"])
    problems = calckit.all_mismatches(parity["expected"], actual)
    assert any(field in p for p in problems), problems[:5]


def test_a_formula_changed_in_python_only_fails(parity, monkeypatch):
    original = memory.kv_bytes_per_token_mha
    monkeypatch.setattr(memory, "kv_bytes_per_token_mha", lambda *a: original(*a) / 2)  # K only, V forgotten
    cases = parity["cases"][:400]
    problems = calckit.all_mismatches(calckit.python_results(cases), parity["actual"][:400])
    assert any("kv_per_token" in p for p in problems)


def test_a_speed_formula_changed_in_python_only_fails(parity, monkeypatch):
    monkeypatch.setattr(speed, "expected_experts_touched", lambda e, k, b: float(k))
    moe = [i for i, c in enumerate(parity["cases"]) if c["kind"] == "grid" and c["model"] == "deepseek-v3"][:50]
    expected = calckit.python_results([parity["cases"][i] for i in moe])
    problems = calckit.all_mismatches(expected, [parity["actual"][i] for i in moe])
    assert any("decode_weight_read" in p for p in problems)


def test_a_config_rule_changed_in_python_only_fails(parity, monkeypatch):
    monkeypatch.setattr(hfconfig, "LINEAR_STATE_BYTES", 4)  # FP32 recurrent state instead of BF16
    idx = [i for i, c in enumerate(parity["cases"]) if c["kind"] == "config"]
    expected = calckit.python_results([parity["cases"][i] for i in idx])
    problems = calckit.all_mismatches(expected, [parity["actual"][i] for i in idx])
    assert any("state_bytes_per_layer" in p for p in problems)


def test_a_hybrid_state_rule_changed_in_python_only_fails(parity, monkeypatch):
    original = formulas.hybrid_sequence_bytes_per_gpu
    monkeypatch.setattr(formulas, "hybrid_sequence_bytes_per_gpu",  # KDA states kept whole on every GPU
                        lambda m, ctx, kv, tp, block_size=16: original(m, ctx, kv, 1, block_size))
    idx = [i for i, c in enumerate(parity["cases"]) if c.get("model") == "kimi-k3" and c["n"] > 1]
    expected = calckit.python_results([parity["cases"][i] for i in idx])
    problems = calckit.all_mismatches(expected, [parity["actual"][i] for i in idx])
    assert any("kv_per_sequence_gpu" in p for p in problems)
