"""What holds for every registered macro: its example renders, block macros go through the one
wrapper and render as indentation-free Markdown, byte figures come in GB and GiB, inline values are one
line, each has a docstring, MACROS.md is the generated reference, and nothing imports MkDocs."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import markdown
import pytest
from render_support import block_outputs, render_example

from macros.errors import MacroInputError
from macros.render import MACROS, REGISTRY, blocks, docs, example_block, macro, registry

ROOT = Path(__file__).resolve().parents[1]
MD_EXTENSIONS = ["attr_list", "md_in_html", "tables", "toc", "pymdownx.blocks.details", "pymdownx.superfences"]
BLOCKS = sorted(n for n, m in REGISTRY.items() if m.kind == "block")
INLINE = sorted(n for n, m in REGISTRY.items() if m.kind == "inline")


def test_registry_covers_every_macro_once():
    assert set(REGISTRY) == set(MACROS)
    assert len(BLOCKS) >= 25 and len(INLINE) >= 20
    assert {m.kind for m in REGISTRY.values()} == {"block", "inline", "page", "figure"}
    for m in REGISTRY.values():
        assert m.module.startswith("macros.render."), m


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_example_renders(name):
    assert render_example(name).strip()


@pytest.mark.parametrize("name", BLOCKS)
def test_block_macros_render_through_example_block(name, monkeypatch):
    monkeypatch.setattr(blocks, "example_block", lambda title, body: f"<<{title}|{body}>>")
    out = render_example(name)
    assert out.startswith("<<") and out.endswith(">>")
    assert "**Formula" in out and "**Result" in out


@pytest.mark.parametrize("name", BLOCKS)
def test_block_output_is_indentation_free_markdown(name):
    out = block_outputs()[name]
    assert out.startswith('<div class="worked-example" data-search-exclude="" markdown>\n\n**Worked example — ')
    assert out.endswith("\n\n</div>")
    for line in out.splitlines():
        assert not line.startswith((" ", "\t")), f"indented line in {name}: {line!r}"
    # it renders inside a /// details block with the site's extensions: a table and a result survive
    html = markdown.Markdown(extensions=MD_EXTENSIONS).convert(f"/// details | T\n\n{out}\n\n///\n")
    assert '<div class="worked-example" data-search-exclude="">' in html and "<details>" in html
    assert "**" not in html


def test_example_block_format():
    assert example_block("T", "body") == ('<div class="worked-example" data-search-exclude="" markdown>\n\n'
                                          '**Worked example — T**\n\nbody\n\n</div>')


@pytest.mark.parametrize("name", BLOCKS)
def test_byte_results_show_gb_and_gib(name):
    out = block_outputs()[name]
    # every decimal GB (or MB) byte figure is followed by its binary GiB (MiB) twin; GB/s is a rate
    for unit, twin in (("GB", "GiB"), ("MB", "MiB")):
        for m in re.finditer(rf"\d {unit}(?!/)", out):
            assert re.match(rf" \([\d,.]+ {twin}\)", out[m.end():]), (name, out[m.start() - 20:m.end() + 20])


@pytest.mark.parametrize("name", INLINE)
def test_inline_macros_are_single_line(name):
    out = render_example(name)
    assert out and "\n" not in out


def test_every_macro_has_a_docstring_and_a_signature_in_the_reference():
    text = (ROOT / "macros/MACROS.md").read_text(encoding="utf-8")
    for name, m in REGISTRY.items():
        assert m.summary.strip(), name
        assert f"### {name}\n\n`{m.signature()}`" in text, name


def test_macros_md_is_the_generated_reference():
    committed = (ROOT / "macros/MACROS.md").read_text(encoding="utf-8")
    assert committed == docs.render(), "macros/MACROS.md is out of date: run python -m macros.render.docs"
    proc = subprocess.run([sys.executable, "-m", "macros.render.docs", "--check"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------------------------------
# the registry itself: conversion by parameter name, registration rules
# --------------------------------------------------------------------------------------------------

def test_arguments_are_converted_by_name_defaults_included(monkeypatch):
    seen = {}
    monkeypatch.setattr(registry, "REGISTRY", {})
    monkeypatch.setattr(registry, "MACROS", {})

    @macro("inline", example='probe("llama-3.1-8b")')
    def probe(model, context="8K", kv_dtype="fp8", gpu=None, other="as is"):
        """Probe."""
        seen.update(model=model, context=context, kv_dtype=kv_dtype, gpu=gpu, other=other)
        return "ok"

    assert probe("llama-3.1-8b") == "ok"
    assert seen["model"].key == "llama-3.1-8b" and seen["context"] == 8192
    assert seen["kv_dtype"].key == "fp8" and seen["gpu"] is None and seen["other"] == "as is"
    assert registry.REGISTRY["probe"].fn is probe and registry.MACROS["probe"] is probe
    with pytest.raises(MacroInputError, match="context must be a whole number of tokens"):
        probe("llama-3.1-8b", context="lots")
    with pytest.raises(MacroInputError, match="unexpected keyword"):
        probe("llama-3.1-8b", modle="x")


def test_registration_rules(monkeypatch):
    monkeypatch.setattr(registry, "REGISTRY", {})
    monkeypatch.setattr(registry, "MACROS", {})

    def nodoc():
        return "x"

    def one():
        """Doc."""
        return "x"

    with pytest.raises(ValueError, match="no docstring"):
        macro("inline", example="nodoc()")(nodoc)
    with pytest.raises(ValueError, match="must call it"):
        macro("inline", example="other()")(one)
    with pytest.raises(ValueError, match="kind"):
        macro("sidebar", example="one()")
    macro("inline", example="one()")(one)
    with pytest.raises(ValueError, match="defined twice"):
        macro("inline", example="one()")(one)


def test_macros_package_does_not_import_mkdocs():
    for path in (ROOT / "macros").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import mkdocs|from mkdocs)", text, re.M), path
    code = ("import sys, macros.render, macros.formulas, macros.catalog; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('mkdocs', 'mkdocs_macros', 'material')]; "
            "assert not bad, bad")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
