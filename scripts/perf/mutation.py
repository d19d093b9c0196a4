"""Mutation testing of the live-coding answers against the tests each page ships.

For each reference module in ``livecoding/`` (Q89-Q94, Q151, Q152), mutmut 3 makes every single-change
version of it (an operator flipped, a constant nudged, a condition forced, a call argument dropped) and
runs the page's own test file, ``tests/livecoding/test_q<id>_*.py`` (the one its practice bundle carries),
against each. A mutant the tests fail is *killed*. One they pass either is *equivalent* (it behaves like
the original under every call the page's contract allows) and is recorded in ``mutation_equivalent.yaml``
beside this file with a one-line reason, or is a *survivor*: a bug a candidate could ship with green tests.

A mutant is named by its function, the source line it changes and that line after the change (mutmut's own
``__mutmut_<n>`` numbers shift whenever the function is edited); ``tests/test_mutation_equivalents.py``
checks that every recorded line still exists in its function. Runs in a scratch copy (mutmut writes a
``mutants/`` tree and a stats file), one worker, at the lowest CPU priority, one module at a time. Needs
mutmut from the ``mutation`` extra: installed on first use into ``build/mutation-venv`` from
``requirements/mutation.txt`` (hashes checked).

    scripts/benchmark --mutation                 # all eight modules
    scripts/benchmark --mutation --modules 151,152
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
EQUIVALENT_FILE = Path(__file__).resolve().parent / "mutation_equivalent.yaml"
VENV = ROOT / "build" / "mutation-venv"
LOCK = ROOT / "requirements" / "mutation.txt"

sys.path.insert(0, str(ROOT))
from livecoding.starter import MODULES  # noqa: E402
from sitebuild.lcbundle import test_file  # noqa: E402

CONFIG = """[tool.mutmut]
source_paths = ["livecoding/"]
only_mutate = ["livecoding/{module}.py"]
pytest_add_cli_args_test_selection = ["tests/livecoding/{test}"]
pytest_add_cli_args = ["-p", "no:cacheprovider", "-q"]
use_git_change_detection = false
# A mutant that makes the tests 3x slower than the original is caught (as a timeout): a complexity bug.
# mutmut's default, 15x, lets one mutant that turns O(1) into O(n) hold the run for many minutes.
timeout_multiplier = 3.0
"""


@dataclass(frozen=True)
class MutantId:
    """What names a mutant across edits: the function, the changed line before and after (stripped)."""

    function: str
    before: str
    after: str


@dataclass
class ModuleResult:
    module: str
    total: int = 0
    killed: int = 0
    timeout: int = 0
    equivalent: int = 0
    survived: list[MutantId] | None = None
    stale: list[MutantId] | None = None   # recorded as equivalent, but no survivor matches it

    @property
    def kill_rate(self) -> float:
        """Killed share of the mutants that are not equivalent."""
        live = self.total - self.equivalent
        return (self.killed + self.timeout) / live if live else 1.0


def load_equivalents(path: Path = EQUIVALENT_FILE) -> dict[str, dict[MutantId, str]]:
    """{module: {mutant id: reason}}; a clear error naming the file for anything malformed."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping of module name to a list of mutants")
    out: dict[str, dict[MutantId, str]] = {}
    for module, entries in data.items():
        if module not in MODULES.values():
            raise ValueError(f"{path}: {module!r} is not a live-coding module ({sorted(MODULES.values())})")
        if not isinstance(entries, list):
            raise ValueError(f"{path}: {module}: expected a list of mutants")
        out[module] = {}
        for i, entry in enumerate(entries):
            keys = {"function", "before", "after", "reason"}
            if not isinstance(entry, dict) or set(entry) != keys or not all(
                    isinstance(entry[k], str) and entry[k].strip() for k in keys):
                raise ValueError(f"{path}: {module}[{i}]: expected non-empty strings {sorted(keys)}, got {entry!r}")
            mid = MutantId(entry["function"], entry["before"].strip(), entry["after"].strip())
            if mid in out[module]:
                raise ValueError(f"{path}: {module}[{i}]: recorded twice: {mid}")
            out[module][mid] = entry["reason"]
    return out


def function_name(mutant: str) -> str:
    """``livecoding.m.xǁClassǁmethod__mutmut_3`` -> ``Class.method``; ``livecoding.m.x_fn__mutmut_3`` -> ``fn``."""
    last = mutant.rsplit(".", 1)[-1]
    base = re.sub(r"__mutmut_\d+$", "", last)
    if base.startswith("xǁ"):
        return ".".join(base[2:].split("ǁ"))
    if base.startswith("x_"):
        return base[2:]
    raise ValueError(f"unexpected mutmut mutant name {mutant!r}")


def parse_diff(mutant: str, diff: str) -> MutantId:
    removed = [line[1:].strip() for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    return MutantId(function_name(mutant), " / ".join(removed), " / ".join(added))


def function_source(source: str, function: str) -> str | None:
    """The source of ``function`` (``name`` or ``Class.name``) in ``source``, dedented, or None."""
    body: list[ast.stmt] = ast.parse(source).body
    *owners, name = function.split(".")
    for owner in owners:
        cls = next((n for n in body if isinstance(n, ast.ClassDef) and n.name == owner), None)
        if cls is None:
            return None
        body = cls.body
    fn = next((n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name), None)
    if fn is None:
        return None
    return textwrap.dedent("\n".join(source.splitlines()[fn.lineno - 1:fn.end_lineno]))


def function_lines(source: str, function: str) -> list[str] | None:
    """The stripped source lines of ``function``, or None if there is no such function."""
    text = function_source(source, function)
    return None if text is None else [line.strip() for line in text.splitlines()]


def ensure_venv() -> Path:
    mutmut = VENV / "bin" / "mutmut"
    stamp = VENV / f".installed-{LOCK.stat().st_mtime_ns}"
    if not stamp.exists():
        if not (VENV / "bin" / "python").exists():
            subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        pip = [str(VENV / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run(pip + ["--require-hashes", "-r", str(LOCK)], check=True)
        stamp.touch()
    return mutmut


def run_module(mutmut: Path, qid: int, equivalents: dict[MutantId, str], workdir: Path) -> ModuleResult:
    module = MODULES[qid]
    test = test_file(qid)
    work = workdir / f"q{qid}"
    shutil.copytree(ROOT / "livecoding", work / "livecoding", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(test.parent, work / "tests" / "livecoding", ignore=shutil.ignore_patterns("__pycache__"))
    (work / "pyproject.toml").write_text(CONFIG.format(module=module, test=test.name), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MUTANT")}
    nice = ["nice", "-n", "19"] if shutil.which("nice") else []
    done = subprocess.run(nice + [str(mutmut), "run", "--max-children", "1"], cwd=work, env=env,
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"mutmut run failed for {module}:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    listing = subprocess.run([str(mutmut), "results", "--all", "true"], cwd=work, env=env,
                             capture_output=True, text=True, check=True).stdout
    result = ModuleResult(module, survived=[], stale=[])
    seen: set[MutantId] = set()
    for line in listing.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if not sep or not name.startswith(f"livecoding.{module}."):
            continue
        result.total += 1
        if status in ("killed", "timeout"):
            result.killed += status == "killed"
            result.timeout += status == "timeout"
            continue
        diff = subprocess.run([str(mutmut), "show", name], cwd=work, env=env, capture_output=True,
                              text=True, check=True).stdout
        mid = parse_diff(name, diff)
        seen.add(mid)
        if mid in equivalents:
            result.equivalent += 1
        else:
            result.survived.append(mid)
    result.stale += [mid for mid in equivalents if mid not in seen]  # killed now, or no such mutant
    return result


def report(results: list[ModuleResult]) -> int:
    print(f"\n{'module':<20} {'mutants':>8} {'killed':>7} {'timeout':>8} {'equiv.':>7} {'survived':>9} "
          f"{'kill rate':>10}")
    for r in results:
        print(f"{r.module:<20} {r.total:>8} {r.killed:>7} {r.timeout:>8} {r.equivalent:>7} {len(r.survived):>9} "
              f"{100 * r.kill_rate:>9.1f}%")
    bad = 0
    for r in results:
        for mid in r.survived:
            bad += 1
            print(f"SURVIVED {r.module} {mid.function}: {mid.before!r} -> {mid.after!r}")
        for mid in r.stale:
            bad += 1
            print(f"STALE    {r.module} {mid.function}: {mid.before!r} -> {mid.after!r} is recorded as equivalent "
                  f"but no surviving mutant matches it (killed now, or the line changed)")
    print("every non-equivalent mutant killed" if not bad else f"{bad} mutants to kill or record")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="scripts/benchmark --mutation", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--modules", default=",".join(str(q) for q in sorted(MODULES)),
                    help="question ids, comma-separated (default: all live-coding questions)")
    args = ap.parse_args(argv)
    try:
        qids = [int(q) for q in args.modules.split(",") if q.strip()]
    except ValueError:
        ap.error(f"--modules: expected question ids like 151,152, got {args.modules!r}")
    unknown = [q for q in qids if q not in MODULES]
    if unknown:
        ap.error(f"--modules: no live-coding question {unknown}; known: {sorted(MODULES)}")
    equivalents = load_equivalents()
    mutmut = ensure_venv()
    results = []
    with tempfile.TemporaryDirectory(prefix="msib-mutation-") as tmp:
        for qid in qids:
            module = MODULES[qid]
            print(f"Q{qid} {module}: mutating, running {test_file(qid).name} against each mutant ...", flush=True)
            results.append(run_module(mutmut, qid, equivalents.get(module, {}), Path(tmp)))
            r = results[-1]
            print(f"  {r.total} mutants, {r.killed + r.timeout} killed, {r.equivalent} equivalent, "
                  f"{len(r.survived)} survived", flush=True)
    return report(results)


if __name__ == "__main__":
    sys.exit(main())
