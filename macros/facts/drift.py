"""Drift between a reference release's facts and a newer release's, with the pages that use each
changed fact, and the weekly report the workflow files as one GitHub issue."""

from __future__ import annotations

import json
import re
import urllib.request
from dataclasses import dataclass
from pathlib import Path

# What a fact is, for comparison: where it is written (file, line) moves every release and is not drift.
_IGNORED = {"file", "line", "registered"}
_SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
_STABLE = re.compile(r"^\d+(\.\d+)*(\.post\d+)?$")


@dataclass(frozen=True)
class Change:
    kind: str          # a snapshot section: flags, env, metrics, ...
    name: str
    what: str          # added, removed, changed
    before: object = None
    after: object = None


def _essence(kind: str, value):
    if kind == "flags":
        main = [d for d in value if d.get("command") in ("serve", "launch_server")] or value
        value = main[0]
    if isinstance(value, dict):
        return {k: v for k, v in value.items()
                if k not in _IGNORED and not (kind == "metrics" and k == "documentation")}
    return value


def compare(old: dict, new: dict) -> list[Change]:
    """Every fact added, removed or changed from ``old`` to ``new`` (two snapshots of one engine)."""
    out: list[Change] = []
    for kind in ("flags", "config", "env", "env_unregistered", "attention_backends", "quantization_methods",
                 "metrics", "log_lines"):
        a, b = old.get(kind, {}), new.get(kind, {})
        for name in sorted(set(a) | set(b)):
            if name not in b:
                out.append(Change(kind, name, "removed", _essence(kind, a[name]), None))
            elif name not in a:
                out.append(Change(kind, name, "added", None, _essence(kind, b[name])))
            else:
                ea, eb = _essence(kind, a[name]), _essence(kind, b[name])
                if ea != eb:
                    diff_a = {k: v for k, v in ea.items() if eb.get(k) != v} if isinstance(ea, dict) else ea
                    diff_b = {k: v for k, v in eb.items() if ea.get(k) != v} if isinstance(eb, dict) else eb
                    out.append(Change(kind, name, "changed", diff_a, diff_b))
    ta = [_essence("batch_defaults", t) for t in old.get("batch_defaults", [])]
    tb = [_essence("batch_defaults", t) for t in new.get("batch_defaults", [])]
    if ta != tb:
        out.append(Change("batch_defaults", "get_batch_defaults", "changed", ta, tb))
    return out


# --- where pages use a fact ---------------------------------------------------------------------------

_MACRO_CALL = re.compile(r"""\b(flag|flag_default|env_var|metric|config_default|log_line|attn_backend|quant_method"""
                         r"""|gone)"""
                         r"""\(\s*["']([\w.-]+)["']\s*,\s*["']([^"']+)["']""")
_CODE = re.compile(r"`([^`\n]+)`")
_TOKEN = re.compile(r"--[a-z][a-z0-9-]+|\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b|\b[a-z]+:[a-z_][a-z0-9_]+")


def usage(docs_dir: Path) -> dict[str, set[str]]:
    """Names (flags, environment variables, metric names, config keys, log fragments) to the pages
    that name them, in a facts macro or in a code span."""
    out: dict[str, set[str]] = {}
    for path in sorted(docs_dir.rglob("*.md")):
        rel = path.relative_to(docs_dir.parent).as_posix()
        text = path.read_text(encoding="utf-8")
        for m in _MACRO_CALL.finditer(text):
            out.setdefault(m.group(3), set()).add(rel)
        for m in _CODE.finditer(text):
            for tok in _TOKEN.findall(m.group(1)):
                out.setdefault(tok, set()).add(rel)
    return out


def _pages_for(change: Change, used: dict[str, set[str]]) -> list[str]:
    names = {change.name}
    if change.kind == "config":
        names.add(change.name.split(".")[-1])
    if change.kind == "log_lines":
        return sorted({p for frag, pages in used.items() if frag in change.name and len(frag) >= 12 for p in pages})
    return sorted({p for n in names for p in used.get(n, ())})


def report(engine_label: str, new_label: str, changes: list[Change], used: dict[str, set[str]]) -> str:
    """Markdown: every change, grouped by kind, each with the pages that use it (pages first)."""
    if not changes:
        return f"No fact changed between {engine_label} and {new_label}.\n"
    lines = [f"## {engine_label} → {new_label}", "",
             f"{len(changes)} facts changed; "
             f"{sum(1 for c in changes if _pages_for(c, used))} of them are used on pages.", ""]
    order = sorted(changes, key=lambda c: (not _pages_for(c, used), c.kind, c.name))
    current = None
    log_unused = 0
    for c in order:
        pages = _pages_for(c, used)
        if c.kind == "log_lines" and not pages:
            log_unused += 1
            continue
        if c.kind != current:
            lines += ["", f"### {c.kind.replace('_', ' ')}", ""]
            current = c.kind
        detail = {"added": f"added: `{_short(c.after)}`", "removed": f"removed (was `{_short(c.before)}`)",
                  "changed": f"`{_short(c.before)}` → `{_short(c.after)}`"}[c.what]
        where = f" — used on {', '.join(pages)}" if pages else ""
        lines.append(f"- `{c.name}`: {detail}{where}")
    if log_unused:
        lines += ["", f"{log_unused} log-line templates added or removed that no page quotes."]
    return "\n".join(lines).strip() + "\n"


def _short(value, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=False) if not isinstance(value, str) else value
    text = text.replace("`", "'")
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- the package index and the issue ---------------------------------------------------------------

def newest_version(package: str, index: str = "https://pypi.org/simple") -> str:
    """The newest stable version of ``package`` on a PEP 691 JSON simple index."""
    req = urllib.request.Request(f"{index.rstrip('/')}/{package}/", headers={"Accept": _SIMPLE_JSON})
    with urllib.request.urlopen(req, timeout=60) as resp:
        data = json.load(resp)
    versions = [v for v in data.get("versions", []) if _STABLE.match(v)]
    if not versions:
        raise ValueError(f"{index}: no stable version of {package} listed")
    return max(versions, key=_version_key)


def _version_key(v: str) -> tuple:
    base, _, post = v.partition(".post")
    return tuple(int(x) for x in base.split(".")) + (int(post or -1),)


ISSUE_TITLE = "Engine facts drift: newer releases than the reference"
ISSUE_MARKER = "<!-- facts-drift -->"


def _api(method: str, url: str, token: str, body: dict | None = None):
    req = urllib.request.Request(url, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.github+json",
                                          "Content-Type": "application/json", "User-Agent": "msib-facts-drift"})
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)


def file_issue(body: str, repo: str, token: str, api: str = "https://api.github.com") -> tuple[str, int]:
    """Open the drift issue, or update the open one (found by its marker); ('opened'|'updated', number)."""
    base = f"{api.rstrip('/')}/repos/{repo}"
    page = 1
    while True:
        issues = _api("GET", f"{base}/issues?state=open&per_page=100&page={page}", token)
        for issue in issues:
            if "pull_request" not in issue and ISSUE_MARKER in (issue.get("body") or ""):
                _api("PATCH", f"{base}/issues/{issue['number']}", token, {"body": f"{ISSUE_MARKER}\n{body}"})
                return "updated", issue["number"]
        if len(issues) < 100:
            break
        page += 1
    made = _api("POST", f"{base}/issues", token, {"title": ISSUE_TITLE, "body": f"{ISSUE_MARKER}\n{body}"})
    return "opened", made["number"]
