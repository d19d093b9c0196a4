"""Facts of an SGLang release, read statically from its unpacked wheel.

Where each kind of fact lives (checked at SGLang 0.5.23):

- flags: the fields of the namespace classes in ``sglang/srt/arg_groups/fields/``, written
  ``name: A[T, "help"] = default`` or ``name: A[T, Arg(cli_name=..., aliases=[...], choices=...)]``;
  the flag is ``cli_name`` or ``--name-with-dashes`` (``arg_groups/arg_utils.py``,
  ``add_cli_args_from_dataclass``); ``Arg(no_cli=True)`` has none. A few flags are registered by
  hand in ``ServerArgs.add_cli_args`` (``sglang/srt/server_args.py``), and the benchmark scripts
  register their own with plain ``add_argument``.
- environment variables: the ``Envs`` class of ``sglang/srt/environ.py`` (``NAME = EnvBool(False)``
  and the like); variables read elsewhere with a constant name are kept apart.
- attention backends and quantization methods: ``ATTENTION_BACKEND_CHOICES`` and
  ``QUANTIZATION_CHOICES`` (``sglang/srt/arg_groups/choices.py``).
- metrics: ``name="sglang:..."`` in metric constructors.
"""

from __future__ import annotations

import ast
from pathlib import Path

from . import common
from .astkit import (ExtractError, Module, const_str, dotted, is_call_to, kwarg, list_constants, literal_aliases,
                     literal_choices, parse_tree, src)

PACKAGE = "sglang"
FIELDS_DIR = "sglang/srt/arg_groups/fields/"
SERVER_ARGS = "sglang/srt/server_args.py"
ENVIRON = "sglang/srt/environ.py"
CHOICES = "sglang/srt/arg_groups/choices.py"
# The serving runtime (sglang/srt) and its benchmark scripts; the multimodal generator and test
# folders register flags of their own that are not the server's.
FLAG_SCOPE = ("sglang/srt/", "sglang/bench_", "sglang/benchmark/", "sglang/launch_server.py", "sglang/cli/")
LOG_DIRS = ("sglang/srt/managers/", "sglang/srt/model_executor/", "sglang/srt/mem_cache/", "sglang/srt/entrypoints/",
            "sglang/srt/layers/quantization/", "sglang/srt/layers/attention/", "sglang/srt/disaggregation/",
            "sglang/srt/speculative/", "sglang/srt/model_loader/", "sglang/srt/server_args.py",
            "sglang/srt/arg_groups/", "sglang/srt/distributed/", "sglang/srt/lora/")


def command_of(path: str) -> str:
    if path.startswith(FIELDS_DIR) or path == SERVER_ARGS:
        return "launch_server"
    return path[:-3].replace("/", ".")


def _arg_meta(annotation: ast.AST) -> tuple[ast.AST, ast.Call | None, bool] | None:
    """(type, Arg(...) call or None, has-help) of an ``A[T, ...]`` annotation; None if not one."""
    if not (isinstance(annotation, ast.Subscript) and dotted(annotation.value).split(".")[-1] in ("A", "Annotated")):
        return None
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    if len(elts) < 2:
        return None
    meta = elts[1]
    if is_call_to(meta, "Arg"):
        return elts[0], meta, True
    if const_str(meta) is not None or isinstance(meta, (ast.JoinedStr, ast.BinOp)):
        return elts[0], None, True
    return None


def _choices(node: ast.AST | None, lists: dict[str, list[str]]) -> list[str] | None:
    if node is None:
        return None
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [src(e) for e in node.elts]
    if isinstance(node, ast.Name) and node.id in lists:
        return list(lists[node.id])
    return None


def fields(modules: dict[str, Module], lists: dict[str, list[str]], aliases: dict[str, list[str]]):
    """(flags, config) from the namespace field classes."""
    flags: dict[str, list[dict]] = {}
    config: dict[str, dict] = {}
    paths = sorted(p for p in modules if p.startswith(FIELDS_DIR))
    if not paths:
        raise ExtractError(f"{FIELDS_DIR}: no field modules found in this SGLang release")
    for path in paths:
        for cls in (n for n in modules[path].tree.body if isinstance(n, ast.ClassDef)):
            for stmt in cls.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                meta = _arg_meta(stmt.annotation)
                if meta is None:
                    continue
                ftype, arg, _ = meta
                name = stmt.target.id
                default = src(stmt.value) if stmt.value is not None else None
                choices = _choices(kwarg(arg, "choices"), lists) if arg is not None else None
                if choices is None:
                    values, is_open = literal_choices(ftype, aliases)
                    choices = None if is_open else values
                key = f"{cls.name}.{name}"
                config[key] = {"default": default, "choices": choices, "file": path, "line": stmt.lineno}
                if arg is not None and isinstance(kwarg(arg, "no_cli"), ast.Constant) and kwarg(arg, "no_cli").value:
                    continue
                cli = const_str(kwarg(arg, "cli_name")) if arg is not None else None
                alias_node = kwarg(arg, "aliases") if arg is not None else None
                alias_list = [const_str(e) for e in alias_node.elts] if isinstance(alias_node, ast.List) else []
                flag = cli or "--" + name.replace("_", "-")
                action = src(kwarg(arg, "action")) if arg is not None else None
                rec = {"field": key, "default": default, "choices": choices,
                       "negatable": bool(action and "BooleanOptional" in action),
                       "aliases": sorted(a for a in alias_list if a), "command": "launch_server",
                       "file": path, "line": stmt.lineno, "registered": f"{path}:{stmt.lineno}"}
                flags.setdefault(flag, []).append(rec)
    return flags, config


def plain_flags(modules: dict[str, Module], config: dict[str, dict], lists: dict[str, list[str]]) -> dict:
    """Flags registered with ``add_argument`` by hand, anywhere in the package."""
    by_field = {k.split(".", 1)[1]: v for k, v in config.items()}
    out: dict[str, list[dict]] = {}
    for path in sorted(p for p in modules if p.startswith(FLAG_SCOPE) and "/test/" not in p
                       and "add_argument" in modules[p].source):
        for call in common.add_argument_calls(modules[path].tree):
            names = common.option_names(call)
            longs = [n for n in names if n.startswith("--")]
            if not longs:
                continue
            explicit = common.plain_argument(call)
            default_node = kwarg(call, "default")
            default, dfile, dline = explicit["default"], path, call.lineno
            if is_call_to(default_node, "_declared_default") and default_node.args:
                declared = by_field.get(const_str(default_node.args[0]) or "")
                if declared is not None:
                    default, dfile, dline = declared["default"], declared["file"], declared["line"]
            choices = explicit["choices"] or _choices(kwarg(call, "choices"), lists)
            out.setdefault(longs[0], []).append({
                "field": None, "default": default, "choices": choices, "negatable": explicit["negatable"],
                "aliases": sorted(set(names) - {longs[0]}), "command": command_of(path), "file": dfile,
                "line": dline, "registered": f"{path}:{call.lineno}"})
    return out


def env(modules: dict[str, Module]) -> dict:
    mod = modules.get(ENVIRON)
    if mod is None:
        raise ExtractError(f"{ENVIRON}: expected file is missing from this SGLang release")
    cls = next((n for n in mod.tree.body if isinstance(n, ast.ClassDef) and n.name == "Envs"), None)
    if cls is None:
        raise ExtractError(f"{ENVIRON}: class Envs was not found")
    out = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name) \
                and isinstance(stmt.value, ast.Call) and dotted(stmt.value.func).startswith("Env"):
            call = stmt.value
            out[stmt.targets[0].id] = {
                "type": dotted(call.func), "default": src(call.args[0]) if call.args else src(kwarg(call, "default")),
                "choices": None, "expr": src(call), "file": ENVIRON, "line": stmt.lineno}
    if not out:
        raise ExtractError(f"{ENVIRON}: class Envs declares no variables")
    return dict(sorted(out.items()))


def _choice_facts(lists_in: dict[str, list], modules: dict[str, Module], name: str) -> dict:
    mod = modules.get(CHOICES)
    if mod is None:
        raise ExtractError(f"{CHOICES}: expected file is missing from this SGLang release")
    for node in mod.tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id == name and isinstance(node.value, ast.List):
            return {e.value: {"file": CHOICES, "line": e.lineno} for e in node.value.elts if const_str(e)}
    raise ExtractError(f"{CHOICES}: {name} was not found")


def extract(root: Path) -> dict:
    modules = parse_tree(root, PACKAGE)
    lists = list_constants(modules)
    aliases = literal_aliases(modules)
    flags, config = fields(modules, lists, aliases)
    for flag, defs in plain_flags(modules, config, lists).items():
        flags.setdefault(flag, []).extend(defs)
    registered = env(modules)
    return {
        "flags": dict(sorted(flags.items())),
        "config": dict(sorted(config.items())),
        "env": registered,
        "env_unregistered": {k: v for k, v in common.env_reads(modules, ("SGLANG_", "SGL_")).items()
                             if k not in registered},
        "attention_backends": _choice_facts(lists, modules, "ATTENTION_BACKEND_CHOICES"),
        "quantization_methods": _choice_facts(lists, modules, "QUANTIZATION_CHOICES"),
        "metrics": common.metrics(modules, "sglang"),
        "log_lines": common.log_lines(modules, LOG_DIRS),
        "files": sorted(modules),
    }
