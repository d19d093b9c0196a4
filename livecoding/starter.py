"""Starter skeletons for the live-coding questions, generated from the reference modules.

A starter keeps what the tests rely on and drops the answer: the module docstring, imports and
module-level assignments (``__all__``, type variables, constants), exception classes and dataclass
records verbatim, and every public function, class and method with its decorators, signature and
docstring, its body replaced by ``raise NotImplementedError``. Private helpers (a leading underscore,
dunder methods excepted) are left out. Generated on demand, so a starter cannot drift from its reference.

``python -m livecoding.starter token_bucket`` prints one starter.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

__all__ = ["MODULES", "is_record", "starter_source"]

HERE = Path(__file__).resolve().parent

# Question id -> reference module in this package, for the live-coding pages (Q89-Q94, Q151, Q152).
MODULES: dict[int, str] = {
    89: "batch_aggregator",
    90: "bounded_queue",
    91: "sliding_p99",
    92: "timed_batcher",
    93: "token_bucket",
    94: "generate_wrapper",
    151: "kv_block_pool",
    152: "prefix_router",
}

_NOT_IMPLEMENTED = ast.Raise(exc=ast.Name(id="NotImplementedError", ctx=ast.Load()), cause=None)


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _decorator_name(node: ast.expr) -> str:
    if isinstance(node, ast.Call):
        node = node.func
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def is_record(node: ast.ClassDef) -> bool:
    """Kept verbatim: exception classes (a base named ``...Error``/``...Exception``) and dataclasses."""
    bases = {_decorator_name(b) for b in node.bases}
    return (any(b.endswith(("Error", "Exception")) for b in bases)
            or any(_decorator_name(d) == "dataclass" for d in node.decorator_list))


def _docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    first = body[0] if body else None
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
        return [first]
    return []


def _stub_function(node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt:
    node.body = [*_docstring(node.body), _NOT_IMPLEMENTED]
    return node


def _stub_body(body: list[ast.stmt], keep: tuple[type, ...]) -> list[ast.stmt]:
    """Docstring, the statements of the ``keep`` types as they are, public definitions stubbed."""
    out: list[ast.stmt] = list(_docstring(body))
    for node in body[len(out):]:
        if isinstance(node, keep):
            out.append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _public(node.name):
            out.append(_stub_function(node))
        elif isinstance(node, ast.ClassDef) and _public(node.name):
            out.append(node if is_record(node) else _stub_class(node))
    return out


def _stub_class(node: ast.ClassDef) -> ast.ClassDef:
    node.body = _stub_body(node.body, (ast.Assign, ast.AnnAssign)) or [ast.Pass()]  # class attributes kept
    return node


def starter_source(module: str) -> str:
    """The starter for ``livecoding/<module>.py``, as Python source."""
    if module not in MODULES.values():
        raise ValueError(f"livecoding/{module}.py: not a live-coding reference module; "
                         f"expected one of {sorted(MODULES.values())}")
    path = HERE / f"{module}.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    tree.body = _stub_body(tree.body, (ast.Import, ast.ImportFrom, ast.Assign, ast.AnnAssign))
    header = (f"# Starter for livecoding/{module}.py: the public interface and its contracts, no answer.\n"
              "# Replace every `raise NotImplementedError` with your implementation.\n")
    return header + ast.unparse(ast.fix_missing_locations(tree)) + "\n"


if __name__ == "__main__":  # pragma: no cover - a convenience for reading one starter
    for name in sys.argv[1:] or list(MODULES.values()):
        sys.stdout.write(starter_source(name))
