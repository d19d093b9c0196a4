"""Cache salting in a multi-tenant prefix cache: what isolating tenants costs (Q147).

A prefix that N tenants share is one cached copy without salting. Salted per tenant (vLLM V1's
``cache_salt`` enters the first block's hash, so every block of the prefix differs per salt), it becomes
N copies, each kept warm only by its own tenant's traffic.

Model (stated on the page): requests arrive as a Poisson process, spread evenly over the tenants; a
cached prefix stays resident for ``residency_s`` seconds after its last use and is gone after that
(an LRU cache under steady pressure behaves roughly so). A request then finds its prefix cached when
the previous request of its group came less than ``residency_s`` ago: probability ``1 − exp(−λ τ)`` for
the group's arrival rate λ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._checks import positive, positive_int

__all__ = ["SaltingCost", "prefix_hit_probability", "salting_cost"]


def prefix_hit_probability(rate_per_s: float, residency_s: float) -> float:
    """P(the previous request of the group arrived within the residency time) = 1 − exp(−rate × τ)."""
    positive("rate_per_s", rate_per_s)
    positive("residency_s", residency_s)
    return -math.expm1(-rate_per_s * residency_s)


@dataclass(frozen=True)
class SaltingCost:
    tenants: int
    hit_shared: float          # hit probability of the shared prefix, one copy for everyone
    hit_salted: float          # hit probability with one copy per tenant
    extra_prefill_tokens_per_h: float  # prefix tokens recomputed per hour because of salting
    copies_shared: float       # expected resident copies without salting (at most 1)
    copies_salted: float       # expected resident copies with a salt per tenant


def salting_cost(requests_per_hour: float, tenants: int, prefix_tokens: int, residency_s: float) -> SaltingCost:
    """What per-tenant salting of one shared prefix costs.

    ``extra = R × P × (hit_shared − hit_salted)`` prefix tokens per hour, with
    ``hit_shared = 1 − exp(−λ τ)`` and ``hit_salted = 1 − exp(−λ τ / N)`` (λ = R / 3600 per second);
    resident copies: ``1 − exp(−λ τ)`` without salting, ``N × (1 − exp(−λ τ / N))`` with it.
    """
    positive("requests_per_hour", requests_per_hour)
    tenants = positive_int("tenants", tenants)
    prefix_tokens = positive_int("prefix_tokens", prefix_tokens)
    rate = requests_per_hour / 3600.0
    shared = prefix_hit_probability(rate, residency_s)
    salted = prefix_hit_probability(rate / tenants, residency_s)
    extra = requests_per_hour * prefix_tokens * (shared - salted)
    return SaltingCost(tenants, shared, salted, extra, shared, tenants * salted)
