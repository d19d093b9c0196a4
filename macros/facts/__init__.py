"""Engine facts at the reference releases: the releases file and the snapshots extracted from wheels.

``macros/catalog/releases.yaml`` names the release of each engine and library the site is written
against. For the engines whose wheel ships Python source (``facts:`` in that file), a snapshot in
``macros/catalog/facts/<key>-<version>.json`` holds what ``./scripts/extract-facts`` read from that
wheel: CLI flags with their defaults and choices, config-field defaults, environment variables,
attention backends, quantization methods, Prometheus metric names and log-line templates, each with
the file and line it came from. Nothing here imports an engine or MkDocs.
"""

from __future__ import annotations

import datetime as _dt
import functools
import json
from dataclasses import dataclass
from pathlib import Path

from ..catalog.records import CatalogError
from ..catalog.yamlio import CATALOG_DIR, display, read_yaml

RELEASES_FILE = CATALOG_DIR / "releases.yaml"
FACTS_DIR = CATALOG_DIR / "facts"
SNAPSHOT_SCHEMA = 1
KINDS = ("flags", "config", "env", "env_unregistered", "attention_backends", "quantization_methods", "metrics",
         "log_lines")
MAIN_COMMANDS = ("serve", "launch_server")
METRIC_SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"),
                   "summary": ("_sum", "_count", "_created")}


@dataclass(frozen=True)
class Release:
    key: str
    name: str
    version: str
    date: _dt.date
    source: str
    repo: str
    tag: str
    via: str | None = None
    package: str | None = None     # set when a facts snapshot is extracted from the wheel
    repo_path: str = ""            # where the package folder sits in the repository

    @property
    def label(self) -> str:
        """How prose names it: 'vLLM 0.33.0'."""
        return f"{self.name} {self.version}"

    @property
    def snapshot(self) -> Path:
        return FACTS_DIR / f"{self.key}-{self.version}.json"

    def source_url(self, file: str, line: int | None = None) -> str:
        """The file (and line) on the release tag in the engine's repository."""
        url = f"{self.repo}/blob/{self.tag}/{self.repo_path}{file}"
        return f"{url}#L{line}" if line else url


_REQUIRED = ("key", "name", "version", "date", "source", "repo", "tag")
_OPTIONAL = ("via", "facts")


@functools.lru_cache(maxsize=4)
def _releases(path: Path, _mtime: float) -> dict[str, Release]:
    doc = read_yaml(path)
    name = display(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("releases"), list) or not doc["releases"]:
        raise CatalogError(f"{name}: top-level 'releases:' list is missing or empty")
    out: dict[str, Release] = {}
    for i, entry in enumerate(doc["releases"]):
        where = f"{name}: releases #{i}"
        if not isinstance(entry, dict):
            raise CatalogError(f"{where}: expected a mapping of fields")
        where = f"{name}: {entry.get('key', f'#{i}')}"
        for field in _REQUIRED:
            if entry.get(field) in (None, ""):
                raise CatalogError(f"{where}: {field}: required field is missing")
        unknown = set(entry) - set(_REQUIRED) - set(_OPTIONAL)
        if unknown:
            raise CatalogError(f"{where}: unknown field(s) {sorted(unknown)}; known: {list(_REQUIRED + _OPTIONAL)}")
        if not isinstance(entry["date"], _dt.date):
            raise CatalogError(f"{where}: date: expected YYYY-MM-DD, got {entry['date']!r}")
        for field in ("source", "repo"):
            if not str(entry[field]).startswith("https://"):
                raise CatalogError(f"{where}: {field}: expected an https:// address, got {entry[field]!r}")
        facts = entry.get("facts") or {}
        if facts and (not isinstance(facts, dict) or "package" not in facts):
            raise CatalogError(f"{where}: facts: expected {{package: NAME, repo_path: PATH}}")
        key = str(entry["key"])
        if key in out:
            raise CatalogError(f"{where}: key: duplicate key")
        out[key] = Release(key, str(entry["name"]), str(entry["version"]), entry["date"], entry["source"],
                           entry["repo"], str(entry["tag"]), entry.get("via"), facts.get("package"),
                           str(facts.get("repo_path") or ""))
    return out


def releases(path: Path = RELEASES_FILE) -> dict[str, Release]:
    """Every reference release, by key."""
    return _releases(path, path.stat().st_mtime if path.exists() else 0.0)


def release(key: str) -> Release:
    table = releases()
    if key not in table:
        raise ValueError(f"unknown engine or library {key!r}; known: {', '.join(sorted(table))} "
                         f"({display(RELEASES_FILE)})")
    return table[key]


class Facts:
    """One release's snapshot, with lookups that raise a ``ValueError`` naming what is missing."""

    def __init__(self, rel: Release, data: dict):
        self.release = rel
        self.data = data
        self._flag_alias: dict[str, str] = {}
        for name, defs in data["flags"].items():
            for d in defs:
                for alias in d.get("aliases", []):
                    self._flag_alias.setdefault(alias, name)
            if any(d.get("negatable") for d in defs):
                for form in _negations(name):
                    self._flag_alias.setdefault(form, name)
        self._main_options = sorted({o for n, defs in data["flags"].items()
                                     if any(d["command"] in MAIN_COMMANDS for d in defs)
                                     for o in [n, *(a for d in defs for a in d.get("aliases", []))]})

    # -- lookups -----------------------------------------------------------------------------------
    def flag(self, name: str, command: str | None = None) -> tuple[str, dict]:
        """(canonical name, definition) of a CLI flag; aliases, negated forms (``--no-x``, and
        ``--disable-x`` for ``--enable-x`` in vLLM) and underscores (``--max_model_len``, which both
        engines' parsers accept) resolve to the flag."""
        canon = self.flag_name(name)
        if canon is None:
            raise ValueError(f"{self.release.label} has no flag {name!r}{self._near(name, self.data['flags'])}")
        defs = self.data["flags"][canon]
        if command is not None:
            picked = [d for d in defs if d["command"] == command]
            if not picked:
                raise ValueError(f"{self.release.label}: flag {canon} is not a flag of {command!r}; it is one of "
                                 f"{sorted({d['command'] for d in defs})}")
            return canon, picked[0]
        main = [d for d in defs if d["command"] in MAIN_COMMANDS]
        return canon, (main or defs)[0]

    def flag_name(self, name: str, abbreviations: bool = False) -> str | None:
        """The canonical flag ``name`` stands for, or None. With ``abbreviations``, also a unique
        prefix of the server's options, which both engines' argparse parsers accept (``--tp`` for
        SGLang's ``--tp-size``)."""
        flags = self.data["flags"]
        cand = name.replace("_", "-") if name.startswith("--") else name
        for c in (name, cand):
            if c in flags:
                return c
            if c in self._flag_alias:
                return self._flag_alias[c]
        if abbreviations and cand.startswith("--") and len(cand) > 3:
            hits = {self._flag_alias.get(o, o) for o in self._main_options if o.startswith(cand)}
            if len(hits) == 1:
                return hits.pop()
        return None

    def has_flag_prefix(self, prefix: str) -> bool:
        """Whether some flag starts with ``prefix`` (a page's ``--speculative-accept-threshold-*``)."""
        return any(o.startswith(prefix) for o in self.data["flags"])

    def entry(self, kind: str, name: str) -> dict:
        table = self.data[kind]
        if name not in table:
            raise ValueError(f"{self.release.label} has no {kind.replace('_', ' ').rstrip('s')} {name!r}"
                             f"{self._near(name, table)}")
        return table[name]

    def env(self, name: str) -> dict:
        if name in self.data["env"]:
            return self.data["env"][name]
        if name in self.data["env_unregistered"]:
            return self.data["env_unregistered"][name]
        return self.entry("env", name)

    def has_env(self, name: str) -> bool:
        return name in self.data["env"] or name in self.data["env_unregistered"]

    def metric_name(self, name: str) -> str | None:
        """The metric a scraped series name belongs to (``_total``, ``_bucket``... stripped by type)."""
        metrics = self.data["metrics"]
        if name in metrics:
            return name
        for base, rec in metrics.items():
            for suffix in METRIC_SUFFIXES.get(rec.get("type") or "", ()):
                if name == base + suffix:
                    return base
        return None

    def metric(self, name: str) -> tuple[str, dict]:
        base = self.metric_name(name)
        if base is None:
            raise ValueError(f"{self.release.label} has no metric {name!r}{self._near(name, self.data['metrics'])}")
        return base, self.data["metrics"][base]

    def log_line(self, text: str) -> tuple[str, dict]:
        """The one log template that contains ``text`` (a fragment, as typed)."""
        hits = [t for t in self.data["log_lines"] if text in t]
        if not hits:
            raise ValueError(f"{self.release.label} logs no line containing {text!r} (INFO and above, in the "
                             "serving path)")
        exact = [t for t in hits if t == text]
        if len(hits) > 1 and not exact:
            shown = "; ".join(repr(h) for h in hits[:5])
            raise ValueError(f"{self.release.label}: {len(hits)} log lines contain {text!r}: {shown}"
                             f"{' ...' if len(hits) > 5 else ''}; quote more of the line")
        t = exact[0] if exact else hits[0]
        return t, self.data["log_lines"][t]

    def url(self, rec: dict) -> str:
        return self.release.source_url(rec["file"], rec.get("line"))

    @staticmethod
    def _near(name: str, table: dict) -> str:
        import difflib
        close = difflib.get_close_matches(name, list(table), n=3, cutoff=0.75)
        return f" (did you mean {', '.join(close)}?)" if close else ""


def _negations(flag: str) -> list[str]:
    """The negated spellings argparse accepts for a boolean flag: ``--no-x``, and in vLLM (whose parser
    registers its EnableDisableAction for BooleanOptionalAction, vllm/utils/argparse_utils.py) the
    ``--enable-``/``--disable-`` pair."""
    body = flag[2:]
    out = ["--no-" + body]
    for a, b in (("enable-", "disable-"), ("disable-", "enable-")):
        if body.startswith(a):
            out.append("--" + b + body[len(a):])
    return out


def load_snapshot(path: Path) -> dict:
    name = display(path)
    if not path.is_file():
        raise CatalogError(f"{name}: facts snapshot is missing; run ./scripts/extract-facts")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise CatalogError(f"{name}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if data.get("schema") != SNAPSHOT_SCHEMA:
        raise CatalogError(f"{name}: snapshot schema {data.get('schema')!r}, this code reads {SNAPSHOT_SCHEMA}; "
                           "run ./scripts/extract-facts")
    missing = [k for k in KINDS if not isinstance(data.get(k), dict)]
    if not isinstance(data.get("files"), list):
        missing.append("files")
    if missing:
        raise CatalogError(f"{name}: missing section(s) {missing}")
    return data


@functools.lru_cache(maxsize=8)
def _facts(key: str, version: str, _mtime: float) -> Facts:
    rel = release(key)
    data = load_snapshot(rel.snapshot)
    if data.get("engine") != key or data.get("version") != version:
        raise CatalogError(f"{display(rel.snapshot)}: holds {data.get('engine')} {data.get('version')}, "
                           f"expected {key} {version} ({display(RELEASES_FILE)})")
    return Facts(rel, data)


def facts(key: str) -> Facts:
    """The snapshot of ``key``'s reference release."""
    rel = release(key)
    if rel.package is None:
        raise ValueError(f"{rel.label}: no facts snapshot is kept for it (no `facts:` in "
                         f"{display(RELEASES_FILE)}); engines with facts: {', '.join(fact_engines())}")
    path = rel.snapshot
    return _facts(key, rel.version, path.stat().st_mtime if path.exists() else 0.0)


def fact_engines() -> list[str]:
    return [k for k, r in releases().items() if r.package]
