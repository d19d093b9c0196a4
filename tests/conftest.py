"""Shared fixtures: one strict build of the real site per test session (online and offline), a static
server on 127.0.0.1, and a helper that builds small fixture sites for the bad-input cases."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Pinned so that two builds are byte-identical (the sitemap's lastmod would otherwise be today).
SOURCE_DATE_EPOCH = "1767225600"


def build(site_root: Path, out: Path, *, offline: bool = False,
          site_url: str | None = None) -> subprocess.CompletedProcess:
    """`mkdocs build --strict` of the site at ``site_root`` into ``out``; returns the finished process."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true",
               SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH)
    if site_url:
        env["SITE_URL"] = site_url
    env.pop("OFFLINE", None)
    if offline:
        env["OFFLINE"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=site_root, env=env, capture_output=True, text=True, timeout=600)


def _checked_build(tmp_path_factory, name: str, offline: bool, site_url: str) -> Path:
    out = tmp_path_factory.mktemp(name) / "site"
    proc = build(ROOT, out, offline=offline, site_url=site_url)
    assert proc.returncode == 0, f"strict build failed:\n{proc.stdout}\n{proc.stderr}"
    return out


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep pytest output clean
        pass


@pytest.fixture(scope="session")
def http_server():
    """A static server bound to a free port on 127.0.0.1 before the build, so the build's site_url
    (canonical URLs, short links, "copy link") is the address the browser tests really use."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _QuietHandler)
    server.base_url = f"http://127.0.0.1:{server.server_address[1]}/"
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, http_server) -> Path:
    return _checked_build(tmp_path_factory, "online", False, http_server.base_url)


@pytest.fixture(scope="session")
def offline_site(tmp_path_factory, http_server) -> Path:
    return _checked_build(tmp_path_factory, "offline", True, http_server.base_url)


@pytest.fixture(scope="session")
def registry():
    from macros.site import load_site
    return load_site(ROOT / "docs")


def page_html_path(site: Path, src: str, *, directory_urls: bool = True) -> Path:
    """Where MkDocs writes the page whose source is docs/``src``."""
    stem = src[:-3]
    if not directory_urls:
        return site / f"{stem}.html"
    if stem.endswith("index"):
        return site / f"{stem}.html"
    return site / stem / "index.html"


@pytest.fixture(scope="session")
def served_site(built_site, http_server):
    """The online build served over HTTP on 127.0.0.1; yields the base URL (the build's site_url)."""
    http_server.RequestHandlerClass = functools.partial(_QuietHandler, directory=str(built_site))
    threading.Thread(target=http_server.serve_forever, daemon=True).start()
    return http_server.base_url


SKELETON = ["hooks", "macros", "overrides", "livecoding", "docs/assets"]


def make_fixture_site(dest: Path, pages: dict[str, str]) -> Path:
    """A small site for one bad-input case: the real hooks, macros and theme overrides, the real
    mkdocs.yml with its navigation cut down to the generated question navigation, one index page per
    part and section, and ``pages`` (docs-relative path -> text) as its only content pages."""
    from macros.site import load_taxonomy
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


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(**browser_launch_args())
        yield b
        b.close()
