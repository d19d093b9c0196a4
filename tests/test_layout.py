"""The layout the contributor guide describes is the tree: every module of macros/ and sitebuild/ is
on the guide's map of the code, every path on the map exists, and no source file outgrows its room."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "contributing" / "index.md"
MAX_LINES = 400  # past this a module holds more than one feature: split it


def _code_map() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index("\n## The code\n")
    return text[start:text.index("\n## ", start + 1)]


def _rows() -> list[tuple[str, str]]:
    """(first cell, whole row) of each row of the map's table."""
    return [(row.split("|")[1], row) for row in _code_map().splitlines() if row.startswith("| `")]


def _module_lists() -> dict[str, set[str]]:
    """folder -> module names listed one per line under "The modules" (``- `name.py` (...)``)."""
    lists: dict[str, set[str]] = {}
    folder = None
    for line in _code_map().splitlines():
        if m := re.fullmatch(r"`([a-z_/]+/)`:", line):
            folder = m.group(1)
            lists[folder] = set()
        elif folder and (m := re.match(r"- `([a-z_0-9]+\.py)`", line)):
            lists[folder].add(m.group(1))
        elif line.startswith("#"):
            folder = None
    return lists


def _modules() -> list[Path]:
    return sorted(p for pkg in ("macros", "sitebuild") for p in (ROOT / pkg).rglob("*.py")
                  if "__pycache__" not in p.parts)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_module_is_on_the_map(path):
    rel = path.relative_to(ROOT).as_posix()
    if path.name == "__init__.py" and rel != "macros/__init__.py":
        return  # a package's __init__ re-exports; the package is on the map
    folder = rel.rsplit("/", 1)[0] + "/"
    listed = any(f"`{rel}`" in first or (f"`{folder}`" in first and f"`{path.name}`" in row)
                 for first, row in _rows()) or path.name in _module_lists().get(folder, set())
    assert listed, f"{rel} is missing from the map of the code in {GUIDE.relative_to(ROOT)}"


def test_every_path_on_the_map_exists():
    paths = [p for first, _ in _rows() for p in re.findall(r"`([^`]+)`", first)]
    assert len(paths) > 15
    for p in paths:
        assert (ROOT / p.rstrip("/")).exists(), f"the map of the code names {p}, which does not exist"
    lists = _module_lists()
    assert set(lists) == {"macros/formulas/", "macros/render/"}, sorted(lists)
    for folder, names in lists.items():
        for name in names:
            assert (ROOT / folder / name).exists(), f"the module list names {folder}{name}, which does not exist"


def test_no_source_file_outgrows_its_room():
    # The Python the site is built from (tests and scripts are not held to it).
    sources = [p for d in ("macros", "sitebuild", "livecoding") for p in (ROOT / d).rglob("*.py")
               if "__pycache__" not in p.parts]
    assert len(sources) > 40
    long = {p.relative_to(ROOT).as_posix(): n for p in sources
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"over {MAX_LINES} lines: {long}"
