"""Published engine start-up logs (macros/catalog/startup_logs.yaml) against the sizing engine.

:func:`load_logs` reads and checks the fixtures (an error names the file, the entry and the field);
:func:`compare` sizes each logged deployment with :func:`macros.size.size` (the terminal ledger, the
same code the calculator's parity tests pin) and returns predicted and logged figures side by side:

- weights per GPU against "Model loading took X GiB" (tolerance :data:`WEIGHTS_TOLERANCE`);
- KV tokens given the logged KV memory: logged bytes / the engine's KV bytes per token per GPU,
  rounded down to whole blocks of :data:`BLOCK` tokens as vLLM allocates them (tolerance
  :data:`TOKENS_TOLERANCE`);
- the engine's non-KV overhead (logged total − weights − KV, or the non-torch and activation terms the
  log prints) against the ledger's flat allowances.

A figure the log does not give, or one that misses its tolerance, must carry a reason in the entry's
``unreproduced`` mapping; :func:`compare` reports it and the test fails on a gap without one.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

from . import formulas as F
from .catalog import load_catalog
from .catalog import schema as S
from .catalog.checkpoints import load_checkpoints
from .catalog.records import CatalogError
from .catalog.rules import Where
from .catalog.yamlio import CATALOG_DIR, display, read_yaml

FILE = "startup_logs.yaml"
GIB = 2**30
WEIGHTS_TOLERANCE = 0.03
TOKENS_TOLERANCE = 0.02
BLOCK = F.DEFAULT_BLOCK_SIZE
FIGURES = ("weights", "kv_cache_tokens")


class LoggedFigures(S._Schema):
    weights_gib: Optional[float] = None
    kv_cache_gib: Optional[float] = None
    kv_cache_tokens: Optional[int] = None
    kv_cache_blocks: Optional[int] = None
    non_kv_gib: Optional[float] = None
    activation_gib: Optional[float] = None
    profile_tokens: Optional[int] = None


class LogEntry(S._Schema):
    key: str
    url: str
    engine: str
    engine_version: str
    model: str
    checkpoint: str
    gpu: Optional[str] = None
    gpu_name: Optional[str] = None
    tensor_parallel_size: int
    max_model_len: Optional[int] = None
    gpu_memory_utilization: Optional[float] = None
    mxfp4_backend: Optional[str] = None
    logged_model: Optional[str] = None
    stand_in_note: Optional[str] = None
    notes: Optional[str] = None
    profile_tokens_note: Optional[str] = None
    lines: list[str]
    logged: LoggedFigures
    unreproduced: dict[str, str] = {}


@functools.lru_cache(maxsize=4)
def _load(directory: Path) -> tuple[dict, ...]:
    path = directory / FILE
    ctx = Where(display(path), "logs")
    doc = read_yaml(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("logs"), list):
        raise CatalogError(f"{display(path)}: expected a mapping with a 'logs' list")
    cat, ckpts = load_catalog(directory), load_checkpoints(directory)
    out, seen = [], set()
    for i, entry in enumerate(doc["logs"]):
        key = entry.get("key") if isinstance(entry, dict) else None
        where = ctx.at(str(key) if key else f"#{i}")
        if not isinstance(entry, dict):
            raise where.err(None, "expected a mapping")
        vals = S.validate(LogEntry, entry, str(where)).model_dump()
        if vals["key"] in seen:
            raise where.err("key", "duplicate key")
        seen.add(vals["key"])
        if not vals["url"].startswith("https://github.com/"):
            raise where.err("url", f"{vals['url']!r} is not a public GitHub issue or pull request")
        if vals["engine"] not in ("vllm", "sglang"):
            raise where.err("engine", f"{vals['engine']!r} (valid: vllm, sglang)")
        if vals["model"] not in cat.models:
            raise where.err("model", f"{vals['model']!r} is not a key in models.yaml")
        if vals["checkpoint"] not in ckpts and vals["checkpoint"] not in cat.models:
            raise where.err("checkpoint", f"{vals['checkpoint']!r} is in neither checkpoints.yaml nor models.yaml")
        if vals["gpu"] is None and not vals["gpu_name"]:
            raise where.err("gpu", "give a gpus.yaml key, or gpu_name for a GPU the catalog lacks")
        if vals["gpu"] is not None and vals["gpu"] not in cat.gpus:
            raise where.err("gpu", f"{vals['gpu']!r} is not a key in gpus.yaml")
        lg = vals["logged"]
        if lg["kv_cache_blocks"] is not None:  # vLLM V0 logs blocks of BLOCK tokens
            if lg["kv_cache_tokens"] is not None:
                raise where.err("logged.kv_cache_blocks", "give blocks or tokens, not both")
            lg["kv_cache_tokens"] = lg["kv_cache_blocks"] * BLOCK
        if not vals["lines"]:
            raise where.err("lines", "quote at least one log line")
        for name in vals["unreproduced"]:
            if name not in FIGURES:
                raise where.err(f"unreproduced.{name}", f"not a compared figure (valid: {', '.join(FIGURES)})")
        weights = vals["logged"]["weights_gib"]
        if weights is not None and not any(re.search(rf"(?<![\d.]){re.escape(t)}(?!\d)", line)
                                           for t in {f"{weights}", f"{weights:.2f}", f"{weights:.4f}"}
                                           for line in vals["lines"]):
            raise where.err("logged.weights_gib", f"{weights} appears in none of the quoted lines")
        out.append(vals)
    return tuple(out)


def load_logs(directory: Path | None = None) -> tuple[dict, ...]:
    """The checked fixtures, in file order."""
    return _load(Path(directory or CATALOG_DIR))


@dataclass
class Comparison:
    """Predicted against logged for one start-up; ``gaps`` maps a figure to why it is not reproduced."""

    log: dict
    weights_gib: float
    kv_bytes_per_token: float
    non_kv_allowance_gib: float
    tokens_from_logged_kv: int | None = None
    weights_error: float | None = None
    tokens_error: float | None = None
    requested_gib: float | None = None
    fits: bool | None = None
    gaps: dict[str, str] = field(default_factory=dict)
    activation_gib: float | None = None
    activation_error: float | None = None

    @property
    def non_kv_logged_gib(self) -> float | None:
        """The engine's overhead besides weights and KV: as the log states it, else logged total −
        weights − KV when the log gives both."""
        lg = self.log["logged"]
        if lg["non_kv_gib"] is not None:
            return lg["non_kv_gib"]
        if self.requested_gib is not None and lg["weights_gib"] is not None and lg["kv_cache_gib"] is not None \
                and lg["kv_cache_gib"] > 0:
            return self.requested_gib - lg["weights_gib"] - lg["kv_cache_gib"]
        return None


def tokens_for(kv_bytes: float, per_token: float, block: int = BLOCK) -> int:
    """Whole blocks of ``block`` tokens that ``kv_bytes`` holds at ``per_token`` bytes per token."""
    return int(math.floor(kv_bytes / (per_token * block))) * block


def compare(log: dict) -> Comparison:
    """Size ``log``'s deployment and set each figure's relative error (predicted / logged − 1)."""
    from .size import size

    argv = [log["checkpoint"], "--tensor-parallel-size", str(log["tensor_parallel_size"])]
    if log["gpu"]:  # a GPU the catalog lacks sizes weights and KV per token alike; no budget is compared
        argv += ["--gpu", log["gpu"]]
    if log["mxfp4_backend"]:
        argv += ["--mxfp4-backend", log["mxfp4_backend"]]
    if log["gpu_memory_utilization"] is not None:
        argv += ["--gpu-memory-utilization", str(log["gpu_memory_utilization"])]
    r = size(argv)
    allowance = (F.DEFAULT_ACTIVATION_BYTES + F.DEFAULT_RUNTIME_RESERVE_BYTES) / GIB
    c = Comparison(log, r["weights_bytes_per_gpu"] / GIB, r["kv_bytes_per_token_per_gpu"], allowance,
                   fits=r["fits"])
    if log["gpu_memory_utilization"] is not None and log["gpu"]:
        c.requested_gib = r["requested_bytes"] / GIB
    lg, why = log["logged"], log["unreproduced"]
    if lg["activation_gib"] is not None and lg["profile_tokens"] is not None:
        m = load_catalog().model(log["model"])
        c.activation_gib = F.profile_mlp_activation_bytes(m, lg["profile_tokens"], log["tensor_parallel_size"]) / GIB
        c.activation_error = c.activation_gib / lg["activation_gib"] - 1
    if lg["weights_gib"] is not None:
        c.weights_error = c.weights_gib / lg["weights_gib"] - 1
        if abs(c.weights_error) > WEIGHTS_TOLERANCE:
            c.gaps["weights"] = why.get("weights", "")
    else:
        c.gaps["weights"] = why.get("weights", "")
    if lg["kv_cache_gib"] is not None and lg["kv_cache_gib"] > 0:
        c.tokens_from_logged_kv = tokens_for(lg["kv_cache_gib"] * GIB, c.kv_bytes_per_token)
    if c.tokens_from_logged_kv is not None and lg["kv_cache_tokens"] is not None:
        c.tokens_error = c.tokens_from_logged_kv / lg["kv_cache_tokens"] - 1
        if abs(c.tokens_error) > TOKENS_TOLERANCE:
            c.gaps["kv_cache_tokens"] = why.get("kv_cache_tokens", "")
    else:
        c.gaps["kv_cache_tokens"] = why.get("kv_cache_tokens", "")
    return c


def compare_all(directory: Path | None = None) -> list[Comparison]:
    return [compare(log) for log in load_logs(directory)]
