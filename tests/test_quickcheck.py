"""scripts/quickcheck.py, what ``./scripts/test --quick`` runs: which files count as changed since the
last commit, which of them are pages, which are site-wide, and that the quick set names real tests."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from scripts import quickcheck as Q
from sitekit import ROOT


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@example.org", "HOME": str(repo), "PATH": "/usr/bin:/bin"})


def _write(repo: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path):
    _git(tmp_path, "init", "-q", "-b", "main")
    _write(tmp_path, {"docs/a.md": "a\n", "docs/b.md": "b\n", "docs/gone.md": "g\n", "docs/staged.md": "s\n",
                      "docs/assets/x.md": "x\n", "macros/m.py": "m = 1\n", ".gitignore": "/site/\n"})
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "first")
    return tmp_path


def test_a_clean_checkout_has_no_changed_file(repo):
    assert Q.changed_files(repo) == []


def test_edits_staged_or_not_deletions_and_untracked_files_count(repo):
    _write(repo, {"docs/a.md": "a, edited\n", "docs/staged.md": "s, edited\n", "docs/new/c.md": "c\n",
                  "site/index.md": "built output, ignored\n", "macros/m.py": "m = 2\n"})
    _git(repo, "add", "docs/staged.md")
    (repo / "docs/gone.md").unlink()
    files = Q.changed_files(repo)
    assert files == ["docs/a.md", "docs/gone.md", "docs/new/c.md", "docs/staged.md", "macros/m.py"]
    # A deleted page has nothing to open; assets are not pages.
    assert Q.changed_pages(files, repo) == ["a.md", "new/c.md", "staged.md"]
    assert Q.site_wide(files) == ["macros/m.py"]


def test_a_committed_change_is_no_longer_changed(repo):
    _write(repo, {"docs/b.md": "b, edited\n"})
    _git(repo, "commit", "-q", "-am", "second")
    assert Q.changed_files(repo) == []


def test_outside_a_git_checkout_the_error_says_so(tmp_path):
    with pytest.raises(Q.NotAGitCheckout, match="git diff"):
        Q.changed_files(tmp_path)


def test_site_wide_inputs_are_named():
    files = ["mkdocs.yml", "overrides/main.html", "docs/assets/stylesheets/site.css", "sitebuild/hooks.py",
             "docs/x.md", "tests/test_x.py", "README.md"]
    assert Q.site_wide(files) == files[:4]


def test_the_quick_set_names_existing_tests_and_covers_its_parts():
    targets = Q.quick_targets()
    files = {t.partition("::")[0] for t in targets}
    for f in files:
        assert (ROOT / f).is_file(), f
    assert "tests/test_formulas_memory.py" in files and "tests/test_catalog.py" in files
    assert "tests/test_facts_check.py" in files and "tests/test_changed_pages.py" in files
    # Single tests are named by their function: each one exists in its file.
    for t in targets:
        file, _, name = t.partition("::")
        if name:
            assert f"def {name}(" in (ROOT / file).read_text(encoding="utf-8"), t
    # The quick set leaves out what needs a second build or a fixture site per case.
    assert not files & {"tests/test_bad_input.py", "tests/test_builders.py", "tests/test_accessibility.py"}


def test_a_quick_entry_that_matches_nothing_is_an_error(monkeypatch):
    monkeypatch.setitem(Q.QUICK, "formulas", ["test_formulas_renamed_*.py"])
    with pytest.raises(FileNotFoundError, match=r"QUICK\['formulas'\] names tests/test_formulas_renamed_\*.py"):
        Q.quick_targets()
