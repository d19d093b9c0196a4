"""The linter (ruff, pinned in the test extra and the lock; configured in pyproject.toml) finds nothing
in the project's Python sources, tests and scripts included."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ruff_finds_nothing():
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"ruff check found problems (fix them or explain a noqa):\n{proc.stdout}{proc.stderr}"
    assert "All checks passed" in proc.stdout


def test_ruff_checks_the_python_the_site_is_built_from():
    # A config that excluded the code would pass trivially: the file list must include each package.
    proc = subprocess.run([sys.executable, "-m", "ruff", "check", "--show-files", "."],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    files = {Path(line).relative_to(ROOT).parts[0] for line in proc.stdout.split() if line.endswith(".py")}
    assert {"macros", "sitebuild", "livecoding", "scripts", "tests"} <= files, files
