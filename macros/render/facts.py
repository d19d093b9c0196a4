"""Engine facts inside a sentence: a reference release's name, a flag with its default, an
environment variable, a metric, a log line, a backend or quantization method, each read from the
release's facts snapshot and linked to the line of the engine's source it came from.

A name the reference release does not have fails the page's build with the nearest names, so a
page can never quote a removed or misspelt flag through these macros; ``gone`` asserts the opposite
(a name that is no longer there) and fails once the name comes back.
"""

from __future__ import annotations

import ast
import re

from ..facts import Facts, facts, release as _release
from .registry import macro


def _code(text: str) -> str:
    """``text`` as a Markdown code span, with a fence longer than any backtick run inside."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _link(text: str, url: str) -> str:
    return f"[{_code(text)}]({url})"


def _value(src: str | None) -> str:
    """A default as a reader would type it: ``'auto'`` -> ``auto``, ``0.92`` -> ``0.92``."""
    if src is None:
        return "None"
    try:
        v = ast.literal_eval(src)
    except (ValueError, SyntaxError):
        return src
    if isinstance(v, str):
        return v if v else '""'
    return repr(v)


def _engine(engine: str) -> Facts:
    return facts(engine)


@macro("inline", example='release("vllm")')
def release(engine: str) -> str:
    """The reference release as prose names it, e.g. 'vLLM 0.33.0' (`macros/catalog/releases.yaml`)."""
    return _release(engine).label


@macro("inline", example='version("sglang")')
def version(engine: str) -> str:
    """The reference release's version alone, e.g. '0.5.23'."""
    return _release(engine).version


@macro("inline", example='engine_src("vllm", "vllm/config/cache.py")')
def engine_src(engine: str, path: str, line: int | None = None) -> str:
    """A link to a file (and line) of the engine's source on the reference release's tag, for Sources:
    '[`vllm/config/cache.py`](https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/config/cache.py)'.

    For an engine with a facts snapshot the file must be one of the release's Python files.
    """
    rel = _release(engine)
    if rel.package is not None and path not in _engine(engine).data["files"]:
        raise ValueError(f"{rel.label} has no file {path!r} (its wheel's Python files are listed in "
                         f"{rel.snapshot.name})")
    return _link(path, rel.source_url(path, line))


@macro("inline", example='flag("vllm", "--gpu-memory-utilization", default=True)')
def flag(engine: str, name: str, default: bool = False, command: str | None = None) -> str:
    """A CLI flag, linked to where its default is written at the reference release; with
    `default=True` followed by '(default `0.92`)'.

    Aliases and `--no-` forms are accepted as written (`-tp`, `--no-enable-prefix-caching`); `command`
    picks a subcommand's flag of the same name (`"bench serve"`).
    """
    f = _engine(engine)
    canon, d = f.flag(name, command)
    out = _link(name, f.url(d))
    if default:
        out += f" (default {_code(_value(d['default']))})"
    return out


@macro("inline", example='flag_default("vllm", "--gpu-memory-utilization")')
def flag_default(engine: str, name: str, command: str | None = None, field: bool = False) -> str:
    """A flag's default at the reference release as a code span linked to its source, e.g. '`0.92`'.

    `field=True` gives the config field's own default where the flag's is `None` ("decided from the
    model", as `--enable-prefix-caching` is in vLLM).
    """
    f = _engine(engine)
    _, d = f.flag(name, command)
    value = d.get("field_default") if field else d["default"]
    if field and "field_default" not in d:
        raise ValueError(f"{f.release.label}: {name} has no separate field default; use flag_default without "
                         "field=True")
    # The field's default is written on the config class, not where the flag is registered: link there.
    src = f.entry("config", d["field"]) if field and d.get("field") else d
    return _link(_value(value), f.url(src))


@macro("inline", example='config_default("vllm", "CacheConfig.DEFAULT_BLOCK_SIZE")')
def config_default(engine: str, key: str) -> str:
    """A config class field's (or constant's) default, e.g. '`16`' for `CacheConfig.DEFAULT_BLOCK_SIZE`."""
    f = _engine(engine)
    rec = f.entry("config", key)
    return _link(_value(rec["default"]), f.url(rec))


@macro("inline", example='env_var("vllm", "VLLM_HOST_IP")')
def env_var(engine: str, name: str, default: bool = False) -> str:
    """An environment variable the reference release reads, linked to its definition; with
    `default=True` followed by its default."""
    f = _engine(engine)
    rec = f.env(name)
    out = _link(name, f.url(rec))
    if default:
        out += f" (default {_code(_value(rec.get('default')))})"
    return out


@macro("inline", example='metric("vllm", "vllm:num_requests_running")')
def metric(engine: str, name: str) -> str:
    """A Prometheus metric the reference release exports, linked to its definition; scraped series
    names (`_total`, `_bucket`, `_sum`, `_count`) are accepted for the metric's type."""
    f = _engine(engine)
    _, rec = f.metric(name)
    return _link(name, f.url(rec))


@macro("inline", example='log_line("vllm", "Model loading took")')
def log_line(engine: str, fragment: str) -> str:
    """The one log template at INFO or above that contains `fragment`, in full, linked to where it is
    logged, e.g. '`Model loading took %.4f GiB ...`'."""
    f = _engine(engine)
    text, rec = f.log_line(fragment)
    return _link(text, f.url(rec))


@macro("inline", example='attn_backend("vllm", "FLASH_ATTN")')
def attn_backend(engine: str, name: str) -> str:
    """An attention backend the reference release can select (`--attention-backend` value)."""
    f = _engine(engine)
    return _link(name, f.url(f.entry("attention_backends", name)))


@macro("inline", example='quant_method("vllm", "fp8")')
def quant_method(engine: str, name: str) -> str:
    """A quantization method the reference release accepts (`--quantization` value or checkpoint
    `quant_method`); deprecated ones are marked '(deprecated)'."""
    f = _engine(engine)
    rec = f.entry("quantization_methods", name)
    return _link(name, f.url(rec)) + (" (deprecated)" if rec.get("deprecated") else "")


@macro("inline", example='gone("vllm", "VLLM_ATTENTION_BACKEND")')
def gone(engine: str, name: str) -> str:
    """A flag, environment variable, metric, backend or quantization method the reference release no
    longer has, as a code span; the build fails if the release has it after all."""
    f = _engine(engine)
    where = None
    if name.startswith("-") and f.flag_name(name):
        where = f.url(f.flag(name)[1])
    elif f.has_env(name):
        where = f.url(f.env(name))
    elif f.metric_name(name):
        where = f.url(f.metric(name)[1])
    else:
        for kind in ("attention_backends", "quantization_methods"):
            if name in f.data[kind]:
                where = f.url(f.data[kind][name])
    if where:
        raise ValueError(f"{name} is still in {f.release.label} ({where}); the page says it is gone")
    return _code(name)
