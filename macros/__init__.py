"""mkdocs-macros entry point: registers the sizing macros and the site macros.

Everything substantive lives in submodules that import nothing from MkDocs: ``macros.formulas`` (the
formulas), ``macros.catalog`` (models, GPUs, formats, prices) and ``macros.render`` (worked examples,
inline values and reference pages as Markdown). The site macros (section indexes, checklists) come from
:mod:`sitebuild.pages`. This module only adapts them to mkdocs-macros.
"""

from __future__ import annotations

import functools

from sitebuild import pages as site_pages

from .render import MACROS


class MacroFailure(RuntimeError):
    """A macro was called with bad input. The message names the page, the macro and the valid choices."""


def page_src(page) -> str:
    """The docs-relative source of the page a macro runs on: ``page.file.src_uri`` under mkdocs-macros
    (MkDocs, ProperDocs), ``page.path`` under Zensical's macros, whose page has no ``file``."""
    file = getattr(page, "file", None)
    return file.src_uri if file is not None else page.path


def _page_name(env) -> str:
    page = getattr(env, "page", None)
    return f"docs/{page_src(page)}" if page is not None else "(unknown page)"


def _guard(env, name, fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            result = fn(*args, **kwargs)
        except (ValueError, KeyError, TypeError, LookupError) as exc:
            shown = ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])
            raise MacroFailure(f"{_page_name(env)}: {name}({shown}): {exc}") from None
        if result is None:
            raise MacroFailure(f"{_page_name(env)}: {name}: returned nothing")
        return result
    return call


_TEMPLATE_MARKERS = ("{{", "{%", "{#")


def on_pre_page_macros(env):
    """Skip the Jinja pass for a page that contains no template syntax: rendering it could not change
    it, and compiling every page as a template is most of the macros plugin's build-time cost."""
    if not any(marker in env.markdown for marker in _TEMPLATE_MARKERS):
        env.page.meta["render_macros"] = False


def define_env(env):
    docs_dir = env.conf["docs_dir"]
    macros = dict(site_pages.site_macros(docs_dir, lambda: page_src(env.page)))
    clash = set(MACROS) & set(macros)
    if clash:
        raise MacroFailure(f"macro names clash between macros.render and the site macros: {sorted(clash)}")
    macros.update(MACROS)
    for name, fn in macros.items():
        env.macro(_guard(env, name, fn), name)
