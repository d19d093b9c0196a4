"""Macro inputs: catalog keys resolved to catalog objects, and plain values checked.

Each function raises :class:`~macros.errors.MacroInputError` with a message that lists the valid
choices, so a page author can fix the call without reading code. The registry
(:mod:`macros.render.registry`) applies them by parameter name; macro bodies call the few that depend
on more than one input (``check_tp``, ``peak_flops``, ``gpu_price_of``).
"""

from __future__ import annotations

import math
import re
from typing import Callable, TypeVar

from .. import formulas as F
from .. import units as U
from ..catalog import ApiPrice, Catalog, Format, Gpu, GpuPrice, Model, UnknownKeyError, load_catalog
from ..errors import MacroInputError

T = TypeVar("T")


def cat() -> Catalog:
    """The catalog (cached by :func:`~macros.catalog.load_catalog`, re-read when a file changes)."""
    return load_catalog()


def _lookup(get: Callable[[str], T], key: str) -> T:
    try:
        return get(key)
    except UnknownKeyError as exc:
        raise MacroInputError(str(exc)) from None


def model(key: str) -> Model:
    return _lookup(cat().model, key)


def gpu(key: str) -> Gpu:
    return _lookup(cat().gpu, key)


def fmt(key: str) -> Format:
    return _lookup(cat().format, key)


def api(key: str) -> ApiPrice:
    return _lookup(cat().api_price, key)


def kv_dtype(key: str) -> Format:
    f = fmt(key)
    if not f.kv_cache:
        valid = ", ".join(sorted(cat().kv_formats()))
        raise MacroInputError(f"format {key!r} cannot be used as a KV-cache dtype (formats.yaml marks it "
                              f"kv_cache: false); valid KV dtypes: {valid}")
    return f


_TOKENS_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")


def tokens(name: str, value, allow_zero: bool = False) -> int:
    """A token count from an int or a string like '8K' (K = 1024, M = 1024**2)."""
    if isinstance(value, str):
        m = _TOKENS_RE.match(value)
        if not m:
            raise MacroInputError(f"{name} must be a whole number of tokens such as 8192 or '8K', got {value!r}")
        mult = {"": 1, "k": 1024, "m": 1024**2}[m.group(2).lower()]
        value = float(m.group(1)) * mult
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise MacroInputError(f"{name} must be a whole number of tokens, got {value!r}")
    value = int(value)
    if value < 0 or (value == 0 and not allow_zero):
        raise MacroInputError(f"{name} must be {'>= 0' if allow_zero else '>= 1'}, got {value}")
    return value


def count(name: str, value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer() or value < 1:
        raise MacroInputError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def number(name: str, value, *, positive: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise MacroInputError(f"{name} must be a number, got {value!r}")
    if positive and value <= 0:
        raise MacroInputError(f"{name} must be > 0, got {value!r}")
    if not positive and value < 0:
        raise MacroInputError(f"{name} must be >= 0, got {value!r}")
    return float(value)


def check_tp(m: Model, n_gpus: int) -> None:
    try:
        F.check_tp(m, n_gpus)
    except ValueError as exc:
        raise MacroInputError(str(exc)) from None


def peak_flops(g: Gpu, f: Format) -> tuple[float, str]:
    """The dense tensor rate a matmul in ``f`` runs at on ``g``, and its label.

    FP8 weights with FP8 activations use the FP8 rate, INT8 the INT8 rate; weight-only formats
    (INT4, MXFP4 on GPUs without FP4 matmuls, GGUF, NF4) dequantize to BF16 and use the BF16 rate.
    """
    if f.key == "fp8":
        if g.fp8_dense_flops is None:
            raise MacroInputError(f"{g.name} has no FP8 tensor cores (gpus.yaml fp8_dense_flops is null); "
                                  "use fmt='bf16' or a GPU with FP8: "
                                  + ", ".join(k for k, v in cat().gpus.items() if v.fp8_dense_flops))
        return g.fp8_dense_flops, "dense FP8"
    if f.key == "int8":
        if g.int8_dense_ops is None:
            raise MacroInputError(f"{g.name} has no INT8 tensor rate in gpus.yaml; use fmt='bf16'")
        return g.int8_dense_ops, "dense INT8"
    return g.bf16_dense_flops, "dense BF16"


def integer_rate(f: Format) -> bool:
    """True when a matmul in ``f`` runs at an integer tensor rate (INT8 W8A8), counted in TOPS, not TFLOPS."""
    return f.key == "int8"


def fmt_peak(f: Format, rate: float) -> str:
    """A tensor rate of :func:`peak_flops` (or derived from it) in its unit: '624 TOPS' for INT8,
    '989.5 TFLOPS' otherwise."""
    return U.fmt_ops(rate) if integer_rate(f) else U.fmt_flops(rate)


def op_unit(f: Format) -> str:
    """The unit of work behind an intensity or ridge point in ``f``: 'op' for INT8, else 'FLOP'."""
    return "op" if integer_rate(f) else "FLOP"


def gpu_price_of(g: Gpu) -> GpuPrice:
    """The first GPU-hour price of ``g`` in prices.yaml."""
    prices = cat().gpu_prices_for(g.key)
    if not prices:
        priced = ", ".join(sorted({p.gpu for p in cat().prices.gpu_hour.values()}))
        raise MacroInputError(f"prices.yaml has no GPU-hour price for {g.key!r}; GPUs with a price: {priced}")
    return prices[0]
