"""Reading a catalog YAML file: decimal exponents without a sign are numbers, and a mapping key given
twice is an error (YAML would silently keep the last one). Errors name the file and the line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from .records import CatalogError

CATALOG_DIR = Path(__file__).resolve().parent


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml when present: same results, faster
    """SafeLoader that (1) reads ``70.6e9`` / ``450e9`` as floats (YAML 1.1, and so PyYAML, needs a
    dot and a signed exponent, and would otherwise return the string '70.6e9') and (2) records the
    line of every mapping so duplicate keys can be reported."""


_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*)(?:\.[0-9_]*)?[eE][-+]?[0-9]+$"),
    list("-+0123456789"),
)


class _DuplicateKey(Exception):
    def __init__(self, key: str, line: int, entry: str | None):
        self.key = key
        self.line = line
        self.entry = entry


def _construct_mapping(loader: _Loader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: set = set()
    for key_node, _ in node.value:
        k = loader.construct_object(key_node, deep=True)
        if k in seen:
            entry = next((v.value for kn, v in node.value
                          if getattr(kn, "value", None) == "key" and isinstance(v, yaml.ScalarNode)), None)
            raise _DuplicateKey(str(k), key_node.start_mark.line + 1, entry)
        seen.add(k)
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_Loader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    lambda loader, node: _construct_mapping(loader, node, deep=True),
)


def read_yaml(path: Path) -> Any:
    name = display(path)
    if not path.is_file():
        raise CatalogError(f"{name}: catalog file is missing")
    try:
        with path.open(encoding="utf-8") as fh:
            return yaml.load(fh, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader subclass
    except _DuplicateKey as dup:
        where = f"[{dup.entry}].{dup.key}" if dup.entry else f" {dup.key}"
        raise CatalogError(f"{name}: line {dup.line}:{where}: duplicate mapping key {dup.key!r} "
                           "(YAML would silently keep the last one)") from None
    except yaml.YAMLError as exc:
        raise CatalogError(f"{name}: not valid YAML: {exc}") from None


def display(path: Path) -> str:
    """The path as the error shows it: relative to the repository when possible."""
    try:
        return str(path.resolve().relative_to(CATALOG_DIR.parent.parent))
    except ValueError:
        return str(path)
