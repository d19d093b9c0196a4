"""Per-tenant prefix-cache salting (macros/formulas/cachesalt.py), against values worked by hand."""

from __future__ import annotations

import math

import pytest

from macros import formulas as F


def test_hit_probability_is_one_minus_exp_of_rate_times_residency():
    # one request a minute, a copy that lives a minute: 1 - e^-1
    assert F.prefix_hit_probability(1 / 60, 60) == pytest.approx(0.6321205588285577, rel=1e-12)


def test_one_tenant_costs_nothing():
    c = F.salting_cost(3600, 1, 100, 10)
    assert c.extra_prefill_tokens_per_h == 0
    assert c.hit_salted == c.hit_shared == pytest.approx(1 - math.exp(-10))
    assert c.copies_salted == pytest.approx(c.copies_shared)


def test_four_tenants_worked_by_hand():
    # 7,200 requests per hour = 2 per second; residency 2 s; 4 tenants: 0.5 per second each.
    c = F.salting_cost(7200, 4, 1000, 2)
    shared, salted = 1 - math.exp(-4), 1 - math.exp(-1)          # 0.981684, 0.632121
    assert c.hit_shared == pytest.approx(shared, rel=1e-12)
    assert c.hit_salted == pytest.approx(salted, rel=1e-12)
    assert c.extra_prefill_tokens_per_h == pytest.approx(7200 * 1000 * (shared - salted), rel=1e-12)
    assert c.extra_prefill_tokens_per_h == pytest.approx(2_516_859.6, rel=1e-6)
    assert c.copies_salted == pytest.approx(4 * salted, rel=1e-12)   # 2.528 copies resident on average


def test_more_tenants_never_cost_less():
    costs = [F.salting_cost(36000, n, 2000, 20).extra_prefill_tokens_per_h for n in (1, 2, 10, 100, 1000)]
    assert costs == sorted(costs) and costs[0] == 0 and costs[-1] > 0


@pytest.mark.parametrize("args", [
    (0, 10, 100, 5), (float("nan"), 10, 100, 5), (3600, 0, 100, 5), (3600, 2.5, 100, 5),
    (3600, 10, 0, 5), (3600, 10, 100, 0), (3600, 10, 100, float("inf")), (3600, True, 100, 5),
])
def test_bad_input_is_refused(args):
    with pytest.raises(ValueError):
        F.salting_cost(*args)


def test_the_page_macro_shows_the_formula_values():
    from macros.render.registry import MACROS
    html = MACROS["salting_cost_table"]("llama-3.1-8b", "h100-sxm", prefix_tokens=2000, requests_per_hour=36000,
                                        tenant_counts=[1, 1000], residency_s=20)
    extra = F.salting_cost(36000, 1000, 2000, 20).extra_prefill_tokens_per_h
    assert f"{round(extra):,}" in html
    # The pool is what vLLM leaves for KV: weights and the activation and runtime allowances come off.
    from macros import units as U
    from macros.catalog import load_catalog
    cat = load_catalog()
    m, g = cat.models["llama-3.1-8b"], cat.gpus["h100-sxm"]
    pool = g.engine_memory_bytes * 0.92 - F.weight_bytes(m, cat.formats["bf16"]) - 3 * 2**30
    assert U.fmt_gb(pool) in html
    with pytest.raises(Exception, match="tenant_counts"):
        MACROS["salting_cost_table"]("llama-3.1-8b", "h100-sxm", tenant_counts=[0])
