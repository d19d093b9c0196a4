"""The GitHub Actions workflows in .github/workflows/: valid against the workflow JSON schema (the copy
check-jsonschema bundles, so no network), and wired as the README says: tests on every pull request
through .ci/run, deploy only after the tests pass, the link watch on a schedule.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = ROOT / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml")) + sorted(WORKFLOWS.glob("*.yaml"))


def validate(*paths: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
         *map(str, paths)],
        capture_output=True, text=True, timeout=120,
    )


def load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as the boolean true.
    data["on"] = data.pop(True, data.get("on"))
    return data


def steps(job: dict) -> list[dict]:
    return job.get("steps", [])


def test_the_four_workflows_exist():
    assert [f.name for f in FILES] == ["deploy.yml", "facts-drift.yml", "links.yml", "test.yml"]


def test_every_workflow_matches_the_schema():
    proc = validate(*FILES)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ok -- validation done" in proc.stdout


# A typo in a real workflow must fail here: each case breaks one thing in a copy of a real file.
BROKEN = [
    ("test.yml", "runs-on:", "runs_on:", "'runs-on' is a required property"),
    ("test.yml", "\n  pull_request:\n", "\n  pull_requests:\n", "$.on"),
    ("deploy.yml", "cancel-in-progress: false", "cancel-in-progres: false", "$.concurrency"),
    ("links.yml", '    - cron: "17 5 * * 1"', '    cron: "17 5 * * 1"', "$.on.schedule"),
]


@pytest.mark.parametrize("name,old,new,expected", BROKEN, ids=[c[2].strip(" :\n") for c in BROKEN])
def test_a_typo_in_a_workflow_is_rejected(tmp_path, name, old, new, expected):
    text = (WORKFLOWS / name).read_text(encoding="utf-8")
    assert old in text, f"{name} no longer contains {old!r}: update this case"
    broken = tmp_path / name
    broken.write_text(text.replace(old, new, 1), encoding="utf-8")
    proc = validate(broken)
    assert proc.returncode == 1
    assert str(broken) in proc.stdout
    assert expected in proc.stdout


def test_actions_are_pinned_to_a_major_version():
    for f in FILES:
        for use in re.findall(r"^\s*(?:-\s*)?uses:\s*(\S+)", f.read_text(encoding="utf-8"), re.MULTILINE):
            assert use.startswith("./") or re.fullmatch(r"[\w.-]+/[\w.-]+@v\d+", use), f"{f.name}: {use}"


def test_pull_requests_run_the_same_command_as_ci():
    wf = load("test.yml")
    assert "pull_request" in wf["on"] and "workflow_call" in wf["on"]
    runs = [s.get("run", "") for s in steps(wf["jobs"]["test"])]
    assert "bash .ci/run" in runs
    # .ci/run runs the README's test command.
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith("exec ./scripts/test")


def test_deploy_runs_only_after_the_tests_and_publishes_site_and_offline_bundle():
    wf = load("deploy.yml")
    assert wf["on"]["push"]["branches"] == ["main"]
    jobs = wf["jobs"]
    assert jobs["test"]["uses"] == "./.github/workflows/test.yml"
    assert jobs["build"]["needs"] == "test"
    assert jobs["deploy"]["needs"] == "build"
    build_uses = [s.get("uses", "").split("@")[0] for s in steps(jobs["build"])]
    assert {"actions/configure-pages", "actions/upload-pages-artifact", "actions/upload-artifact"} <= set(build_uses)
    build_step = next(s for s in steps(jobs["build"]) if "SITE_URL" in s.get("env", {}))
    assert build_step["env"]["SITE_URL"] == "${{ vars.SITE_URL || steps.pages.outputs.base_url }}"
    assert build_step["env"]["REPO_URL"] == "${{ github.server_url }}/${{ github.repository }}"
    assert "./scripts/build-offline" in build_step["run"] and "mkdocs build --strict" in build_step["run"]
    assert [s.get("uses", "").split("@")[0] for s in steps(jobs["deploy"])] == ["actions/deploy-pages"]
    assert jobs["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}


def test_link_watch_runs_on_a_schedule_not_in_the_test_suite():
    wf = load("links.yml")
    assert wf["on"]["schedule"] and "workflow_dispatch" in wf["on"]
    runs = " ".join(s.get("run", "") for s in steps(wf["jobs"]["links"]))
    assert "./scripts/check-links" in runs


def test_facts_drift_runs_weekly_and_keeps_one_issue():
    wf = load("facts-drift.yml")
    assert wf["on"]["schedule"] and "workflow_dispatch" in wf["on"]
    assert wf["permissions"] == {"contents": "read", "issues": "write"}
    job = wf["jobs"]["drift"]
    runs = [s.get("run", "") for s in steps(job)]
    assert any("./scripts/extract-facts --check" in r for r in runs)
    compare = next(s for s in steps(job) if "--compare newest" in s.get("run", ""))
    assert "--github-issue" in compare["run"] and compare["env"]["GITHUB_TOKEN"] == "${{ secrets.GITHUB_TOKEN }}"


def test_the_tests_run_on_every_supported_python():
    # The README's supported versions, pyproject's lower bound and the CI matrix are the same set.
    matrix = load("test.yml")["jobs"]["test"]["strategy"]["matrix"]["python"]
    assert matrix == ["3.11", "3.12", "3.13"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "Python 3.11 (3.11.5 or later), 3.12 or 3.13" in readme
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'requires-python = ">=3.11.5"' in pyproject
    assert load("test.yml")["jobs"]["test"]["container"] == "python:${{ matrix.python }}-bookworm"

