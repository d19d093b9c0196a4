"""Getting a release's source and writing its snapshot: download the wheel, unpack its Python files,
run the engine's extractor, and serialise the result so that the same wheel always gives the same
bytes (one fact per line, keys sorted), which keeps a re-pin's diff readable."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from . import SNAPSHOT_SCHEMA, Release
from .extract import sglang as sglang_extract
from .extract import vllm as vllm_extract
from .extract.astkit import ExtractError

EXTRACTORS = {"vllm": vllm_extract, "sglang": sglang_extract}
SECTION_ORDER = ("flags", "config", "env", "env_unregistered", "attention_backends", "quantization_methods", "metrics",
                 "log_lines", "batch_defaults", "files")
# One wheel per release whatever Python runs the script: the same file, so the same bytes.
PIP_TARGET = ["--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
              "--abi", "cp311", "--abi", "abi3", "--abi", "none",
              "--platform", "manylinux_2_34_x86_64", "--platform", "manylinux_2_28_x86_64",
              "--platform", "manylinux_2_17_x86_64", "--platform", "manylinux2014_x86_64",
              "--platform", "manylinux1_x86_64", "--platform", "any"]


def download_wheel(package: str, version: str, dest: Path, pip: list[str] | None = None) -> Path:
    """The wheel of ``package==version`` in ``dest`` (downloaded with pip unless already there)."""
    dest.mkdir(parents=True, exist_ok=True)
    norm = package.replace("-", "_").lower()
    found = sorted(dest.glob(f"{norm}-{version}-*.whl"))
    if found:
        return found[0]
    cmd = (pip or [sys.executable, "-m", "pip"]) + ["download", "--no-deps", "--quiet", "-d", str(dest),
                                                    *PIP_TARGET, f"{package}=={version}"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["(no output)"]
        raise ExtractError(f"pip download {package}=={version} failed: {tail[0]}")
    found = sorted(dest.glob(f"{norm}-{version}-*.whl"))
    if not found:
        raise ExtractError(f"pip download {package}=={version} left no wheel in {dest}")
    return found[0]


def unpack_sources(wheel: Path, package: str, dest: Path) -> Path:
    """The ``.py`` files of ``package/`` in ``wheel``, unpacked under ``dest`` (returned)."""
    with zipfile.ZipFile(wheel) as zf:
        members = [n for n in zf.namelist() if n.startswith(f"{package}/") and n.endswith(".py")]
        if not members:
            raise ExtractError(f"{wheel.name}: no Python files under {package}/")
        for name in members:
            zf.extract(name, dest)
    return dest


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def extract_release(rel: Release, version: str | None = None, wheel_dir: Path | None = None,
                    source: Path | None = None) -> dict:
    """The snapshot of ``rel`` (or of another ``version`` of the same package): from an unpacked
    ``source`` tree when given (tests, offline use), else from the wheel on the package index."""
    version = version or rel.version
    if rel.package is None or rel.key not in EXTRACTORS:
        raise ExtractError(f"{rel.label}: no extractor (engines with one: {', '.join(EXTRACTORS)})")
    header = {"schema": SNAPSHOT_SCHEMA, "engine": rel.key, "version": version, "package": rel.package}
    if source is not None:
        facts = EXTRACTORS[rel.key].extract(source)
        header.update(wheel=None, wheel_sha256=None)
    else:
        wheel = download_wheel(rel.package, version, wheel_dir or Path(tempfile.gettempdir()) / "msib-wheels")
        with tempfile.TemporaryDirectory(prefix=f"facts-{rel.key}-") as tmp:
            facts = EXTRACTORS[rel.key].extract(unpack_sources(wheel, rel.package, Path(tmp)))
        header.update(wheel=wheel.name, wheel_sha256=sha256(wheel))
    header["extractor"] = f"macros/facts/extract/{rel.key}.py"
    return {**header, **facts}


def dumps(snapshot: dict) -> str:
    """The snapshot as text: header fields first, then each section with one fact per line."""
    lines = ["{"]
    head = [k for k in snapshot if k not in SECTION_ORDER]
    sections = [k for k in SECTION_ORDER if k in snapshot]
    items = []
    for k in head:
        items.append(f"{json.dumps(k)}: {json.dumps(snapshot[k], ensure_ascii=False)}")
    for k in sections:
        value = snapshot[k]
        if isinstance(value, dict):
            inner = ",\n".join(f"  {json.dumps(n, ensure_ascii=False)}: "
                               f"{json.dumps(value[n], sort_keys=True, ensure_ascii=False, separators=(',', ':'))}"
                               for n in sorted(value))
        else:
            inner = ",\n".join(f"  {json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(',', ':'))}"
                               for v in value)
        open_, close = ("{", "}") if isinstance(value, dict) else ("[", "]")
        items.append(f"{json.dumps(k)}: {open_}\n{inner}\n {close}" if inner else f"{json.dumps(k)}: {open_}{close}")
    lines.append(",\n".join(f" {i}" for i in items))
    lines.append("}")
    return "\n".join(lines) + "\n"
