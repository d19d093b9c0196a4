"""Helpers shared by the test modules: strict builds of the real site or of small fixture sites, and the
browser launch settings. (A plain module rather than conftest.py, so that test modules can import it
without clashing with tests/livecoding/conftest.py.)"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Pinned so that two builds are byte-identical (the sitemap's lastmod would otherwise be today).
SOURCE_DATE_EPOCH = "1767225600"


# The builders the site is tested with: MkDocs, and ProperDocs (the maintained MkDocs 1.x fork, the fallback
# tests/test_builders.py keeps real). Each is run as ``python -m NAME``.
BUILDERS = ("mkdocs", "properdocs")


def build(site_root: Path, out: Path, *, offline: bool = False, site_url: str | None = None,
          extra_env: dict[str, str] | None = None, builder: str = "mkdocs") -> subprocess.CompletedProcess:
    """`mkdocs build --strict` (or ``builder``'s) of the site at ``site_root`` into ``out``; returns the
    finished process."""
    if builder not in BUILDERS:
        raise ValueError(f"unknown builder {builder!r}; expected one of {BUILDERS}")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true",
               SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH)
    if site_url:
        env["SITE_URL"] = site_url
    env.update(extra_env or {})
    config = "mkdocs-offline.yml" if offline else "mkdocs.yml"
    return subprocess.run(
        [sys.executable, "-m", builder, "build", "-f", config, "--strict", "--site-dir", str(out)],
        cwd=site_root, env=env, capture_output=True, text=True, timeout=600)


def online_url(base: str, src: str) -> str:
    """The served address of a docs source (``guide/x.md`` -> ``base/guide/x/``) or of a built file."""
    if src.endswith(".html"):
        return base + src
    if src == "index.md" or src.endswith("/index.md"):
        return base + src[: -len("index.md")]
    return base + src[:-3] + "/"


def page_html_path(site: Path, src: str, *, directory_urls: bool = True) -> Path:
    """Where MkDocs writes the page whose source is docs/``src``."""
    stem = src[:-3]
    if not directory_urls:
        return site / f"{stem}.html"
    if stem.endswith("index"):
        return site / f"{stem}.html"
    return site / stem / "index.html"


SKELETON = ["sitebuild", "macros", "overrides", "livecoding", "docs/assets"]

def make_fixture_site(dest: Path, pages: dict[str, str]) -> Path:
    """A small site for one bad-input case: the real site mechanics, macros and theme overrides, the real
    mkdocs.yml with its navigation cut down to the generated question navigation, one index page per
    part and section, and ``pages`` (docs-relative path -> text) as its only content pages."""
    from sitebuild import load_taxonomy
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SKELETON:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=ignore)
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "\nnav:\n" in config, "mkdocs.yml must end with its nav block"
    config = config[: config.index("\nnav:\n")] + "\nnav:\n  - Home: index.md\n  - QUESTIONS\n"
    (dest / "mkdocs.yml").write_text(config, encoding="utf-8")
    docs = dest / "docs"
    (docs / "index.md").write_text("# Fixture site\n", encoding="utf-8")
    parts, _, _ = load_taxonomy()
    for part in parts:
        (docs / part.dir).mkdir(parents=True, exist_ok=True)
        (docs / part.dir / "index.md").write_text(f"# {part.title}\n", encoding="utf-8")
        for sec in part.sections:
            (docs / sec.path).mkdir(parents=True, exist_ok=True)
            (docs / sec.path / "index.md").write_text(f"# {sec.title}\n", encoding="utf-8")
    for rel, text in pages.items():
        target = docs / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return dest


def browser_launch_args() -> dict:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's chromium "
                    "(scripts/test installs it); they never skip")
    return dict(executable_path=CHROMIUM, headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                      "--disable-component-update", "--disable-sync", "--no-first-run",
                      "--disable-quic", "--disable-dev-shm-usage"])


def first_question(registry):
    return registry.questions[min(registry.questions)]


def h1_text(pg) -> str:
    """The page heading as a reader sees it, without the permalink mark."""
    return pg.locator("article h1").first.inner_text().replace("\u00b6", "").strip()


# URL schemes a page may load from without leaving the site.
LOCAL_SCHEMES = ("data:", "blob:", "about:", "chrome-extension:")


def foreign_requests(requests: list[str], allowed: str) -> list[str]:
    """The requests that left the site: neither under ``allowed`` nor a local scheme."""
    return [u for u in requests if not (u.startswith(allowed) or u.startswith(LOCAL_SCHEMES))]


def recording_page(browser, scheme: str = "light"):
    """(context, page) in a fresh desktop-sized context; ``page.requests`` collects every request URL."""
    context = browser.new_context(color_scheme=scheme, viewport={"width": 1280, "height": 900})
    pg = context.new_page()
    pg.requests = []
    pg.on("request", lambda r: pg.requests.append(r.url))
    return context, pg
