"""The catalog: models, GPUs, number formats and prices, loaded from the YAML files in this directory.

Every input figure the site uses (a model's layer count, a GPU's memory bandwidth, a format's bits per
weight, an illustrative price) lives here once, with its source URL. The files follow
``CATALOG-SCHEMA`` (the shared contract); :func:`load_catalog` validates them at load time and raises
:class:`CatalogError` naming the file, the entry key and the field on the first violation.

Modules: :mod:`.records` (the record types), :mod:`.yamlio` (reading a file), :mod:`.schema` (the
declarative schema, pydantic), :mod:`.rules` (rules between fields and files), :mod:`.load` (loading
and caching). Nothing here imports MkDocs.

Usage::

    cat = load_catalog()                 # cached; reloads when a file changes
    m = cat.model("llama-3.1-70b")       # UnknownKeyError lists the valid keys
    g = cat.gpu("h100-sxm")
    f = cat.format("fp8")
"""

from __future__ import annotations

from .load import CATALOG_FILES, clear_cache, load_catalog
from .records import (ApiPrice, Catalog, CatalogError, Format, Gpu, GpuPrice, Kda, LinearAttention, Mla, Model, Moe,
                      Prices, SlidingWindow, UnknownKeyError)
from .yamlio import CATALOG_DIR

__all__ = [
    "CatalogError",
    "UnknownKeyError",
    "Moe",
    "Mla",
    "SlidingWindow",
    "LinearAttention",
    "Kda",
    "Model",
    "Gpu",
    "Format",
    "GpuPrice",
    "ApiPrice",
    "Prices",
    "Catalog",
    "load_catalog",
    "clear_cache",
    "CATALOG_DIR",
    "CATALOG_FILES",
]
