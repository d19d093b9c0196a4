"""Rendering the macros' own examples (from their @macro decorators), shared by the render tests."""

from __future__ import annotations

import functools

import jinja2

from macros.render import MACROS, REGISTRY


def render_example(name: str) -> str:
    """The output of macro ``name``'s registered example, rendered through Jinja as a page would."""
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    env.globals.update(MACROS)
    return env.from_string("{{ " + REGISTRY[name].example + " }}").render()


@functools.cache
def block_outputs() -> dict[str, str]:
    """Every block macro's example output, by name."""
    return {name: render_example(name) for name, m in REGISTRY.items() if m.kind == "block"}
