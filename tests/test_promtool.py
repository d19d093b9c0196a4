"""The example rule files under examples/prometheus/ are checked and unit-tested with Prometheus's own
promtool (Debian's `prometheus` package, installed by scripts/test and .ci/run when missing), and the
histogram_quantile formula behind the Q56 macro is cross-checked against promtool's evaluation."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from macros import formulas as F
from macros.render import REGISTRY

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "examples" / "prometheus"
RULE_FILES = sorted(RULES.glob("*.rules.yml"))
TEST_FILES = sorted(RULES.glob("*.test.yml"))


@pytest.fixture(scope="module")
def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        pytest.fail("promtool not found: install Debian's `prometheus` package (scripts/test does this when "
                    "it is missing); the rule-file tests cannot run without it")
    return path


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


def test_every_rule_file_has_a_test_file():
    assert RULE_FILES, f"no *.rules.yml under {RULES}"
    tested = set()
    for t in TEST_FILES:
        tested |= set(yaml.safe_load(t.read_text(encoding="utf-8"))["rule_files"])
    missing = [f.name for f in RULE_FILES if f.name not in tested]
    assert not missing, f"rule files without a promtool test file: {missing}"


@pytest.mark.parametrize("rule_file", RULE_FILES, ids=lambda p: p.name)
def test_promtool_check_rules(promtool, rule_file):
    r = _run([promtool, "check", "rules", rule_file.name], RULES)
    assert r.returncode == 0, f"promtool check rules {rule_file.name} failed:\n{r.stdout}{r.stderr}"


@pytest.mark.parametrize("test_file", TEST_FILES, ids=lambda p: p.name)
def test_promtool_test_rules(promtool, test_file):
    r = _run([promtool, "test", "rules", test_file.name], RULES)
    assert r.returncode == 0, f"promtool test rules {test_file.name} failed:\n{r.stdout}{r.stderr}"


def test_promtool_tests_can_fail(promtool, tmp_path):
    # A rule file whose fast-burn threshold is ten times too high must fail its own test file.
    for f in RULES.iterdir():
        shutil.copy(f, tmp_path / f.name)
    rules = tmp_path / "slo-burn-rate.rules.yml"
    rules.write_text(rules.read_text(encoding="utf-8").replace("(14.4 * 0.001)", "(144 * 0.001)"),
                     encoding="utf-8")
    r = _run([promtool, "test", "rules", "slo-burn-rate.test.yml"], tmp_path)
    assert r.returncode != 0 and "FAILED" in r.stdout + r.stderr


def test_burn_rate_thresholds_match_the_formula():
    # The page's burn-rate table (macro) and the rule file must agree on every threshold.
    doc = yaml.safe_load((RULES / "slo-burn-rate.rules.yml").read_text(encoding="utf-8"))
    alerts = {r["alert"]: r["expr"] for g in doc["groups"] for r in g["rules"] if "alert" in r}
    pairs = re.findall(r"ratio_rate(\w+) > \(([\d.]+) \* ([\d.]+)\)", " ".join(alerts.values()))
    hours = {"5m": 5 / 60, "30m": 0.5, "1h": 1, "6h": 6, "3d": 72}
    found = sorted((hours[w], round(float(rate), 9), round(float(budget), 9)) for w, rate, budget in pairs)
    expected = []
    for _sev, share, long_h, short_h in F.MWMB_POLICY:
        rate = round(F.burn_rate_threshold(share, long_h, 30), 9)
        expected += [(h, rate, round(F.error_budget_fraction(0.999), 9)) for h in (long_h, short_h)]
    assert found == sorted(expected)


# vLLM 0.11's TTFT buckets (vllm/v1/metrics/loggers.py) with a synthetic latency distribution.
TTFT_BOUNDS = [0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
               20.0, 40.0, 80.0, 160.0, 640.0, 2560.0]
TTFT_COUNTS = [0, 0, 0, 3, 40, 220, 610, 905, 2480, 1710, 820, 460, 510, 160, 45, 21, 11, 4, 1, 0, 0, 0, 0]
QUANTILES = [0.01, 0.25, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0]


def _series_file(bounds, counts, quantiles, expected) -> str:
    cum = F.cumulative(counts)
    les = [repr(float(b)) for b in bounds] + ["+Inf"]
    lines = ["evaluation_interval: 1m", "tests:", "  - interval: 1m", "    input_series:"]
    for le, c in zip(les, cum):
        lines += [f"      - series: 'vllm:time_to_first_token_seconds_bucket{{le=\"{le}\", model_name=\"m\"}}'",
                  f"        values: '{int(c)}x3'"]
    lines.append("    promql_expr_test:")
    for q, v in zip(quantiles, expected):
        lines += [f"      - expr: histogram_quantile({q!r}, vllm:time_to_first_token_seconds_bucket)",
                  "        eval_time: 1m",
                  "        exp_samples:",
                  "          - labels: '{model_name=\"m\"}'",
                  f"            value: {v!r}"]
    return "\n".join(lines) + "\n"


def _check_against_promtool(promtool, tmp_path, bounds, counts, quantiles):
    cum = F.cumulative(counts)
    buckets = list(zip(bounds + [math.inf], cum))
    expected = [F.histogram_quantile(q, buckets) for q in quantiles]
    path = tmp_path / "quantile.test.yml"
    path.write_text(_series_file(bounds, counts, quantiles, expected), encoding="utf-8")
    r = _run([promtool, "test", "rules", path.name], tmp_path)
    assert r.returncode == 0, f"promtool disagrees with the macro's histogram_quantile:\n{r.stdout}{r.stderr}"
    return expected


def test_histogram_quantile_macro_agrees_with_promtool(promtool, tmp_path):
    # Two implementations, one series: promtool's PromQL engine and macros/formulas/histograms.py.
    expected = _check_against_promtool(promtool, tmp_path, TTFT_BOUNDS, TTFT_COUNTS, QUANTILES)
    assert expected[-1] == 80.0  # q = 1: the top of the highest bucket that holds observations
    # and the worked example the Q56 page renders (its macro's own example call)
    example = REGISTRY["histogram_quantile_example"].example
    q, bounds, counts = eval(example[example.index("("):], {})  # noqa: S307 (our own literal)
    _check_against_promtool(promtool, tmp_path, bounds, counts, [q, 0.5, 0.9, 0.999])


def test_cross_check_can_fail(promtool, tmp_path):
    # A wrong expected value must make promtool fail, or the agreement above proves nothing.
    bounds, counts = [0.1, 0.5, 1.0], [10, 50, 30, 10]
    text = _series_file(bounds, counts, [0.5], [0.43])  # the right answer is 0.42
    (tmp_path / "wrong.test.yml").write_text(text, encoding="utf-8")
    r = _run([promtool, "test", "rules", "wrong.test.yml"], tmp_path)
    assert r.returncode != 0
