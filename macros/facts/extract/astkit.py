"""Static reading of a package's source with the standard library's ``ast``: nothing is imported.

The extractors of each engine use these helpers to find dataclass-like fields, ``add_argument``
calls, string constants passed to named keywords and module-level ``Literal`` aliases. Every fact
they return carries the file (relative to the package's parent folder, as in the engine's
repository) and the line it was read from.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

MAX_EXPR = 240  # characters of an expression's source kept in the snapshot


class ExtractError(RuntimeError):
    """The source does not have the shape an extractor expects; the message names the file."""


class Module:
    """One source file; its syntax tree is parsed on first use (most steps filter on the text first)."""

    def __init__(self, path: str, source: str):
        self.path = path        # e.g. "vllm/config/cache.py"
        self.source = source
        self._tree: ast.Module | None = None

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            try:
                self._tree = ast.parse(self.source, filename=self.path)
            except SyntaxError as exc:
                raise ExtractError(f"{self.path}:{exc.lineno}: cannot parse: {exc.msg}") from None
        return self._tree


@dataclass
class FieldDef:
    cls: str
    name: str
    annotation: str
    default: str | None       # source text of the default value; None when the field has none
    factory: str | None       # source text of a default_factory, if any
    file: str
    line: int


@dataclass
class ClassDef:
    name: str
    bases: list[str]
    file: str
    line: int
    fields: dict[str, FieldDef] = field(default_factory=dict)
    node: ast.ClassDef | None = None


def src(node: ast.AST | None, limit: int = MAX_EXPR) -> str | None:
    """Source text of ``node`` on one line, shortened to ``limit`` characters."""
    if node is None:
        return None
    text = " ".join(ast.unparse(node).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def const_str(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def dotted(node: ast.AST) -> str:
    """``a.b.c`` for a Name/Attribute chain, else the unparsed source."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{dotted(node.value)}.{node.attr}"
    return ast.unparse(node)


def parse_tree(root: Path, package: str, subdirs: tuple[str, ...] = ("",)) -> dict[str, Module]:
    """Every ``.py`` file of ``root/package`` (or of its ``subdirs``), parsed, keyed by relative path."""
    out: dict[str, Module] = {}
    base = root / package
    if not base.is_dir():
        raise ExtractError(f"{base}: package folder not found (is this an unpacked wheel?)")
    for sub in subdirs:
        for path in sorted((base / sub).rglob("*.py")):
            rel = path.relative_to(root).as_posix()
            if rel in out:
                continue
            out[rel] = Module(rel, path.read_text(encoding="utf-8", errors="replace"))
    return out


def _field_default(value: ast.AST | None) -> tuple[str | None, str | None]:
    """(default, default_factory) source texts of a class-level assignment's value.

    ``x: T = 3`` gives ``"3"``; ``Field(default=0.92, gt=0)`` and ``field(default=...)`` give the
    ``default`` keyword; ``field(default_factory=list)`` gives the factory.
    """
    if value is None:
        return None, None
    if isinstance(value, ast.Call) and dotted(value.func).split(".")[-1] in ("Field", "field", "Arg"):
        kw = {k.arg: k.value for k in value.keywords if k.arg}
        if "default" in kw:
            return src(kw["default"]), None
        if "default_factory" in kw:
            return None, src(kw["default_factory"])
        if value.args and dotted(value.func).split(".")[-1] == "Field":
            return src(value.args[0]), None
        return None, None
    return src(value), None


def classes(modules: dict[str, Module], where=lambda path: True) -> dict[str, list[ClassDef]]:
    """Every top-level class (of the files ``where`` accepts) with its annotated class-level fields,
    by class name (a name can repeat across files; callers pick by file when it matters)."""
    out: dict[str, list[ClassDef]] = {}
    for mod in (m for p, m in sorted(modules.items()) if where(p) and "class " in m.source):
        for node in mod.tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            cdef = ClassDef(node.name, [dotted(b) for b in node.bases], mod.path, node.lineno, node=node)
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    name = stmt.target.id
                    if name.startswith("_") or src(stmt.annotation, 10_000).startswith("ClassVar"):
                        continue
                    default, factory = _field_default(stmt.value)
                    cdef.fields[name] = FieldDef(node.name, name, src(stmt.annotation, 10_000), default,
                                                 factory, mod.path, stmt.lineno)
            out.setdefault(node.name, []).append(cdef)
    return out


def all_fields(cls: str, index: dict[str, list[ClassDef]], _seen: frozenset = frozenset()) -> dict[str, FieldDef]:
    """Fields of ``cls`` including those inherited from bases found in ``index`` (base first)."""
    if cls not in index or cls in _seen:
        return {}
    cdef = index[cls][0]
    merged: dict[str, FieldDef] = {}
    for base in cdef.bases:
        merged.update(all_fields(base.split(".")[-1], index, _seen | {cls}))
    merged.update(cdef.fields)
    return merged


def subclasses(cls: str, index: dict[str, list[ClassDef]]) -> set[str]:
    """``cls`` and every class in ``index`` that derives from it, directly or not."""
    found = {cls}
    grew = True
    while grew:
        grew = False
        for name, defs in index.items():
            if name not in found and any(b.split(".")[-1] in found for d in defs for b in d.bases):
                found.add(name)
                grew = True
    return found


def literal_aliases(modules: dict[str, Module]) -> dict[str, list[str]]:
    """Module-level ``Name = Literal[...]`` (or annotated ``Name: TypeAlias = Literal[...]``) aliases."""
    out: dict[str, list[str]] = {}
    for mod in (m for _, m in sorted(modules.items()) if "Literal" in m.source):
        for node in mod.tree.body:
            target = value = None
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
                target, value = node.target.id, node.value
            if target and value is not None:
                vals = literal_values(value, {})
                if vals is not None:
                    out.setdefault(target, vals)
    return out


def literal_values(node: ast.AST, aliases: dict[str, list[str]]) -> list[str] | None:
    """The values of a ``Literal[...]`` annotation (through ``Optional``, ``X | None`` and aliases),
    as their source text; ``None`` when the annotation holds no literal choice."""
    vals, _ = literal_choices(node, aliases)
    return vals


def literal_choices(node: ast.AST, aliases: dict[str, list[str]]) -> tuple[list[str] | None, bool]:
    """(values, open): the literal values an annotation names, and whether it also admits any
    string (``Literal[...] | str``: vLLM then shows the values as suggestions, not choices)."""
    if isinstance(node, ast.Subscript):
        head = dotted(node.value).split(".")[-1]
        elts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head == "Literal":
            vals = []
            for e in elts:
                if isinstance(e, ast.Constant):
                    vals.append(repr(e.value))
                else:
                    sub, _ = literal_choices(e, aliases)
                    if sub is None:
                        return None, False
                    vals.extend(sub)
            return vals, False
        if head in ("Optional", "Annotated", "A"):
            return literal_choices(elts[0], aliases)
        if head == "Union":
            return _union_choices(elts, aliases)
        return None, False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_choices(_flatten_or(node), aliases)
    if isinstance(node, ast.Name) and node.id in aliases:
        return list(aliases[node.id]), False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:  # a string annotation: parse it
            return literal_choices(ast.parse(node.value, mode="eval").body, aliases)
        except SyntaxError:
            return None, False
    return None, False


def _flatten_or(node: ast.AST) -> list[ast.AST]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _flatten_or(node.left) + _flatten_or(node.right)
    return [node]


def _union_choices(elts: list[ast.AST], aliases: dict[str, list[str]]) -> tuple[list[str] | None, bool]:
    vals: list[str] = []
    found = is_open = False
    for e in elts:
        if (isinstance(e, ast.Constant) and e.value is None) or dotted(e) == "None":
            continue
        if dotted(e) == "str":
            is_open = True
            continue
        sub, sub_open = literal_choices(e, aliases)
        if sub is None:
            return None, False
        vals.extend(sub)
        found = True
        is_open = is_open or sub_open
    return (vals, is_open) if found else (None, False)


def annotation_is_bool(annotation: str) -> bool:
    """Whether a field annotation admits ``bool`` (argparse then adds ``--no-`` forms in vLLM)."""
    try:
        node = ast.parse(annotation, mode="eval").body
    except SyntaxError:
        return False
    return any(isinstance(n, ast.Name) and n.id == "bool" for n in ast.walk(node))


def walk_with_parents(tree: ast.AST) -> Iterator[tuple[ast.AST, tuple[ast.AST, ...]]]:
    """Every node with the chain of its ancestors (outermost first)."""
    stack: list[tuple[ast.AST, tuple[ast.AST, ...]]] = [(tree, ())]
    while stack:
        node, parents = stack.pop()
        yield node, parents
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child, parents + (node,)))


def kwarg(call: ast.Call, name: str) -> ast.AST | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def is_call_to(node: ast.AST, *names: str) -> bool:
    """Whether ``node`` calls a function whose last dotted part is one of ``names``."""
    return isinstance(node, ast.Call) and dotted(node.func).split(".")[-1] in names


def list_constants(modules: dict[str, Module]) -> dict[str, list[str]]:
    """Module-level ``NAME = [ "a", "b", ... ]`` (list, tuple or set of constants), by name: the
    choice lists that flags pass as ``choices=NAME``."""
    out: dict[str, list[str]] = {}
    for mod in (m for _, m in sorted(modules.items()) if "CHOICES" in m.source or " = [" in m.source):
        for node in mod.tree.body:
            target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
                node.target if isinstance(node, ast.AnnAssign) else None)
            value = getattr(node, "value", None)
            if isinstance(target, ast.Name) and isinstance(value, (ast.List, ast.Tuple, ast.Set)) and value.elts \
                    and all(isinstance(e, ast.Constant) for e in value.elts):
                out.setdefault(target.id, [repr(e.value) for e in value.elts])
    return out
