"""Exceptions raised by the sizing macros.

Kept in their own module so that the catalog loader, the formulas and the renderer can share them
without importing one another. Pure Python: nothing here imports MkDocs.
"""

from __future__ import annotations


class MacroInputError(ValueError):
    """A macro was called with input it cannot use.

    Raised for an unknown model, GPU or format key, a format the model cannot use in that role (for
    example a KV-cache dtype that ``formats.yaml`` marks ``kv_cache: false``), a negative or
    nonsensical size, or a tensor-parallel degree the model's head counts do not allow. The message
    always lists the valid choices so that the page author can fix the call without reading code.
    """
