"""Where a build's time goes: ``python -m scripts.perf.eventtimes OUT.json mkdocs-build-args...``.

Runs ``mkdocs build`` in this process with every plugin and hook event handler timed (and Markdown
conversion, theme template rendering and each macro), then writes the totals in seconds to OUT.json.
The timers add a little overhead; the figures are for finding the big items, not for the ratio.
"""

from __future__ import annotations

import collections
import json
import sys
import time

TIMES: collections.Counter = collections.Counter()


def _timed(key, fn):
    def wrapper(*args, **kwargs):
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            TIMES[key] += time.perf_counter() - start
    wrapper.__name__ = getattr(fn, "__name__", "wrapper")
    return wrapper


def install() -> None:
    import jinja2
    import markdown
    import mkdocs.plugins as plugins

    register = plugins.PluginCollection._register_event

    def _register(self, event_name, method, plugin_name=None):
        name = plugin_name or getattr(method, "__module__", "?")
        return register(self, event_name, _timed(f"event {event_name}: {name}", method), plugin_name)

    plugins.PluginCollection._register_event = _register
    markdown.Markdown.convert = _timed("Markdown conversion (all pages)", markdown.Markdown.convert)
    render = jinja2.Template.render

    def _render(self, *args, **kwargs):
        key = f"template {self.name}" if self.name else "template (page Markdown, by macros)"
        return _timed(key, render)(self, *args, **kwargs)

    jinja2.Template.render = _render
    try:  # each macro, when the project's macros package is importable
        import macros as project_macros
        guard = project_macros._guard

        def _guard(env, name, fn):
            return _timed(f"macro {name}", guard(env, name, fn))

        project_macros._guard = _guard
    except (ImportError, AttributeError):
        pass


def main() -> None:
    out = sys.argv[1]
    install()
    from mkdocs.__main__ import cli
    sys.argv = ["mkdocs", "build"] + sys.argv[2:]
    start = time.perf_counter()
    try:
        cli(standalone_mode=False)
    finally:
        TIMES["total (in process)"] = time.perf_counter() - start
        with open(out, "w", encoding="utf-8") as f:
            json.dump(dict(TIMES.most_common()), f, indent=1)


if __name__ == "__main__":
    main()
