"""``./scripts/test --quick``: the check a writer runs after editing a page, in about a minute.

It runs the formulas, the catalog, the macros, the facts check, one strict build of the site (the page
contract, the typed-number check and the facts check run inside it, on every page) with the contract
tests on its output, and the browser checks only for the pages changed since the last commit
(``git diff HEAD`` plus untracked files; tests/test_changed_pages.py). The whole suite,
``./scripts/test``, stays what CI runs.

Run as ``python -m scripts.quickcheck [pytest arguments]``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What the quick check runs, by what it checks. Files are globs under tests/; a "::" entry is one test.
# The strict build runs the page contract, the rendered-structure check, the typed-number check and the
# facts check on every page (sitebuild/hooks.py); test_site.py's other whole-site readings (key points,
# related questions, unrendered template text) parse every page again, 10 s or more each, and stay in
# the whole suite.
QUICK = {
    "formulas": ["test_formulas_*.py", "test_diagram_formulas.py"],
    "catalog": ["test_catalog.py"],
    "macros": ["test_render.py", "test_render_registry.py"],
    "facts check": ["test_facts.py", "test_facts_check.py", "test_typed_numbers.py"],
    "page contract (one strict build)": [
        "test_site.py::test_strict_build_produces_home_and_every_question",
        "test_site.py::test_question_pages_honour_the_contract",
        "test_questionmd.py",
    ],
    "browser checks of the changed pages": ["test_changed_pages.py"],
}

# Inputs every page is built from: a change here can move any page, which only the whole suite checks.
SITE_WIDE = ("mkdocs.yml", "mkdocs-offline.yml", "overrides/", "docs/assets/", "sitebuild/", "macros/")


class NotAGitCheckout(RuntimeError):
    pass


def _git(root: Path, *args: str) -> list[str]:
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        raise NotAGitCheckout(f"git {' '.join(args)} failed in {root}: {proc.stderr.strip()}")
    return [name for name in proc.stdout.split("\0") if name]


def changed_files(root: Path = ROOT) -> list[str]:
    """Files changed since the last commit: modified, added, deleted or renamed against HEAD (staged or
    not), and untracked files that .gitignore does not exclude; repository-relative, sorted."""
    tracked = _git(root, "diff", "--name-only", "-z", "HEAD", "--")
    untracked = _git(root, "ls-files", "--others", "--exclude-standard", "-z")
    return sorted(set(tracked) | set(untracked))


def changed_pages(files: list[str], root: Path = ROOT) -> list[str]:
    """The pages among ``files``: Markdown under docs/ outside docs/assets/ that still exists,
    docs-relative (``deployment/x/y.md``)."""
    return [f[len("docs/"):] for f in files
            if f.startswith("docs/") and f.endswith(".md") and not f.startswith("docs/assets/")
            and (root / f).is_file()]


def site_wide(files: list[str]) -> list[str]:
    """The changed files that every page is built from."""
    return [f for f in files if f.startswith(SITE_WIDE)]


def quick_targets(root: Path = ROOT) -> list[str]:
    """The pytest arguments for the quick set, globs expanded; a glob or a file that matches nothing is
    an error (a renamed test file must not silently drop out of the quick check)."""
    paths = []
    for what, entries in QUICK.items():
        for entry in entries:
            file, sep, name = entry.partition("::")
            found = sorted((root / "tests").glob(file))
            if not found:
                raise FileNotFoundError(f"scripts/quickcheck.py: QUICK[{what!r}] names tests/{file}, "
                                        "which matches no file")
            paths += [f"{p.relative_to(root).as_posix()}{sep}{name}" for p in found]
    return paths


def main(argv: list[str]) -> int:
    try:
        files = changed_files()
    except NotAGitCheckout as exc:
        print(f"error: --quick compares with the last commit, so it needs a git checkout ({exc})",
              file=sys.stderr)
        return 2
    pages = changed_pages(files)
    print("quick check: formulas, catalog, macros, facts check, one strict build with the page contract,")
    print("  and the browser checks of the pages changed since the last commit:")
    print("  " + (", ".join(pages) if pages else "none (the first question page is checked instead)"))
    wide = site_wide(files)
    if wide:
        print(f"  note: {', '.join(wide[:5])}{' ...' if len(wide) > 5 else ''} changed, which every page "
              "is built from; the build checks every page, the browser only the ones above. "
              "Run ./scripts/test before you push.")
    sys.stdout.flush()
    cmd = [sys.executable, "-m", "pytest", "-q", *quick_targets(), *argv]
    return subprocess.call(cmd, cwd=ROOT, env=dict(os.environ))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
