"""Practice bundles for the live-coding pages (Q89-Q94, Q152): one zip per question with the starter
skeleton, the page's own test file and what it needs, and a README with the one command to run.

The zip holds one folder, ``q<id>/``: ``<module>.py`` (the starter from :mod:`livecoding.starter`),
``test_q<id>_<module>.py`` and ``lc_support.py`` copied from ``tests/livecoding/``, the reference
``_checks.py`` (input-checking helpers the starter imports), any reference module the starter imports
(Q94 imports ``retry_after_header`` from Q93's module), and a ``conftest.py`` that makes the package
name ``livecoding`` point at that folder, so the unchanged ``from livecoding.<module> import ...`` in
the test file imports the user's ``<module>.py``. Entries are sorted and dated 1980-01-01, so two
builds give the same bytes. Pure Python; nothing here imports MkDocs.
"""

from __future__ import annotations

import ast
import io
import zipfile
from pathlib import Path

from livecoding.starter import MODULES, starter_source

ROOT = Path(__file__).resolve().parent.parent
BUNDLE_DIR = "downloads/livecoding"

CONFTEST = '''"""Point the package name ``livecoding`` at this folder, so the tests import your files here."""

import sys
import types
from pathlib import Path

HERE = str(Path(__file__).resolve().parent)
if HERE not in sys.path:
    sys.path.insert(0, HERE)  # lc_support.py
package = types.ModuleType("livecoding")
package.__path__ = [HERE]
sys.modules["livecoding"] = package
'''


def bundle_name(qid: int) -> str:
    """The zip's path under the site directory, e.g. ``downloads/livecoding/q93.zip``."""
    return f"{BUNDLE_DIR}/q{qid}.zip"


def test_file(qid: int) -> Path:
    found = sorted((ROOT / "tests" / "livecoding").glob(f"test_q{qid}_*.py"))
    if len(found) != 1:
        raise ValueError(f"tests/livecoding/: expected one test_q{qid}_*.py for Q{qid}, found {len(found)}")
    return found[0]


def _sibling_imports(module: str) -> list[str]:
    """Reference modules of this package that ``livecoding/<module>.py`` imports (``from .x import``)."""
    tree = ast.parse((ROOT / "livecoding" / f"{module}.py").read_text(encoding="utf-8"))
    return sorted({node.module for node in tree.body
                   if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module})


def readme(qid: int, module: str, test_name: str, extra: list[str]) -> str:
    others = "".join(f"{name}.py: reference code your file may import; leave it as it is.\n" for name in extra)
    return (f"Q{qid} practice bundle\n\n"
            f"{module}.py: the starter. Keep the names and signatures; replace every "
            "`raise NotImplementedError`.\n"
            f"{test_name}: the page's tests, unchanged; lc_support.py: their helpers.\n"
            f"conftest.py: makes `livecoding.{module}` in the tests import your {module}.py.\n"
            f"{others}\n"
            "Needs Python 3.11 or later with pytest and hypothesis:\n"
            "    python -m pip install pytest hypothesis\n\n"
            "Run the tests from this folder:\n"
            f"    python -m pytest {test_name}\n")


def bundle_contents(qid: int) -> dict[str, bytes]:
    """{file name inside ``q<id>/``: content} for one question."""
    module = MODULES[qid]
    test = test_file(qid)
    extra = [m for m in _sibling_imports(module) if m != "_checks"]
    files = {
        f"{module}.py": starter_source(module),
        test.name: test.read_text(encoding="utf-8"),
        "lc_support.py": (test.parent / "lc_support.py").read_text(encoding="utf-8"),
        "_checks.py": (ROOT / "livecoding" / "_checks.py").read_text(encoding="utf-8"),
        "conftest.py": CONFTEST,
        "README.txt": readme(qid, module, test.name, extra),
    }
    for name in extra:
        files[f"{name}.py"] = (ROOT / "livecoding" / f"{name}.py").read_text(encoding="utf-8")
    return {name: text.encode("utf-8") for name, text in files.items()}


def zip_bytes(qid: int) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, content in sorted(bundle_contents(qid).items()):
            info = zipfile.ZipInfo(f"q{qid}/{name}", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, content)
    return buf.getvalue()


def bundle_files(qids=None) -> dict[str, bytes]:
    """{path under the site dir: zip} for the live-coding questions among ``qids`` (default: all)."""
    return {bundle_name(qid): zip_bytes(qid) for qid in sorted(MODULES) if qids is None or qid in qids}
