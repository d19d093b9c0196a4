"""Shared fixtures: one strict build of the real site per test session (online and offline), a static
server on 127.0.0.1, and a helper that builds small fixture sites for the bad-input cases."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

from sitekit import ROOT, browser_launch_args, build, recording_page


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
    server.serving = None
    yield server
    if server.serving is not None:  # shutdown() waits for serve_forever(), so only call it if it runs
        server.shutdown()
        server.serving.join(timeout=10)
    server.server_close()


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, http_server) -> Path:
    return _checked_build(tmp_path_factory, "online", False, http_server.base_url)


@pytest.fixture(scope="session")
def offline_site(tmp_path_factory, http_server) -> Path:
    return _checked_build(tmp_path_factory, "offline", True, http_server.base_url)


@pytest.fixture(scope="session")
def registry():
    from sitebuild import load_site
    return load_site(ROOT / "docs")


@pytest.fixture(scope="session")
def served_site(built_site, http_server):
    """The online build served over HTTP on 127.0.0.1; yields the base URL (the build's site_url)."""
    http_server.RequestHandlerClass = functools.partial(_QuietHandler, directory=str(built_site))
    http_server.serving = threading.Thread(target=http_server.serve_forever, daemon=True)
    http_server.serving.start()
    return http_server.base_url


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(**browser_launch_args())
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser page (light scheme, desktop viewport) that records every request it makes."""
    context, pg = recording_page(browser)
    yield pg
    context.close()
