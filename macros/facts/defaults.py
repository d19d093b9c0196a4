"""The engine defaults the sizing engine starts from, read from the vLLM reference release's facts
snapshot instead of typed constants: the memory fraction (``--gpu-memory-utilization``), the KV block
size, and the batched-token and sequence limits vLLM picks per GPU tier when the flags are unset.

Each value names the file and line it was read from (``source``), so pages and the calculator can cite
it; re-pinning the release changes them with no edit here. A release whose tier conditions this module
cannot read fails loudly with the condition named (teach :func:`_evaluate` the new name).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from . import facts

GIB = 2**30


@dataclass(frozen=True)
class Default:
    value: float | int
    flag: str
    source: str        # URL of the line at the reference release


def _literal(src: str | None, what: str):
    try:
        return ast.literal_eval(src)
    except (ValueError, SyntaxError):
        raise ValueError(f"{what}: default {src!r} in the facts snapshot is not a literal value") from None


def gpu_memory_utilization() -> Default:
    f = facts("vllm")
    _, d = f.flag("--gpu-memory-utilization")
    return Default(float(_literal(d["default"], "--gpu-memory-utilization")), "--gpu-memory-utilization", f.url(d))


def block_size() -> Default:
    """The KV block size vLLM uses when ``--block-size`` is unset (``CacheConfig.DEFAULT_BLOCK_SIZE``;
    an attention backend may prefer another, which the pages that depend on it say)."""
    f = facts("vllm")
    rec = f.entry("config", "CacheConfig.DEFAULT_BLOCK_SIZE")
    return Default(int(_literal(rec["default"], "CacheConfig.DEFAULT_BLOCK_SIZE")), "--block-size", f.url(rec))


_NAMES = ("device_memory", "device_name", "is_gb10", "GiB_bytes")


def _evaluate(cond: str, env: dict) -> bool:
    """Evaluate a tier condition of ``get_batch_defaults`` (comparisons, ``in``/``not in``, ``and``,
    ``or``, ``not``, numbers, strings and the names in :data:`_NAMES`)."""
    node = ast.parse(cond, mode="eval").body

    def ev(n):
        if isinstance(n, ast.BoolOp):
            vals = [ev(v) for v in n.values]
            return all(vals) if isinstance(n.op, ast.And) else any(vals)
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.Not):
            return not ev(n.operand)
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult):
            return ev(n.left) * ev(n.right)
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            a, b = ev(n.left), ev(n.comparators[0])
            op = type(n.ops[0])
            table = {ast.GtE: lambda: a >= b, ast.Gt: lambda: a > b, ast.LtE: lambda: a <= b,
                     ast.Lt: lambda: a < b, ast.Eq: lambda: a == b, ast.NotEq: lambda: a != b,
                     ast.In: lambda: a in b, ast.NotIn: lambda: a not in b}
            if op in table:
                return table[op]()
        if isinstance(n, ast.Constant):
            return n.value
        if isinstance(n, ast.Name) and n.id in env:
            return env[n.id]
        raise ValueError(f"vLLM batch-default condition {cond!r}: cannot evaluate {ast.unparse(n)!r} "
                         f"(known names: {', '.join(_NAMES)}); teach macros/facts/defaults.py")

    return bool(ev(node))


@dataclass(frozen=True)
class BatchDefaults:
    max_num_batched_tokens: int
    max_num_seqs: int
    source: str


def batch_defaults(total_memory_bytes: float, device_name: str, usage: str = "OPENAI_API_SERVER",
                   is_gb10: bool = False) -> BatchDefaults:
    """vLLM's defaults for ``--max-num-batched-tokens`` and ``--max-num-seqs`` on a GPU whose total
    memory (as CUDA reports it) and name are given, for ``vllm serve`` (``OPENAI_API_SERVER``) or the
    offline ``LLM`` class (``LLM_CLASS``): the first tier of ``EngineArgs.get_batch_defaults`` whose
    condition holds (CUDA GPUs; the TPU and CPU overrides are not modelled)."""
    f = facts("vllm")
    env = {"device_memory": total_memory_bytes, "device_name": device_name.lower(), "is_gb10": is_gb10,
           "GiB_bytes": GIB}
    for tier in f.data["batch_defaults"]:
        if tier["when"] is None or _evaluate(tier["when"], env):
            if usage not in tier["max_num_batched_tokens"]:
                raise ValueError(f"unknown usage context {usage!r}; known: {sorted(tier['max_num_batched_tokens'])}")
            return BatchDefaults(tier["max_num_batched_tokens"][usage], tier["max_num_seqs"][usage],
                                 f.release.source_url(tier["file"], tier["line"]))
    raise ValueError(f"{f.release.label}: no batch-default tier applies and there is no else branch")
