"""Released checkpoints (checkpoints.yaml): which Hugging Face repository ships a model in which
per-module formats. Loaded on demand, validated like the rest of the catalog: an error names the file,
the entry and the field."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Optional

from . import schema as S
from .load import load_catalog
from .records import CatalogError
from .rules import Where
from .yamlio import CATALOG_DIR, display, read_yaml

FILE = "checkpoints.yaml"


class CheckpointEntry(S._Schema):
    key: str
    model: str
    hf_repo: str
    config_source: str
    torch_dtype: str
    quantization_config: Optional[dict] = None
    notes: Optional[str] = None


@dataclass(frozen=True)
class Checkpoint:
    key: str
    model: str
    hf_repo: str
    config_source: str
    torch_dtype: str
    quantization_config: Mapping[str, Any] | None
    notes: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)


@functools.lru_cache(maxsize=4)
def _load(directory: Path) -> dict[str, Checkpoint]:
    path = directory / FILE
    ctx = Where(display(path), "checkpoints")
    doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("checkpoints"), list):
        raise CatalogError(f"{display(path)}: expected a mapping with a 'checkpoints' list")
    cat = load_catalog(directory)
    out: dict[str, Checkpoint] = {}
    for i, entry in enumerate(doc["checkpoints"]):
        key = entry.get("key") if isinstance(entry, dict) else None
        where = ctx.at(str(key) if key else f"#{i}")
        if not isinstance(entry, dict):
            raise where.err(None, "expected a mapping")
        known, extra = S.split_free_form(CheckpointEntry, entry)
        vals = S.validate(CheckpointEntry, known, str(where)).model_dump()
        if vals["key"] in out:
            raise where.err("key", "duplicate key")
        if vals["model"] not in cat.models:
            raise where.err("model", f"{vals['model']!r} is not a key in models.yaml")
        if vals["torch_dtype"] not in cat.formats:
            raise where.err("torch_dtype", f"{vals['torch_dtype']!r} is not a key in formats.yaml")
        qc = vals["quantization_config"]
        if qc is not None and "quant_method" not in qc:
            raise where.err("quantization_config.quant_method", "missing")
        vals["notes"] = vals["notes"] or ""
        out[vals["key"]] = Checkpoint(**vals, extra=extra)
    return out


def load_checkpoints(directory: Path | None = None) -> dict[str, Checkpoint]:
    return _load(Path(directory or CATALOG_DIR))


def shipped_checkpoint(model_key: str, directory: Path | None = None) -> Checkpoint | None:
    """The checkpoint a model ships as: the record whose key is the model's key, if any."""
    return load_checkpoints(directory).get(model_key)
