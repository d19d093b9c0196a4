"""Facts of a vLLM release, read statically from its unpacked wheel.

Where each kind of fact lives (checked at vLLM 0.33.0; a release that moves one fails here with the
file named, which is the signal to update this module when re-pinning):

- flags: ``add_argument`` calls anywhere in the package. Most engine flags are registered as
  ``group.add_argument("--name", **kwargs["field"])`` with ``kwargs = get_kwargs(SomeConfig)``
  (``vllm/engine/arg_utils.py``), and the frontend's as a loop over ``get_kwargs(cls)``
  (``vllm/entrypoints/common/cli_args.py``); the default is then the config field's default.
- config defaults: annotated fields (and ``ClassVar`` constants) of the classes in ``vllm/config/``.
- environment variables: the keys of ``environment_variables`` in ``vllm/envs.py``; variables read
  elsewhere with a constant name are kept apart as ``env_unregistered``.
- attention backends: ``AttentionBackendEnum`` (``vllm/v1/attention/backends/registry.py``).
- quantization methods: the ``QuantizationMethods`` literal and ``DEPRECATED_QUANTIZATION_METHODS``
  (``vllm/model_executor/layers/quantization/__init__.py``).
- metrics: ``name="vllm:..."`` in metric constructors.
- batch defaults per GPU tier: ``EngineArgs.get_batch_defaults`` (``vllm/engine/arg_utils.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

from . import common
from .astkit import (ClassDef, ExtractError, Module, all_fields, annotation_is_bool, classes, const_str, dotted,
                     is_call_to, kwarg, literal_aliases, literal_choices, parse_tree, src, subclasses)

PACKAGE = "vllm"
ENVS = "vllm/envs.py"
BACKENDS = "vllm/v1/attention/backends/registry.py"
QUANT = "vllm/model_executor/layers/quantization/__init__.py"
ARG_UTILS = "vllm/engine/arg_utils.py"
CONFIG_DIR = "vllm/config/"
# Where the classes that get_kwargs reads live, and the files whose log lines an operator meets
# while starting and serving (the pages quote start-up, memory, backend and scheduler lines).
CLASS_DIRS = ("vllm/config/", "vllm/engine/", "vllm/entrypoints/", "vllm/benchmarks/")
LOG_DIRS = ("vllm/v1/", "vllm/engine/", "vllm/entrypoints/", "vllm/config/", "vllm/model_executor/model_loader/",
            "vllm/model_executor/layers/quantization/", "vllm/platforms/", "vllm/compilation/",
            "vllm/distributed/", "vllm/lora/")
SKIP = ("vllm/third_party/", "vllm/tests/")


def _need(modules: dict[str, Module], path: str) -> Module:
    if path not in modules:
        raise ExtractError(f"{path}: expected file is missing from this vLLM release")
    return modules[path]


def command_of(path: str) -> str:
    """Which command a registration belongs to, from its file."""
    if path in (ARG_UTILS, "vllm/entrypoints/common/cli_args.py"):
        return "serve"
    parts = path[len("vllm/"):-3].split("/")
    if parts[0] == "benchmarks" and len(parts) > 1:
        return "bench " + parts[1].replace("_", "-")
    if parts[-1] == "run_batch":
        return "run-batch"
    return path


def _flag_of_field(name: str) -> str:
    return "--" + name.replace("_", "-")


def _field_record(cls: str, fdef, aliases: dict[str, list[str]], index: dict[str, list[ClassDef]]) -> dict:
    ann = ast.parse(fdef.annotation, mode="eval").body
    values, is_open = literal_choices(ann, aliases)
    default = fdef.default if fdef.default is not None else (f"{fdef.factory}()" if fdef.factory else None)
    return {
        "field": f"{cls}.{fdef.name}",
        "default": _resolve(default, index),
        "choices": None if is_open else values,
        "suggested": values if is_open else None,
        "negatable": annotation_is_bool(fdef.annotation) and not {"str", "None"} <= _names(ann),
        "file": fdef.file,
        "line": fdef.line,
    }


def _resolve(default: str | None, index: dict[str, list[ClassDef]], depth: int = 3) -> str | None:
    """A default written as another class's field (``CacheConfig.gpu_memory_utilization``, as
    EngineArgs does) becomes that field's own default."""
    if default is None or depth == 0 or default.count(".") != 1:
        return default
    cls, name = default.split(".")
    fdef = all_fields(cls, index).get(name) if cls in index else None
    if fdef is None or fdef.default is None:
        return default
    return _resolve(fdef.default, index, depth - 1)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        "None" for n in ast.walk(node) if isinstance(n, ast.Constant) and n.value is None}


def _enclosing_class(parents) -> str | None:
    return next((p.name for p in reversed(parents) if isinstance(p, ast.ClassDef)), None)


def flags(modules: dict[str, Module], index: dict[str, list[ClassDef]], aliases: dict[str, list[str]]) -> dict:
    """``{"--flag": [definition, ...]}``: each definition with its default, choices, whether a
    ``--no-`` form exists, its aliases, the config field it sets, where the default is written and
    where the flag is registered."""
    out: dict[str, list[dict]] = {}

    def add(names: list[str], rec: dict, path: str, line: int) -> None:
        longs = [n for n in names if n.startswith("--")]
        if not longs:
            return
        rec = dict(rec, aliases=sorted(set(names) - {longs[0]}), command=command_of(path),
                   registered=f"{path}:{line}")
        out.setdefault(longs[0], []).append(rec)

    for path in sorted(p for p in modules if "add_argument" in modules[p].source and not p.startswith(SKIP)):
        tree = modules[path].tree
        for func, parents in _functions(tree):
            cls_here = _enclosing_class(parents)
            kw_of: dict[str, set[str]] = {}   # local name -> config classes it holds get_kwargs of
            loops: dict[str, set[str]] = {}   # loop variable over kw.items() -> classes
            for node in ast.walk(func):
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    target = node.targets[0].id
                    if is_call_to(node.value, "get_kwargs") and node.value.args:
                        arg = dotted(node.value.args[0])
                        kw_of[target] = subclasses(cls_here, index) if arg == "cls" and cls_here else {arg}
                if isinstance(node, ast.For) and isinstance(node.iter, ast.Call) and isinstance(node.iter.func,
                                                                                              ast.Attribute):
                    owner = dotted(node.iter.func.value)
                    if node.iter.func.attr == "items" and owner in kw_of and isinstance(node.target, ast.Tuple):
                        key, value = node.target.elts
                        loops[dotted(value)] = kw_of[owner]
                        loops["__key__" + dotted(key)] = kw_of[owner]
            for call in common.add_argument_calls(func):
                names = common.option_names(call)
                spread = next((k.value for k in call.keywords if k.arg is None), None)
                explicit = common.plain_argument(call)
                if isinstance(spread, ast.Dict):
                    # **{**kwargs["field"], "default": None}: the field, with keys written over it
                    inner = next((v for k, v in zip(spread.keys, spread.values) if k is None), None)
                    for k, v in zip(spread.keys, spread.values):
                        if const_str(k) == "default":
                            explicit["default"] = src(v)
                            explicit["_default_written"] = True
                    spread = inner
                if isinstance(spread, ast.Subscript) and dotted(spread.value) in kw_of:
                    fname = const_str(spread.slice)
                    if fname is None:
                        raise ExtractError(f"{path}:{call.lineno}: **kwargs[...] with a non-constant field name")
                    for cls in sorted(kw_of[dotted(spread.value)]):
                        fdef = all_fields(cls, index).get(fname)
                        if fdef is None:
                            continue
                        rec = _field_record(cls, fdef, aliases, index)
                        _override(rec, explicit, call, path)
                        add(names, rec, path, call.lineno)
                        break
                    else:
                        raise ExtractError(f"{path}:{call.lineno}: field {fname!r} not found in "
                                           f"{sorted(kw_of[dotted(spread.value)])}")
                elif isinstance(spread, ast.Name) and dotted(spread) in loops:
                    for cls in sorted(loops[dotted(spread)]):
                        for fname, fdef in all_fields(cls, index).items():
                            rec = _field_record(cls, fdef, aliases, index)
                            add(names + [_flag_of_field(fname)], rec, path, call.lineno)
                elif names:
                    rec = {"field": None, **{k: explicit[k] for k in ("default", "choices", "negatable")},
                           "suggested": None, "file": path, "line": call.lineno}
                    rec["default"] = _resolve(rec["default"], index)
                    add(names, rec, path, call.lineno)
    return {k: _dedupe(v) for k, v in sorted(out.items())}


def _override(rec: dict, explicit: dict, call: ast.Call, path: str) -> None:
    """Keywords written at the registration override the field's (``default=``, ``choices=``); the
    field's own default is kept as ``field_default`` (what the engine uses when the flag's default,
    often None, means "decide from the model")."""
    if kwarg(call, "default") is not None or explicit.get("_default_written"):
        rec["field_default"] = rec["default"]
        rec.update(default=explicit["default"], file=path, line=call.lineno)
    if explicit["choices"] is not None:
        rec["choices"] = explicit["choices"]
    if explicit["negatable"]:
        rec["negatable"] = True


def _dedupe(defs: list[dict]) -> list[dict]:
    seen, out = set(), []
    for d in defs:
        key = (d["command"], d["field"], d["default"], d["registered"])
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def _functions(tree: ast.AST):
    stack = [(tree, ())]
    while stack:
        node, parents = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node, parents
        for child in ast.iter_child_nodes(node):
            stack.append((child, parents + (node,)))


def config(modules: dict[str, Module], index: dict[str, list[ClassDef]], aliases: dict[str, list[str]]) -> dict:
    """``{"CacheConfig.block_size": {...}}`` for the config classes, plus their ``ClassVar`` constants."""
    out: dict[str, dict] = {}
    for path in sorted(p for p in modules if p.startswith(CONFIG_DIR)):
        for node in modules[path].tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            for stmt in node.body:
                if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)):
                    continue
                name = stmt.target.id
                ann = src(stmt.annotation, 10_000)
                if ann.startswith("ClassVar"):
                    out[f"{node.name}.{name}"] = {"default": src(stmt.value), "choices": None, "classvar": True,
                                                 "file": path, "line": stmt.lineno}
                    continue
                if name.startswith("_"):
                    continue
                fdef = index[node.name][0].fields.get(name) if node.name in index else None
                if fdef is None or fdef.file != path:
                    fdef = next((d.fields[name] for d in index.get(node.name, []) if d.file == path
                                 and name in d.fields), None)
                if fdef is None:
                    continue
                rec = _field_record(node.name, fdef, aliases, index)
                rec.pop("field")
                rec.pop("negatable")
                out[f"{node.name}.{name}"] = rec
    return out


def env(modules: dict[str, Module]) -> dict:
    """The registry of ``vllm/envs.py``: ``{name: {"default", "choices", "expr", "file", "line"}}``."""
    mod = _need(modules, ENVS)
    registry = None
    for node in mod.tree.body:
        target = node.target if isinstance(node, ast.AnnAssign) else (
            node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None)
        if isinstance(target, ast.Name) and target.id == "environment_variables" and isinstance(node.value, ast.Dict):
            registry = node.value
    if registry is None:
        raise ExtractError(f"{ENVS}: the environment_variables dict was not found")
    out = {}
    for key, value in zip(registry.keys, registry.values):
        name = const_str(key)
        if name is None:
            continue
        default = choices = None
        for node in ast.walk(value):
            if isinstance(node, ast.Call) and const_str(node.args[0] if node.args else None) == name:
                callee = dotted(node.func).split(".")[-1]
                if callee in ("getenv", "get") and len(node.args) > 1:
                    default = src(node.args[1])
                    break
                if callee.startswith("env_") and "choices" in callee:
                    default = src(node.args[1]) if len(node.args) > 1 else src(kwarg(node, "default"))
                    ch = node.args[2] if len(node.args) > 2 else kwarg(node, "choices")
                    if isinstance(ch, (ast.List, ast.Tuple)):
                        choices = [src(e) for e in ch.elts]
                    break
        out[name] = {"default": default, "choices": choices, "expr": src(value), "file": ENVS, "line": key.lineno}
    return dict(sorted(out.items()))


def enum_members(modules: dict[str, Module], path: str, cls: str) -> dict:
    mod = _need(modules, path)
    node = next((n for n in mod.tree.body if isinstance(n, ast.ClassDef) and n.name == cls), None)
    if node is None:
        raise ExtractError(f"{path}: class {cls} was not found")
    out = {}
    for stmt in node.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            out[stmt.targets[0].id] = {"value": src(stmt.value), "file": path, "line": stmt.lineno}
    if not out:
        raise ExtractError(f"{path}: class {cls} has no members")
    return out


def quantization(modules: dict[str, Module]) -> dict:
    mod = _need(modules, QUANT)
    methods: dict[str, dict] = {}
    deprecated: set[str] = set()
    for node in mod.tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AnnAssign) else None)
        name = target.id if isinstance(target, ast.Name) else None
        if name == "QuantizationMethods" and isinstance(node.value, ast.Subscript):
            elts = node.value.slice.elts if isinstance(node.value.slice, ast.Tuple) else [node.value.slice]
            for e in elts:
                if const_str(e):
                    methods[e.value] = {"file": QUANT, "line": e.lineno}
        if name == "DEPRECATED_QUANTIZATION_METHODS" and isinstance(node.value, ast.List):
            deprecated = {e.value for e in node.value.elts if const_str(e)}
    if not methods:
        raise ExtractError(f"{QUANT}: the QuantizationMethods literal was not found")
    for m in methods:
        methods[m]["deprecated"] = m in deprecated
    return dict(sorted(methods.items()))


def batch_defaults(modules: dict[str, Module]) -> list[dict]:
    """The GPU tiers of ``EngineArgs.get_batch_defaults``: for each branch of its first ``if`` chain
    on ``device_memory``, the condition and the per-usage-context defaults."""
    mod = _need(modules, ARG_UTILS)
    func = next((n for n in ast.walk(mod.tree) if isinstance(n, ast.FunctionDef) and n.name == "get_batch_defaults"),
                None)
    if func is None:
        raise ExtractError(f"{ARG_UTILS}: EngineArgs.get_batch_defaults was not found")
    chain = next((s for s in func.body if isinstance(s, ast.If) and "device_memory" in ast.unparse(s.test)), None)
    if chain is None:
        raise ExtractError(f"{ARG_UTILS}:{func.lineno}: get_batch_defaults has no if-chain on device_memory")
    tiers = []
    for test, body in _branches(chain):
        tier = {"when": src(test, 400) if test is not None else None, "file": ARG_UTILS, "line": body[0].lineno}
        for stmt in body:
            if (isinstance(stmt, ast.Assign) and isinstance(stmt.targets[0], ast.Name)
                    and isinstance(stmt.value, ast.Dict)):
                key = stmt.targets[0].id.replace("default_", "")
                tier[key] = {dotted(k).split(".")[-1]: ast.literal_eval(v)
                             for k, v in zip(stmt.value.keys, stmt.value.values)}
        tiers.append(tier)
    for t in tiers:
        if "max_num_batched_tokens" not in t or "max_num_seqs" not in t:
            raise ExtractError(f"{ARG_UTILS}:{t['line']}: a get_batch_defaults branch lacks one of "
                               "default_max_num_batched_tokens / default_max_num_seqs")
    return tiers


def _branches(node: ast.If):
    """(test, body) of each branch of an if/elif/else chain; the else branch has test None."""
    while True:
        yield node.test, node.body
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            node = node.orelse[0]
            continue
        if node.orelse:
            yield None, node.orelse
        return


def extract(root: Path) -> dict:
    """All facts of the vLLM source unpacked under ``root`` (the folder holding ``vllm/``)."""
    modules = parse_tree(root, PACKAGE)
    index = classes(modules, lambda p: p.startswith(CLASS_DIRS) or "add_argument" in modules[p].source)
    aliases = literal_aliases(modules)
    registered = env(modules)
    return {
        "flags": flags(modules, index, aliases),
        "config": config(modules, index, aliases),
        "env": registered,
        "env_unregistered": {k: v for k, v in common.env_reads(modules, ("VLLM_",)).items()
                             if k not in registered},
        "attention_backends": enum_members(modules, BACKENDS, "AttentionBackendEnum"),
        "quantization_methods": quantization(modules),
        "metrics": common.metrics(modules, "vllm"),
        "log_lines": common.log_lines(modules, LOG_DIRS),
        "files": sorted(modules),
        "batch_defaults": batch_defaults(modules),
    }
