"""Loading the catalog directory: each file's entry list, each entry through its schema into a record,
then the rules between fields and files. Cached per directory and file modification times."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from . import schema as S
from .records import (ApiPrice, Catalog, CatalogError, Format, Gpu, GpuPrice, Kda, LinearAttention, Mla, Model, Moe,
                      Prices, SlidingWindow)
from .rules import Where, check_gpu, check_model, check_references
from .yamlio import CATALOG_DIR, display, read_yaml

CATALOG_FILES = ("models.yaml", "gpus.yaml", "formats.yaml", "prices.yaml")

_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")


def _entries(ctx: Where, doc: Any, section: str) -> list[tuple[Where, dict]]:
    """The list under ``section``, each entry with its context; checks keys and duplicates."""
    if not isinstance(doc, dict) or section not in doc:
        raise CatalogError(f"{ctx.file}: top-level '{section}:' list is missing")
    items = doc[section]
    if not isinstance(items, list) or not items:
        raise CatalogError(f"{ctx.file}: '{section}' must be a non-empty list of entries")
    seen: dict[str, int] = {}
    out = []
    for i, entry in enumerate(items):
        ectx = ctx.at(f"#{i}")
        if not isinstance(entry, dict):
            raise ectx.err(None, f"expected a mapping of fields, got {type(entry).__name__}")
        key = entry.get("key")
        if not isinstance(key, str) or not key:
            raise ectx.err("key", f"required field is missing or not a string (got {key!r})")
        if not _KEY_RE.match(key):
            raise ectx.at(key).err("key", "keys are lowercase letters, digits, '.', '_' and '-'")
        if key in seen:
            raise ctx.at(key).err("key", f"duplicate key (entries #{seen[key]} and #{i})")
        seen[key] = i
        out.append((ctx.at(key), entry))
    return out


def _record(ctx: Where, entry: dict, schema: type[S._Schema], cls):
    known, extra = S.split_free_form(schema, entry)
    vals = S.validate(schema, known, str(ctx)).model_dump()
    if "notes" in vals:
        vals["notes"] = vals["notes"] or ""
    return cls(**vals, extra=extra)


_BLOCKS = {"moe": Moe, "mla": Mla, "sliding_window": SlidingWindow, "linear_attention": LinearAttention}


def _model(ctx: Where, entry: dict) -> Model:
    known, extra = S.split_free_form(S.ModelEntry, entry)
    vals = S.validate(S.ModelEntry, known, str(ctx)).model_dump()
    if vals["linear_attention"] is not None and vals["linear_attention"]["kda"] is not None:
        vals["linear_attention"]["kda"] = Kda(**vals["linear_attention"]["kda"])
    for name, cls in _BLOCKS.items():
        vals[name] = cls(**vals[name]) if vals[name] is not None else None
    vals["notes"] = vals["notes"] or ""
    m = Model(**vals, extra=extra)
    check_model(ctx, m)
    return m


def _load_models(path: Path) -> dict[str, Model]:
    ctx = Where(display(path), "models")
    return {c.key: _model(c, e) for c, e in _entries(ctx, read_yaml(path), "models")}


def _load_list(path: Path, section: str, schema: type[S._Schema], cls) -> dict:
    ctx = Where(display(path), section)
    return {c.key: _record(c, e, schema, cls) for c, e in _entries(ctx, read_yaml(path), section)}


def _load_prices(path: Path) -> Prices:
    name = display(path)
    doc = read_yaml(path)
    if not isinstance(doc, dict):
        raise CatalogError(f"{name}: expected a mapping with as_of, disclaimer, gpu_hour and api")
    top = Where(name, "prices")
    header = S.validate(S.PricesHeader, {k: doc.get(k) for k in ("as_of", "disclaimer")}, str(top))
    for k in doc:
        if k not in ("as_of", "disclaimer", "gpu_hour", "api") and not str(k).endswith(S.FREE_SUFFIXES):
            raise top.err(str(k), "unknown top-level field (allowed: as_of, disclaimer, gpu_hour, api)")
    gpu_hour = {c.key: _record(c, e, S.GpuPriceEntry, GpuPrice)
                for c, e in _entries(Where(name, "gpu_hour"), doc, "gpu_hour")}
    api = {c.key: _record(c, e, S.ApiPriceEntry, ApiPrice) for c, e in _entries(Where(name, "api"), doc, "api")}
    return Prices(as_of=str(header.as_of), disclaimer=header.disclaimer, gpu_hour=gpu_hour, api=api)


_CACHE: dict[tuple, Catalog] = {}


def _stamp(directory: Path) -> tuple:
    stamp = []
    for name in CATALOG_FILES:
        p = directory / name
        try:
            st = p.stat()
            stamp.append((name, st.st_mtime_ns, st.st_size))
        except FileNotFoundError:
            stamp.append((name, None, None))
    return tuple(stamp)


def load_catalog(path: str | Path | None = None) -> Catalog:
    """Load and validate the catalog directory (default: this package's directory).

    The result is cached; the cache is keyed on the directory and the files' modification times, so
    an edited file is re-read (useful under ``mkdocs serve``). Raises :class:`CatalogError` naming
    the file, the entry key and the field on any schema violation.
    """
    directory = Path(path).resolve() if path is not None else CATALOG_DIR
    if not directory.is_dir():
        raise CatalogError(f"{directory}: catalog directory does not exist")
    cache_key = (str(directory), _stamp(directory))
    hit = _CACHE.get(cache_key)
    if hit is not None:
        return hit
    models = _load_models(directory / "models.yaml")
    gpus = _load_list(directory / "gpus.yaml", "gpus", S.GpuEntry, Gpu)
    for g in gpus.values():
        check_gpu(Where(display(directory / "gpus.yaml"), "gpus", g.key), g)
    formats = _load_list(directory / "formats.yaml", "formats", S.FormatEntry, Format)
    prices = _load_prices(directory / "prices.yaml")
    check_references(directory, models, gpus, formats, prices)
    cat = Catalog(directory=directory, models=models, gpus=gpus, formats=formats, prices=prices)
    for k in [k for k in _CACHE if k[0] == str(directory)]:
        del _CACHE[k]
    _CACHE[cache_key] = cat
    return cat


def clear_cache() -> None:
    """Forget every loaded catalog (tests use this)."""
    _CACHE.clear()
