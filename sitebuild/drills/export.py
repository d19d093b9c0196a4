"""The drills' data script: types and templates, the mistakes' names, the catalog slice, the defaults,
the generator's settings and the links, as ``window.MSIB_DRILLS`` for the browser engine."""

from __future__ import annotations

import json

from macros.catalog import Catalog, load_catalog
from macros.formulas import traps as T

from ..calculator import DEFAULTS, export_format, export_gpu, export_model
from .core import (ATTEMPTS, CONTEXTS, DAILY_SIZE, DRILLS_PAGE, EXPERT_FORMATS, KV_CLASSES, MAX_SET, MIN_TRAP_DIFF,
                   RIDGE_FORMATS, SHEET_FORMATS, SHEET_KV, TP_CHOICES)
from .cost import COST_RATES
from .kinds import TYPES
from .speed import ALLREDUCE_BATCHES, DECODE_CONTEXTS, PREFILL_CONTEXTS


# --------------------------------------------------------------------------------------------------
# the data script
# --------------------------------------------------------------------------------------------------

REF_PAGES = {"model": "reference/models.md", "gpu": "reference/gpus.md", "format": "reference/formats.md",
             "price": "reference/prices.md", "api": "reference/prices.md", "drills": DRILLS_PAGE}


class DrillExportError(ValueError):
    """The drills cannot be exported for this site; the message names what is missing."""


def _catalog_slice(cat: Catalog) -> dict:
    gpus = []
    for g in cat.gpus.values():
        row = export_gpu(g)
        row["interconnect"] = g.interconnect
        gpus.append(row)
    formats = []
    for f in cat.formats.values():
        row = export_format(f)
        row.update(group_size=f.group_size, scale_bits=f.scale_bits)
        formats.append(row)
    models = [dict(export_model(m), head_dim_in_config=m.head_dim_in_config) for m in cat.models.values()]
    return {"models": models, "gpus": gpus, "formats": formats,
            "gpu_prices": [{"key": p.key, "gpu": p.gpu, "usd_per_hour": p.usd_per_hour}
                           for p in cat.prices.gpu_hour.values()],
            "api_prices": [{"key": a.key, "name": a.name, "usd_per_m_input": a.usd_per_m_input,
                            "usd_per_m_output": a.usd_per_m_output} for a in cat.prices.api.values()]}


def question_ids() -> set[int]:
    """Every question a drill links to: each type's own and the ones its makers pick for a problem
    (sliding-window and hybrid models: Q121; long prompts: Q116)."""
    return {t.question for t in TYPES.values()} | {121, 116}


def payload(questions: dict[int, tuple[str, str]], page_urls: dict[str, str], cat: Catalog | None = None) -> dict:
    """Everything the drill engine needs: the types with their templates, the mistakes' names, the
    catalog slice, the calculator's defaults and the engine's settings, and the addresses (relative to
    the site root, as MkDocs wrote them) of the questions and pages the drills link to.

    ``questions`` maps a question id to (URL, title); ``page_urls`` maps a docs source path to its URL.
    """
    cat = cat or load_catalog()
    missing = sorted(q for q in question_ids() if q not in questions)
    if missing:
        raise DrillExportError("sitebuild/drills/export.py: the drills link to questions that are not in this site: "
                               + ", ".join(f"Q{q}" for q in missing))
    absent = sorted({p for p in REF_PAGES.values() if p not in page_urls})
    if absent:
        raise DrillExportError("sitebuild/drills/export.py: the drills link to pages that are not in this site: "
                               + ", ".join(f"docs/{p}" for p in absent))
    return {
        "types": [{"key": t.key, "title": t.title, "question": t.question, "dim": t.dim, "tolerance": t.tolerance,
                   "slack": t.slack, "bare": t.bare, "noun": t.noun, "templates": t.templates}
                  for t in TYPES.values()],
        "traps": {k: {"name": n, "why": w} for k, (n, w) in T.TRAPS.items()},
        "catalog": _catalog_slice(cat),
        "defaults": DEFAULTS,
        "settings": {"min_trap_diff": MIN_TRAP_DIFF, "attempts": ATTEMPTS, "daily_size": DAILY_SIZE,
                     "max_set": MAX_SET, "kv_classes": list(KV_CLASSES), "contexts": list(CONTEXTS),
                     "sheet_formats": list(SHEET_FORMATS), "sheet_kv": list(SHEET_KV),
                     "expert_formats": list(EXPERT_FORMATS), "tp_choices": list(TP_CHOICES),
                     "ridge_formats": list(RIDGE_FORMATS), "decode_contexts": list(DECODE_CONTEXTS),
                     "prefill_contexts": list(PREFILL_CONTEXTS), "cost_rates": list(COST_RATES),
                     "allreduce_batches": list(ALLREDUCE_BATCHES)},
        "questions": {str(q): {"url": questions[q][0], "title": questions[q][1]} for q in sorted(question_ids())},
        "pages": {kind: page_urls[src] for kind, src in REF_PAGES.items()},
    }


def drills_script(questions: dict[int, tuple[str, str]], page_urls: dict[str, str], cat: Catalog | None = None) -> str:
    """The data script: ``window.MSIB_DRILLS = {...};`` (a script, not JSON fetched at run time, so that
    the drills work from ``file://`` in the offline bundle)."""
    text = json.dumps(payload(questions, page_urls, cat), ensure_ascii=False, separators=(",", ":"))
    return "window.MSIB_DRILLS=" + text.replace("</", "<\\/") + ";\n"
