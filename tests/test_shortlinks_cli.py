"""The short-link pages written without MkDocs (``python -m sitebuild.shortlinks``), for a builder that
runs no hooks: the same files, byte for byte, as the build's own, online and offline; the page-URL rule
they rest on; and a clear error for a site that was not built."""

from __future__ import annotations

import subprocess
import sys

import pytest

from sitebuild.shortlinks import SHORT_LINK_DIR, page_url
from sitekit import ROOT


@pytest.mark.parametrize("src, directory_urls, expected", [
    ("index.md", True, ""),
    ("deployment/index.md", True, "deployment/"),
    ("deployment/mlops/ab-testing.md", True, "deployment/mlops/ab-testing/"),
    ("index.md", False, "index.html"),
    ("deployment/index.md", False, "deployment/index.html"),
    ("deployment/mlops/ab-testing.md", False, "deployment/mlops/ab-testing.html"),
    ("reindex.md", True, "reindex/"),
])
def test_page_url_follows_mkdocs_rules(src, directory_urls, expected):
    assert page_url(src, directory_urls) == expected


def test_page_url_refuses_what_is_not_a_page():
    with pytest.raises(ValueError, match="guide.txt: not a Markdown page"):
        page_url("guide.txt")


def _short_links(site):
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in (site / SHORT_LINK_DIR).rglob("*.html")}


@pytest.mark.parametrize("which, flags", [("built_site", []), ("offline_site", ["--file-urls"])])
def test_the_script_writes_what_the_build_wrote(which, flags, request, http_server, registry, tmp_path):
    built = request.getfixturevalue(which)
    proc = subprocess.run([sys.executable, "-m", "sitebuild.shortlinks", str(tmp_path), "--site-url",
                           http_server.base_url, *flags], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ours, theirs = _short_links(tmp_path), _short_links(built)
    assert len(theirs) == 2 * len(registry.questions)
    assert sorted(ours) == sorted(theirs)
    different = [name for name in ours if ours[name] != theirs[name]]
    assert not different, f"short-link pages differ from the build's: {different[:5]}"


def test_a_missing_site_directory_is_named(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "sitebuild.shortlinks", str(tmp_path / "nowhere")],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "nowhere: no such directory (build the site first)" in proc.stderr
