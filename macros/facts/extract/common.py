"""Extraction steps that read the same way in every engine: log-line templates, metric names,
environment-variable reads outside a registry, and flags registered with plain ``add_argument``."""

from __future__ import annotations

import ast
import re

from .astkit import Module, const_str, dotted, is_call_to, kwarg, src, walk_with_parents

LOG_METHODS = {"info", "warning", "warn", "error", "critical", "exception", "info_once", "warning_once",
               "error_once"}
_PLACEHOLDER = "{…}"


def string_template(node: ast.AST | None) -> str | None:
    """A log call's message as a template: a constant string, implicit concatenations and ``+`` of
    constants, or an f-string whose interpolations become ``{…}``."""
    if node is None:
        return None
    s = const_str(node)
    if s is not None:
        return s
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            parts.append(v.value if isinstance(v, ast.Constant) else _PLACEHOLDER)
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = string_template(node.left), string_template(node.right)
        if left is not None and right is not None:
            return left + right
    return None


def log_lines(modules: dict[str, Module], dirs: tuple[str, ...],
              logger_names: tuple[str, ...] = ("logger", "log", "_logger")) -> dict:
    """Every log template at INFO or above in the files under ``dirs`` (the serving path whose lines
    operators meet): ``{template: {"level", "file", "line"}}``. A template that occurs in several
    places keeps its first, files in sorted order."""
    out: dict[str, dict] = {}
    for path in (p for p in _containing(modules, *logger_names) if p.startswith(dirs)):
        for node in ast.walk(modules[path].tree):
            if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
                continue
            if node.func.attr not in LOG_METHODS or not node.args:
                continue
            owner = dotted(node.func.value).split(".")[-1]
            if owner not in logger_names:
                continue
            text = string_template(node.args[0])
            if not text or len(text.strip()) < 12:
                continue
            text = " ".join(text.split())
            level = node.func.attr.replace("_once", "").replace("warn", "warning").replace("warninging", "warning")
            out.setdefault(text, {"level": level, "file": path, "line": node.lineno})
    return out


_METRIC_TYPES = ("gauge", "counter", "histogram", "summary")


def _type_of(callee: str) -> str | None:
    return next((t for t in _METRIC_TYPES if t in callee.lower()), None)


def metrics(modules: dict[str, Module], prefix: str) -> dict:
    """Prometheus metric names ``prefix:name``: ``{name: {"type", "documentation", "file", "line",
    "condition"}}``. A name is found where a Counter/Gauge/Histogram/Summary constructor gets it
    (``name=`` or first argument), and also where it is written as a constant and handed over later:
    an entry of a list of (name, documentation) pairs, or a variable passed as ``name=``; the type then
    comes from the list's name (``counter_specs``) or from the constructor that receives the variable.
    ``condition`` is the source of the ``if`` tests around the definition (a metric shown only with an
    option, say)."""
    pattern = re.compile(rf"^{re.escape(prefix)}:[a-z_][a-z0-9_]*$")
    found: dict[str, dict] = {}      # from a constructor call, across all files
    loose: dict[str, dict] = {}      # written as a constant elsewhere
    for path in _containing(modules, f"{prefix}:"):
        out = found
        tree = modules[path].tree
        later: list[tuple[ast.Constant, tuple]] = []
        receivers: dict[str, str] = {}  # variable passed as name= -> constructor type
        for node, parents in walk_with_parents(tree):
            if isinstance(node, ast.Call):
                callee = dotted(node.func).split(".")[-1]
                kw = kwarg(node, "name")
                if isinstance(kw, ast.Name) and _type_of(callee):
                    receivers[kw.id] = _type_of(callee)
                name = const_str(kw)
                if name is None and node.args and _type_of(callee):
                    name = const_str(node.args[0])
                if name is None or not pattern.match(name) or name in out:
                    continue
                doc = kwarg(node, "documentation")
                if doc is None and len(node.args) > 1:
                    doc = node.args[1]
                out[name] = {"type": _type_of(callee),
                             "documentation": " ".join((string_template(doc) or "").split()) or None,
                             "file": path, "line": node.lineno, "condition": _conditions(parents)}
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and pattern.match(node.value):
                later.append((node, parents))
        for node, parents in later:
            if node.value in loose and loose[node.value]["type"] is not None:
                continue
            target = next((p for p in reversed(parents) if isinstance(p, (ast.Assign, ast.AnnAssign))), None)
            tname = ""
            if target is not None:
                t = target.targets[0] if isinstance(target, ast.Assign) else target.target
                tname = dotted(t)
            mtype = _type_of(tname) or receivers.get(tname)
            pair = next((p for p in reversed(parents) if isinstance(p, ast.Tuple)), None)
            doc = pair.elts[1] if pair is not None and len(pair.elts) > 1 and pair.elts[0] is node else None
            loose[node.value] = {"type": mtype,
                                 "documentation": " ".join((string_template(doc) or "").split()) or None,
                                 "file": path, "line": node.lineno, "condition": _conditions(parents)}
    # a name handed to a constructor is defined there; a constant alone (a list of names, a reader that
    # parses scraped output) counts only where no constructor names it, typed ones first
    return {**{k: v for k, v in loose.items() if k not in found}, **found}


def _conditions(parents) -> str | None:
    conds = [src(p.test, 120) for p in parents if isinstance(p, ast.If)]
    return " and ".join(conds) or None


def env_reads(modules: dict[str, Module], prefixes: tuple[str, ...]) -> dict:
    """Environment variables read with ``os.getenv``/``os.environ.get``/``os.environ[...]`` and a
    constant name that starts with one of ``prefixes``: ``{name: {"default", "file", "line"}}``."""
    out: dict[str, dict] = {}
    for path in _containing(modules, "environ", "getenv"):
        for node in ast.walk(modules[path].tree):
            name = default = None
            if isinstance(node, ast.Call) and dotted(node.func) in ("os.getenv", "os.environ.get", "getenv",
                                                                  "environ.get", "os.environ.setdefault"):
                if node.args:
                    name = const_str(node.args[0])
                    default = src(node.args[1]) if len(node.args) > 1 else None
            elif isinstance(node, ast.Subscript) and dotted(node.value) in ("os.environ", "environ"):
                name = const_str(node.slice)
            if name and name.startswith(prefixes) and re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
                out.setdefault(name, {"default": default, "file": path, "line": node.lineno})
    return out


def plain_argument(call: ast.Call) -> dict:
    """The explicit keywords of an ``add_argument`` call that a page may quote."""
    action = src(kwarg(call, "action"))
    choices = kwarg(call, "choices")
    choice_vals = None
    if isinstance(choices, (ast.List, ast.Tuple, ast.Set)):
        choice_vals = [src(e) for e in choices.elts]
    elif choices is not None:
        choice_vals = None
    return {
        "default": src(kwarg(call, "default")),
        "choices": choice_vals,
        "choices_expr": src(choices) if choices is not None and choice_vals is None else None,
        "negatable": bool(action and "BooleanOptional" in action),
        "action": action,
    }


def option_names(call: ast.Call) -> list[str]:
    """The option strings of an ``add_argument`` call (positional string constants starting with -)."""
    return [s for s in (const_str(a) for a in call.args) if s and s.startswith("-")]


def _containing(modules: dict[str, Module], *needles: str) -> list[str]:
    """The files (sorted) whose source text contains one of ``needles``: a cheap filter before a walk."""
    return [p for p in sorted(modules) if any(n in modules[p].source for n in needles)]


def add_argument_calls(tree: ast.AST):
    for node in ast.walk(tree):
        if is_call_to(node, "add_argument") and isinstance(node.func, ast.Attribute):
            yield node
