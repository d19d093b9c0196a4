"""PromQL on the monitoring pages and in the example rule files: every expression parses
(promql-parser) and selects only metric names that exist in the engine release named in
tests/promql_metrics.py, or that a rule file records."""

from __future__ import annotations

import re
from pathlib import Path

import promql_parser
import pytest
import yaml

from tests.promql_metrics import METRICS, known_names

ROOT = Path(__file__).resolve().parent.parent
PAGES = ROOT / "docs" / "deployment" / "monitoring"
RULES = ROOT / "examples" / "prometheus"
_FENCE = re.compile(r"^```promql[^\n]*\n(.*?)^```", re.M | re.S)


def promql_blocks(markdown: str) -> list[tuple[int, str]]:
    """Every ```promql fenced block of a page: (line number of the fence, expression)."""
    return [(markdown.count("\n", 0, m.start()) + 1, m.group(1)) for m in _FENCE.finditer(markdown)]


def rule_exprs(path: Path) -> list[tuple[str, str]]:
    """(rule name, expr) of every rule in a Prometheus rule file."""
    doc = yaml.safe_load(path.read_text(encoding="utf-8"))
    return [(r.get("record") or r.get("alert"), r["expr"]) for g in doc["groups"] for r in g["rules"]]


def recorded_names() -> set[str]:
    names = set()
    for f in sorted(RULES.glob("*.rules.yml")):
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        names |= {r["record"] for g in doc["groups"] for r in g["rules"] if "record" in r}
    return names


def selected_names(expr: str) -> list[str | None]:
    """Metric names of every vector selector in ``expr`` (None for a selector without a name)."""
    names: list[str | None] = []

    def visit(node):
        if isinstance(node, promql_parser.VectorSelector):
            names.append(node.name)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return names


def unknown_metrics(expr: str, allowed: set[str]) -> list[str]:
    """Names in ``expr`` that are neither a known engine metric nor in ``allowed``; a nameless selector
    is reported as ``{...}``."""
    known = known_names()
    return [n or "{...}" for n in selected_names(expr) if n is None or (n not in known and n not in allowed)]


def _cases():
    pages = sorted(PAGES.glob("*.md"))
    for page in pages:
        for line, expr in promql_blocks(page.read_text(encoding="utf-8")):
            yield pytest.param(expr, id=f"{page.name}:{line}")
    for f in sorted(RULES.glob("*.rules.yml")):
        for name, expr in rule_exprs(f):
            yield pytest.param(expr, id=f"{f.name}:{name}")


CASES = list(_cases())


#: Pages that must show PromQL; the extraction must find their blocks (a silent zero would pass everything).
PAGES_WITH_PROMQL = ("slo-sli-sla.md", "prometheus-metrics-p99.md", "golden-signals.md", "data-drift.md",
                     "alert-design.md", "capacity-saturation.md", "distributed-tracing.md",
                     "metrics-logs-traces.md", "chaos-engineering.md")


def test_pages_show_promql():
    for name in PAGES_WITH_PROMQL:
        page = PAGES / name
        assert page.is_file(), f"{page} is missing"
        assert promql_blocks(page.read_text(encoding="utf-8")), f"{page}: no ```promql block found"
    page_cases = [c for c in CASES if ".md:" in c.id]
    assert len(page_cases) >= 5, f"only {len(page_cases)} ```promql blocks found under {PAGES}"
    assert len(CASES) - len(page_cases) >= 8, "rule files under examples/prometheus/ not found"


@pytest.mark.parametrize("expr", CASES)
def test_expression_parses_and_uses_known_metrics(expr):
    try:
        promql_parser.parse(expr)
    except ValueError as exc:
        pytest.fail(f"PromQL does not parse ({exc}):\n{expr}")
    bad = unknown_metrics(expr, recorded_names())
    assert not bad, (f"unknown metric name(s) {bad}: add them to tests/promql_metrics.py with the engine "
                     f"release that exposes them, or fix the query:\n{expr}")


def test_checker_rejects_bad_queries():
    with pytest.raises(ValueError):
        promql_parser.parse("sum(rate(vllm:num_requests_waiting[5m])")
    assert unknown_metrics("rate(vllm:num_requests_swapped[5m])", set()) == ["vllm:num_requests_swapped"]
    assert unknown_metrics('sum(rate({job="vllm"}[5m]))', set()) == ["{...}"]
    assert unknown_metrics("histogram_quantile(0.99, rate(vllm:time_to_first_token_seconds_bucket[5m]))",
                           set()) == []


def test_metric_table_is_well_formed():
    for name, (kind, (source, url)) in METRICS.items():
        assert kind in {"counter", "gauge", "histogram"}, name
        assert url.startswith("https://github.com/") and "/blob/" in url, name
        assert re.search(r"\d+\.\d+", source), f"{name}: source must name a release"
        if kind == "counter":
            assert name.endswith("_total"), f"{name}: counters are stored with the _total suffix"


def test_promql_blocks_extraction():
    md = "x\n```promql\nrate(a[5m])\n```\n\n```python\nnot = promql\n```\n```promql title=\"q\"\nb\n```\n"
    assert promql_blocks(md) == [(2, "rate(a[5m])\n"), (9, "b\n")]
