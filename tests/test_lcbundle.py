"""Live-coding practice bundles: starters match their references, bundles are deterministic, and a
bundle's own tests pass with the reference as the user's file and fail with the untouched starter."""

from __future__ import annotations

import ast
import io
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from livecoding.starter import MODULES, is_record, starter_source
from sitebuild.lcbundle import bundle_contents, bundle_files, bundle_name, zip_bytes

ROOT = Path(__file__).resolve().parent.parent


def _interface(tree: ast.Module) -> dict[str, str]:
    """Public name -> what a caller sees: signatures and decorators of functions, whole source of
    records (exceptions, dataclasses), the value of module-level assignments."""
    out: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                if not node.name.startswith("_") or node.name.endswith("__"):
                    decorators = ",".join(ast.unparse(d) for d in node.decorator_list)
                    returns = ast.unparse(node.returns) if node.returns else ""
                    out[prefix + node.name] = (f"{type(node).__name__} @{decorators} ({ast.unparse(node.args)})"
                                               f" -> {returns} doc={ast.get_docstring(node)!r}")
            elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                head = f"class({','.join(ast.unparse(b) for b in node.bases)}) doc={ast.get_docstring(node)!r}"
                out[prefix + node.name] = ast.unparse(node) if is_record(node) else head
                if not is_record(node):
                    visit(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, ast.Assign) and not prefix:
                out[ast.unparse(node.targets[0])] = ast.unparse(node.value)
    visit(tree.body, "")
    return out


@pytest.mark.parametrize("module", sorted(MODULES.values()))
def test_starter_has_the_reference_interface_and_no_answer(module):
    reference = ast.parse((ROOT / "livecoding" / f"{module}.py").read_text(encoding="utf-8"))
    starter = ast.parse(starter_source(module))
    assert _interface(starter) == _interface(reference)
    assert ast.get_docstring(starter) == ast.get_docstring(reference)
    stubs = 0
    for node in ast.walk(starter):
        if isinstance(node, ast.ClassDef) and is_record(node):
            continue
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    stubs += 1
                    body = item.body[1:] if ast.get_docstring(item) else item.body
                    assert [ast.unparse(s) for s in body] == ["raise NotImplementedError"], f"{module}.{item.name}"
    top = [n for n in starter.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    for fn in top:
        body = fn.body[1:] if ast.get_docstring(fn) else fn.body
        assert [ast.unparse(s) for s in body] == ["raise NotImplementedError"], f"{module}.{fn.name}"
    assert stubs + len(top) >= 2, f"{module}: the starter should leave something to implement"


def test_unknown_module_is_refused_by_name():
    with pytest.raises(ValueError, match="livecoding/_checks.py: not a live-coding reference module"):
        starter_source("_checks")


def test_bundles_are_deterministic_and_dated_1980():
    first, second = bundle_files(), bundle_files()
    assert first == second
    assert sorted(first) == sorted(bundle_name(q) for q in MODULES)  # string order: q152 < q89
    with zipfile.ZipFile(io.BytesIO(first[bundle_name(94)])) as z:
        assert {i.date_time for i in z.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        names = z.namelist()
    assert names == sorted(names) and all(n.startswith("q94/") for n in names)
    assert "q94/token_bucket.py" in names  # Q94's module imports retry_after_header from Q93's


def test_each_live_coding_page_links_its_bundle():
    for qid in MODULES:
        linked = [p for p in (ROOT / "docs").glob("*/live-coding/*.md")
                  if f"](../../{bundle_name(qid)})" in p.read_text(encoding="utf-8")]
        assert len(linked) == 1, f"Q{qid}: expected one live-coding page linking {bundle_name(qid)}, found {linked}"


def test_readme_gives_the_one_command():
    readme = bundle_contents(93)["README.txt"].decode()
    assert "python -m pytest test_q93_token_bucket.py" in readme and "pytest hypothesis" in readme


def _run_bundle(qid: int, tmp_path: Path, use_reference: bool) -> subprocess.CompletedProcess:
    with zipfile.ZipFile(io.BytesIO(zip_bytes(qid))) as z:
        z.extractall(tmp_path)
    folder = tmp_path / f"q{qid}"
    module = MODULES[qid]
    if use_reference:
        shutil.copyfile(ROOT / "livecoding" / f"{module}.py", folder / f"{module}.py")
    test_name = next(folder.glob(f"test_q{qid}_*.py")).name
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_name],
                          cwd=folder, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("qid", [93, 90, 151, 152])
def test_bundle_passes_with_the_reference_and_fails_with_the_starter(qid, tmp_path):
    done = _run_bundle(qid, tmp_path / "reference", use_reference=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "failed" not in done.stdout
    # The project's own livecoding package is importable here too: failing proves the bundle's
    # conftest points `livecoding.<module>` at the user's file, not at the reference.
    done = _run_bundle(qid, tmp_path / "starter", use_reference=False)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-2000:]
    assert "NotImplementedError" in done.stdout and " passed" not in done.stdout.splitlines()[-1]
