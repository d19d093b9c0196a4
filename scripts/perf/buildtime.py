"""Build timing: the real site against plain Material, and the per-page cost as the site grows.

Every build is a separate ``mkdocs build`` process, timed by the wall clock from start to exit
(Python start-up and imports included, as a contributor or CI experiences it).
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SOURCE_DATE_EPOCH = "1767225600"
NAV_PLACEHOLDER = "QUESTIONS"
# What a scaled copy of the site needs besides docs/ and mkdocs.yml (snippets read livecoding/).
SKELETON = ["sitebuild", "macros", "overrides", "livecoding"]


@dataclass
class BuildRun:
    seconds: float          # wall clock of the whole process
    reported: float | None  # MkDocs' own "Documentation built in N seconds" (wall clock too)
    cpu: float              # user + system CPU seconds of the process: steadier on a busy machine
    ok: bool
    output: str


def _env(extra: dict | None = None) -> dict:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true",
               SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH)
    env.update(extra or {})
    return env


def run_build(config: Path, site_dir: Path, *, strict: bool = True, cwd: Path = ROOT,
              env: dict | None = None, prefix: list[str] | None = None) -> BuildRun:
    cmd = list(prefix or []) + [sys.executable, "-m", "mkdocs", "build", "-f", str(config),
                                "--site-dir", str(site_dir)]
    if strict:
        cmd.append("--strict")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=_env(env), capture_output=True, text=True, timeout=1800)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = proc.stdout + proc.stderr
    m = re.search(r"Documentation built in ([0-9.]+) seconds", out)
    return BuildRun(seconds, float(m.group(1)) if m else None, cpu, proc.returncode == 0, out)


class _EnvLoader(yaml.SafeLoader):
    """Reads mkdocs.yml: ``!ENV [NAME, default]`` becomes the variable's value or the default, and
    ``!!python/name:x.y`` a :class:`PyName` that is written back as the same tag."""


class PyName(str):
    """A ``!!python/name:`` reference from mkdocs.yml, kept as text."""


class _Dumper(yaml.SafeDumper):
    pass


_EnvLoader.add_multi_constructor("tag:yaml.org,2002:python/name:", lambda loader, suffix, node: PyName(suffix))
_Dumper.add_representer(PyName, lambda dumper, v: dumper.represent_scalar(f"tag:yaml.org,2002:python/name:{v}", ""))


def _env_tag(loader, node):
    if isinstance(node, yaml.ScalarNode):
        names, default = [loader.construct_scalar(node)], None
    else:
        items = loader.construct_sequence(node)
        names, default = items[:-1] if len(items) > 1 else items, items[-1] if len(items) > 1 else None
    for name in names:
        if name in os.environ:
            return yaml.safe_load(os.environ[name])
    return default


_EnvLoader.add_constructor("!ENV", _env_tag)


def load_config(path: Path | None = None) -> dict:
    path = path or ROOT / "mkdocs.yml"
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_EnvLoader)  # noqa: S506 (safe loader subclass)


def question_nav(config: dict, docs_dir: Path) -> list:
    """The navigation the site hook would generate, written out in full (for a build without the hook)."""
    from sitebuild import build_nav, load_site
    nav = list(config["nav"])
    i = nav.index(NAV_PLACEHOLDER)
    return build_nav(load_site(docs_dir), nav[:i], nav[i + 1:])


def _plain_theme(dest: Path) -> Path:
    """A theme folder with nothing of the site's in it: each page template the site's pages name in
    their front matter (``template: practice.html``) only extends Material's own ``main.html``."""
    theme = dest / "plain-theme"
    theme.mkdir(parents=True, exist_ok=True)
    for template in sorted((ROOT / "overrides").glob("*.html")):
        if template.name not in ("main.html", "404.html"):
            (theme / template.name).write_text('{% extends "main.html" %}\n', encoding="utf-8")
    return theme


def _plain(config: dict, docs: Path, dest: Path) -> dict:
    """``config`` as plain Material: no macros plugin, no hooks, no theme overrides (page templates
    become bare extensions of Material's own); the same Markdown extensions, search and tags plugins,
    CSS/JS and the same (written-out) navigation."""
    config = dict(config)
    config["nav"] = question_nav(config, ROOT / config.get("docs_dir", "docs"))
    config["docs_dir"] = str(docs)
    config.pop("hooks", None)
    config["theme"] = dict({k: v for k, v in config["theme"].items() if k != "custom_dir"},
                           custom_dir=str(_plain_theme(dest)))
    config["plugins"] = {k: v for k, v in config["plugins"].items() if k not in ("macros", "offline")}
    # Built without --strict: without the macros, raw pages show their macro calls as text and miss
    # the links those would render. The work done is the same either way.
    config["strict"] = False
    return config


def _write(config: dict, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.dump(config, Dumper=_Dumper, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def write_plain_config(dest: Path) -> Path:
    """Plain Material over the raw sources: macro calls stay as text, no generated sections."""
    config = load_config()
    return _write(_plain(config, ROOT / config.get("docs_dir", "docs"), dest), dest / "mkdocs-plain-raw.yml")


DUMP_HOOK = r"""
import os
from pathlib import Path
import yaml
OUT = Path(os.environ["MSIB_DUMP_DIR"])

def on_page_markdown(markdown, page, config, files):
    target = OUT / page.file.src_uri
    target.parent.mkdir(parents=True, exist_ok=True)
    meta = yaml.safe_dump(dict(page.meta), sort_keys=False, allow_unicode=True) if page.meta else ""
    target.write_text(("---\n" + meta + "---\n\n" if meta else "") + markdown, encoding="utf-8")
    return markdown
"""


def write_expanded_plain_config(dest: Path) -> Path:
    """Plain Material over the Markdown that the macros and hooks produce (so the pages are the same).

    One untimed build of the real site, with one more hook listed last, writes every page's final
    Markdown (front matter included) into a copy of docs/; the returned config builds that copy."""
    config = load_config()
    docs = ROOT / config.get("docs_dir", "docs")
    expanded = dest / "docs-expanded"
    if expanded.exists():
        shutil.rmtree(expanded)
    shutil.copytree(docs, expanded)
    hook = dest / "dump_markdown.py"
    hook.write_text(DUMP_HOOK, encoding="utf-8")
    dumping = dict(config, docs_dir=str(docs),
                   hooks=[str(ROOT / h) for h in config.get("hooks", [])] + [str(hook)])
    dumping["theme"] = dict(config["theme"], custom_dir=str(ROOT / config["theme"]["custom_dir"]))
    # the macros module is found relative to the config file: make it absolute
    macros = dict(config["plugins"]["macros"] or {})
    macros["module_name"] = str(ROOT / macros.get("module_name", "main"))
    dumping["plugins"] = dict(config["plugins"], macros=macros)
    run = run_build(_write(dumping, dest / "mkdocs-dump.yml"), dest / "site-dump",
                    env={"MSIB_DUMP_DIR": str(expanded), "PYTHONPATH": str(ROOT)})
    if not run.ok:
        raise RuntimeError("build that writes the expanded Markdown failed:\n" + run.output[-3000:])
    return _write(_plain(config, expanded, dest), dest / "mkdocs-plain-expanded.yml")


# --- synthetic copies ------------------------------------------------------------------------------

_ID_LINE = re.compile(r"^id:[ \t]*(\d+)[ \t]*$", re.M)


def scaled_site(dest: Path, multiplier: int, *, prune: bool = True) -> tuple[Path, int, int]:
    """A copy of the site at ``dest`` where every question page exists ``multiplier`` times (copies in the
    same section, id + k*100000, file name suffix -xk). Returns (mkdocs.yml path, pages, questions)."""
    from sitebuild import load_site
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SKELETON + ["docs"]:
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    if not prune:
        text, n = re.subn(r"^\s*- navigation\.prune\s*\n", "", text, flags=re.M)
        assert n == 1, "mkdocs.yml: navigation.prune not found"
    config = dest / "mkdocs.yml"
    config.write_text(text, encoding="utf-8")
    site = load_site(dest / "docs")
    for q in site.questions.values():
        src = dest / "docs" / q.src
        original = src.read_text(encoding="utf-8")
        for k in range(1, multiplier):
            copy, n = _ID_LINE.subn(f"id: {q.id + k * 100000}", original, count=1)
            assert n == 1, f"{q.src}: no 'id:' line in the front matter"
            src.with_name(f"{src.stem}-x{k}.md").write_text(copy, encoding="utf-8")
    pages = sum(1 for _ in (dest / "docs").rglob("*.md"))
    return config, pages, len(site.questions) * multiplier


def median(values: list[float]) -> float:
    s = sorted(values)
    n = len(s)
    return s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
