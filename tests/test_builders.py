"""Two builders: the site built with ProperDocs (the maintained MkDocs 1.x fork) is the site built with
MkDocs, file for file and byte for byte once each page's generator tag is set aside, so the fallback for
MkDocs stays real (issue 44). The MkDocs side is the suite's own strict build (the ``built_site``
fixture); both builds pin SOURCE_DATE_EPOCH (tests/sitekit.py) and use the same site_url."""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path

import pytest

from sitekit import ROOT, build

# <meta name="generator" content="mkdocs-1.6.1, mkdocs-material-9.8.2">: the one place the builders may differ.
GENERATOR = re.compile(rb'<meta name="generator" content="([^"]*)">')
# How many differing files a failure names, and how many bytes of context it shows around the first
# difference of the first of them.
NAMED, CONTEXT = 10, 160


def _files(site: Path) -> set[str]:
    return {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}


def _without_generator(data: bytes) -> bytes:
    return GENERATOR.sub(b'<meta name="generator">', data)


def _excerpt(a: bytes, b: bytes, name: str) -> str:
    """Where two versions of one file first part, with some context from each: pages are folded onto few
    long lines, so a window around the first differing byte says more than a line diff would."""
    if b"\0" in a or b"\0" in b:
        return f"{name}: binary files differ ({len(a)} against {len(b)} bytes)"
    at = len(os.path.commonprefix([a, b]))
    line = a.count(b"\n", 0, at) + 1
    start = max(0, at - CONTEXT)

    def window(data: bytes) -> str:
        text = data[start:at + CONTEXT].decode("utf-8", "replace").replace("\n", "\\n")
        return ("..." if start else "") + text + ("..." if at + CONTEXT < len(data) else "")

    return (f"{name}: first difference at byte {at} (line {line}):\n"
            f"  mkdocs: {window(a)}\n  other:  {window(b)}")


def site_differences(first: Path, second: Path) -> str:
    """Empty when the two built sites have the same files with the same bytes outside the generator tag;
    otherwise a report: files only in one, the first differing files by name, and a diff excerpt of
    the first of them."""
    a, b = _files(first), _files(second)
    report = []
    if a - b:
        report.append(f"only in the first build ({len(a - b)}): {sorted(a - b)[:NAMED]}")
    if b - a:
        report.append(f"only in the second build ({len(b - a)}): {sorted(b - a)[:NAMED]}")
    differing = []
    for name in sorted(a & b):
        x, y = (first / name).read_bytes(), (second / name).read_bytes()
        if x != y and _without_generator(x) != _without_generator(y):
            differing.append((name, x, y))
    if differing:
        names = [name for name, _, _ in differing]
        report.append(f"{len(differing)} files differ beyond the generator tag, first: {names[:NAMED]}")
        report.append(_excerpt(_without_generator(differing[0][1]), _without_generator(differing[0][2]),
                               differing[0][0]))
    return "\n".join(report)


def _generator(site: Path) -> str:
    found = GENERATOR.search((site / "index.html").read_bytes())
    assert found, f"{site}/index.html has no generator tag"
    return found.group(1).decode()


@pytest.fixture(scope="module")
def properdocs_site(tmp_path_factory, http_server) -> Path:
    if importlib.util.find_spec("properdocs") is None:
        pytest.fail("ProperDocs is not installed: it is in the test lock (requirements/test.txt); "
                    "./scripts/test installs it")
    out = tmp_path_factory.mktemp("properdocs") / "site"
    proc = build(ROOT, out, site_url=http_server.base_url, builder="properdocs")
    assert proc.returncode == 0, f"strict ProperDocs build failed:\n{proc.stdout}\n{proc.stderr}"
    return out


def test_properdocs_builds_the_site_mkdocs_builds(built_site, properdocs_site):
    # Each build really came from its own builder (so this cannot pass by building with MkDocs twice).
    assert _generator(built_site).startswith("mkdocs-1."), _generator(built_site)
    assert "ProperDocs" in _generator(properdocs_site), _generator(properdocs_site)
    differences = site_differences(built_site, properdocs_site)
    assert not differences, "ProperDocs and MkDocs built different sites:\n" + differences


# The comparison itself, on small trees: it passes only what it should.

def _tree(root: Path, files: dict[str, bytes]) -> Path:
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


PAGE = (b'<html><head>\n<meta name="generator" content="%s">\n<title>T</title></head>\n'
        b'<body>\n<p>one</p>\n<p>two</p>\n</body></html>\n')


def test_a_different_generator_tag_is_not_a_difference(tmp_path):
    a = _tree(tmp_path / "a", {"index.html": PAGE % b"mkdocs-1.6.1, mkdocs-material-9.8.2", "s.js": b"x"})
    b = _tree(tmp_path / "b", {"index.html": PAGE % b"mkdocs-ProperDocs 1.6.7, mkdocs-material-9.8.2",
                               "s.js": b"x"})
    assert site_differences(a, b) == ""


def test_a_changed_page_is_named_with_a_diff_excerpt(tmp_path):
    a = _tree(tmp_path / "a", {"index.html": PAGE % b"g1", "q/x/index.html": b"<p>same</p>\n",
                               "sitemap.xml": b"<lastmod>2026-01-01</lastmod>\n"})
    b = _tree(tmp_path / "b", {"index.html": PAGE.replace(b"two", b"TWO") % b"g2",
                               "q/x/index.html": b"<p>same</p>\n",
                               "sitemap.xml": b"<lastmod>2026-12-02</lastmod>\n"})
    report = site_differences(a, b)
    assert "2 files differ beyond the generator tag, first: ['index.html', 'sitemap.xml']" in report
    assert "index.html: first difference at byte 82 (line 6):" in report
    assert "mkdocs: <html>" in report and "<p>one</p>\\n<p>two</p>" in report
    assert "other:  <html>" in report and "<p>one</p>\\n<p>TWO</p>" in report
    assert "q/x/index.html" not in report


def test_files_only_in_one_build_are_named(tmp_path):
    a = _tree(tmp_path / "a", {"index.html": b"x", "404.html": b"y"})
    b = _tree(tmp_path / "b", {"index.html": b"x", "extra/page.html": b"z"})
    report = site_differences(a, b)
    assert "only in the first build (1): ['404.html']" in report
    assert "only in the second build (1): ['extra/page.html']" in report


def test_the_excerpt_of_a_long_folded_page_is_a_window_around_the_first_difference(tmp_path):
    a = _tree(tmp_path / "a", {"page.html": b"<p>" + b"a" * 5000 + b"old" + b"z" * 5000 + b"</p>"})
    b = _tree(tmp_path / "b", {"page.html": b"<p>" + b"a" * 5000 + b"new" + b"z" * 5000 + b"</p>"})
    report = site_differences(a, b)
    assert "page.html: first difference at byte 5003 (line 1):" in report
    assert "...%sold%s..." % ("a" * CONTEXT, "z" * (CONTEXT - 3)) in report
    assert "...%snew%s..." % ("a" * CONTEXT, "z" * (CONTEXT - 3)) in report
    assert len(report) < 4 * CONTEXT + 300


def test_macros_read_the_page_under_either_builders_page_object():
    """mkdocs-macros hands macros MkDocs' page (``file.src_uri``); Zensical's macros a page with ``path``
    and no ``file`` (zensical/extensions/context.py, 0.0.73 to 0.1.3)."""
    from types import SimpleNamespace

    from macros import page_src
    assert page_src(SimpleNamespace(file=SimpleNamespace(src_uri="a/b.md"), url="a/b/")) == "a/b.md"
    assert page_src(SimpleNamespace(path="c/d.md", url="c/d/", meta={})) == "c/d.md"
