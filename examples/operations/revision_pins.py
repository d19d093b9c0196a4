"""Q133: is a vLLM deployment reproducible? Two checks that need no GPU and no network.

``check_pins`` reads a Kubernetes manifest and reports every reference in a vLLM container that can
change under a restart: an image without a digest, a model or tokenizer revision that is not a full
commit hash, a speculative-decoding draft without one, and a container that may still reach the Hub
(no ``HF_HUB_OFFLINE``). ``verify_snapshot`` compares a staged model directory with a lock file of
SHA-256 digests written when the revision was approved.

Flag names are vLLM 0.11.0's (``vllm serve MODEL``, ``--revision``, ``--tokenizer``,
``--tokenizer-revision``, ``--code-revision``, ``--speculative-config``); the offline switch is
huggingface_hub's (``HF_HUB_OFFLINE``, true for 1/ON/YES/TRUE in any case, v0.35).
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import yaml

from examples.mlops.skew_checks import Finding

COMMIT = re.compile(r"^[0-9a-f]{40}$")   # huggingface_hub's REGEX_COMMIT_HASH: a full, lower-case SHA-1
TRUE = {"1", "ON", "YES", "TRUE"}        # huggingface_hub constants.ENV_VARS_TRUE_VALUES


def parse_vllm_args(argv: list[str]) -> dict[str, object]:
    """``["vllm", "serve", "org/m", "--revision", "abc", "--flag"]`` -> {"model": "org/m", "revision": "abc", ...}."""
    args = list(argv)
    out: dict[str, object] = {}
    if args[:2] == ["vllm", "serve"] and len(args) > 2 and not args[2].startswith("-"):
        out["model"] = args[2]
        args = args[3:]
    i = 0
    while i < len(args):
        a = args[i]
        if not a.startswith("--"):
            i += 1
            continue
        key, eq, val = a[2:].partition("=")
        key = key.replace("-", "_")
        if eq:
            out[key] = val
        elif i + 1 < len(args) and not args[i + 1].startswith("--"):
            out[key], i = args[i + 1], i + 1
        else:
            out[key] = True
        i += 1
    return out


def _is_local(ref: str) -> bool:
    return ref.startswith(("/", "./", "../"))


# --8<-- [start:check-pins]
def _moving(ref: str, rev: object) -> bool:
    """A Hub reference whose revision is not a full commit hash (local paths are the staging's business)."""
    return bool(ref) and not _is_local(ref) and not (isinstance(rev, str) and COMMIT.match(rev))


def check_pins(manifest: Path) -> list[Finding]:
    """Every reference in the manifest's vLLM containers that a restart could resolve differently."""
    out = []
    for doc in yaml.safe_load_all(manifest.read_text(encoding="utf-8")):
        spec = (doc or {}).get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("containers", []):
            where = f"{manifest.name}: container {c.get('name', '?')}"
            argv = [str(x) for x in c.get("command", []) + c.get("args", [])]
            if "serve" not in argv and not any(x.startswith("--model") for x in argv):
                continue                                   # not a vLLM server container
            if "@sha256:" not in c.get("image", ""):
                out.append(Finding(where, f"image {c.get('image')!r} is not pinned by digest"))
            a = parse_vllm_args(argv)
            model, rev = str(a.get("model", "")), a.get("revision")
            tok, tok_rev = a.get("tokenizer"), a.get("tokenizer_revision", rev)   # vLLM 0.11 default
            refs = [("model", model, rev)]
            if isinstance(tok, str) and tok != model:
                refs.append(("tokenizer", tok, tok_rev))
            if "speculative_config" in a:
                try:
                    draft = json.loads(str(a["speculative_config"]))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{where}: --speculative-config is not valid JSON ({e.msg})") from None
                refs.append(("draft model", str(draft.get("model", "")), draft.get("revision")))
            out += [Finding(where, f"{kind} {ref!r} revision {r!r} is not a commit hash")
                    for kind, ref, r in refs if _moving(ref, r)]
            if "code_revision" in a and _moving(model, a["code_revision"]):
                out.append(Finding(where, f"code revision {a['code_revision']!r} is not a commit hash"))
            env = {e.get("name"): str(e.get("value", "")) for e in c.get("env", [])}
            if env.get("HF_HUB_OFFLINE", "").upper() not in TRUE:
                out.append(Finding(where, "HF_HUB_OFFLINE is not set: a restart can reach the Hub"))
    return out
# --8<-- [end:check-pins]


# --8<-- [start:verify-snapshot]
def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def verify_snapshot(model_dir: Path, lock: Path) -> list[Finding]:
    """Staged files against the lock written when the revision was approved: missing, extra, changed."""
    data = json.loads(lock.read_text(encoding="utf-8"))
    if not isinstance(data.get("revision"), str) or not COMMIT.match(data["revision"]):
        raise ValueError(f"{lock}: 'revision' must be a 40-character lower-case commit hash")
    want: dict[str, str] = data.get("files", {})
    have = {p.relative_to(model_dir).as_posix(): p for p in sorted(model_dir.rglob("*")) if p.is_file()}
    out = [Finding(lock.name, f"missing {name}") for name in sorted(set(want) - set(have))]
    out += [Finding(lock.name, f"not in the lock: {name}") for name in sorted(set(have) - set(want))]
    out += [Finding(lock.name, f"changed {name}: sha256 {sha256(have[name])[:12]}, lock {want[name][:12]}")
            for name in sorted(set(want) & set(have)) if sha256(have[name]) != want[name]]
    return out
# --8<-- [end:verify-snapshot]
