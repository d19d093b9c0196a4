"""Napkin-math drills: problems generated from the catalog and the sizing formulas, drawn with a seed,
with an answer key, the named mistakes a wrong answer may match, and a worked solution.

This package is the Python reference of the browser's drill engine (``docs/assets/javascripts/
drills-engine.js``), as :mod:`sitebuild.calcsheet` is of the calculator's: for a drill type and a seed
both draw the same problem with the same generator (mulberry32), compute the same answer with the
same engine (the calculator's sheet where the drill is a deployment, :mod:`macros.formulas` otherwise;
the mistakes from :mod:`macros.formulas.traps`) and fill the same text. tests/test_drills_parity.py
runs hundreds of seeds of every type through both and requires equal results.

The texts (prompt, formula, inputs with their sources, substitution, result) are templates, written
once here and exported to the browser in the data script (:func:`drills_script`); each side computes
the values that fill them. A template line may start with ``?name:`` (kept only when the value
``name`` exists) or ``!name:`` (only when it does not); ``{name}`` is replaced by the value, and a
missing value is an error, never an empty string. Pure Python; the build hook writes the script.

Modules: :mod:`.core` (the generator, the templates, the records), :mod:`.sizing`, :mod:`.deploy`,
:mod:`.speed` and :mod:`.cost` (the drill types by topic), :mod:`.kinds` (every type, one drill, the
daily set), :mod:`.export` (the data script).
"""

from .core import (ATTEMPTS, DAILY_SIZE, DATA_SCRIPT, DRILLS_PAGE, MAX_SET, MIN_TRAP_DIFF, TOL, DrillType, Rng,
                   answer_text, fill, fnv1a, kv_class, render)
from .export import REF_PAGES, DrillExportError, drills_script, payload, question_ids
from .kinds import TYPES, daily_set, make

__all__ = ["ATTEMPTS", "DAILY_SIZE", "DATA_SCRIPT", "DRILLS_PAGE", "MAX_SET", "MIN_TRAP_DIFF", "TOL", "DrillType",
           "Rng", "answer_text", "fill", "fnv1a", "kv_class", "render", "REF_PAGES", "DrillExportError",
           "drills_script", "payload", "question_ids", "TYPES", "daily_set", "make"]
