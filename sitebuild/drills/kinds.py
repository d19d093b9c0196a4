"""Every drill type with its tolerance, and one drill drawn from a type and a seed; the daily set."""

from __future__ import annotations

from macros.catalog import Catalog, load_catalog

from .core import (DAILY_SIZE, TOL, Ctx, DrillType, Rng, _differs, answer_text, fnv1a, render)
from .cost import COST_PER_M, CROSSOVER, LITTLES_LAW, make_cost_per_m, make_crossover, make_littles_law
from .deploy import FIT, MAX_CONTEXT, MAX_SEQUENCES, make_fit, make_max_context, make_max_sequences
from .sizing import (EFFECTIVE_BITS, KV_BATCH, KV_TOKEN, VALID_TP, WEIGHTS, make_effective_bits, make_kv_batch,
                     make_kv_token, make_valid_tp, make_weights)
from .speed import (ALLREDUCE, DECODE_B1, DECODE_BATCH, PREFILL, RIDGE_BATCH, make_allreduce, make_decode_b1,
                    make_decode_batch, make_prefill, make_ridge_batch)


def _type(key, title, question, dim, tolerance, bare, noun, templates, make, slack=0) -> DrillType:
    return DrillType(key, title, question, dim, tolerance, bare, noun, templates, make, slack)


#: Every drill type, in the order the drills page lists them.
TYPES: dict[str, DrillType] = {t.key: t for t in (
    _type("weights", "Weight footprint", 4, "bytes", TOL, 1e6, "", WEIGHTS, make_weights),
    _type("kv_token", "KV bytes per token", 75, "bytes", TOL, 1000, "", KV_TOKEN, make_kv_token),
    _type("kv_batch", "KV cache of a batch", 75, "bytes", TOL, 1e6, "", KV_BATCH, make_kv_batch),
    _type("max_sequences", "Most sequences that fit", 102, "count", TOL, 0, "sequences", MAX_SEQUENCES,
          make_max_sequences, slack=1),
    _type("max_context", "Longest context that fits", 102, "count", TOL, 0, "tokens", MAX_CONTEXT,
          make_max_context),
    _type("valid_tp", "Valid tensor-parallel degrees", 95, "list", 0.0, 0, "", VALID_TP, make_valid_tp),
    _type("fit", "Does it fit: memory per GPU", 80, "bytes", TOL, 1e6, "", FIT, make_fit),
    _type("decode_b1", "Batch-1 decode bound", 101, "rate", TOL, 0, "", DECODE_B1, make_decode_b1),
    _type("decode_batch", "Decode bound at batch B", 7, "rate", TOL, 0, "", DECODE_BATCH, make_decode_batch),
    _type("prefill", "Prefill time at a stated MFU", 81, "time", TOL, None, "", PREFILL, make_prefill),
    _type("ridge_batch", "Arithmetic intensity against the ridge point", 7, "count", TOL, 0, "", RIDGE_BATCH,
          make_ridge_batch),
    _type("littles_law", "Little's law: requests in flight", 6, "count", TOL, 0, "requests", LITTLES_LAW,
          make_littles_law),
    _type("cost_per_m", "Cost per million tokens", 114, "usd", TOL, 0, "", COST_PER_M, make_cost_per_m),
    _type("crossover", "Self-host or API: the crossover", 114, "rate", TOL, 0, "", CROSSOVER, make_crossover),
    _type("allreduce", "All-reduce time per step under TP", 79, "time", TOL, None, "", ALLREDUCE, make_allreduce),
    _type("effective_bits", "Effective bits of a block-scaled format", 144, "bits", 0.01, 0, "", EFFECTIVE_BITS,
          make_effective_bits),
)}



def daily_set(day: str) -> list[tuple[str, int]]:
    """The set of the day ``YYYY-MM-DD``: :data:`DAILY_SIZE` different drill types and a seed each."""
    rng = Rng(fnv1a("msib-drills:" + day))
    keys = list(TYPES)
    for i in range(len(keys) - 1, 0, -1):
        j = rng.index(i + 1)
        keys[i], keys[j] = keys[j], keys[i]
    return [(k, int(rng.random() * 4294967296)) for k in keys[:DAILY_SIZE]]



# --------------------------------------------------------------------------------------------------
# one drill
# --------------------------------------------------------------------------------------------------


def make(key: str, seed: int, cat: Catalog | None = None) -> dict:
    """The drill of type ``key`` drawn with ``seed`` (0 to 2**32 - 1): problem, answer key, the named
    mistakes that change the answer, and the worked solution."""
    dt = TYPES[key]
    if not (isinstance(seed, int) and 0 <= seed <= 0xFFFFFFFF):
        raise ValueError(f"seed must be a whole number from 0 to 4294967295, got {seed!r}")
    ctx = _context(cat)
    draft = dt.make(Rng(seed), ctx)
    out = {"type": key, "seed": seed, "question": draft.question or dt.question, "refs": draft.refs,
           "answer": draft.answer, "answer_text": answer_text(dt, draft.answer),
           "traps": {k: t for k, t in draft.traps.items() if _differs(t, draft.answer)}}
    if draft.napkin is not None:
        out["napkin"] = draft.napkin
    out.update(render(dt.templates, draft.values))
    return out


_CTX: dict = {}


def _context(cat: Catalog | None) -> Ctx:
    cat = cat or load_catalog()
    if _CTX.get("cat") is not cat:
        _CTX["cat"], _CTX["ctx"] = cat, Ctx(cat)
    return _CTX["ctx"]
