"""Q113: the day-one intake of a downloaded open-weights model directory, before any GPU is involved.

``intake`` reads the files a Hugging Face model repository ships and reports what must be settled before
the weights are worth serving: the licence and gating the model card declares, pickle weight files, a
partial or truncated download (every shard the index names present, every safetensors file as long as its
own header says), remote code, and the chat template. Each finding is a ``blocker`` (do not go on) or a
``review`` (a person decides).

Formats and rules, by source: the safetensors layout (an 8-byte little-endian header length, a JSON header
whose entries carry ``data_offsets`` into the byte buffer that follows; safetensors 0.6.2), the shard
index (``weight_map``, ``metadata.total_size`` summed over tensor storage; huggingface_hub v0.35.3
``serialization/_base.py``), model-card metadata (``license``, ``license_name``, ``extra_gated_*``; Hub
docs), vLLM 0.11.0's ``--load-format auto`` (safetensors first, ``*.bin`` only without them) and its
chat-template resolution (``entrypoints/chat_utils.py``: the request's or ``--chat-template``'s, the
processor's, the tokenizer's, then a bundled fallback for a few model types), and
transformers 4.56.0 (a ``chat_template.jinja`` file takes priority over ``chat_template`` in
``tokenizer_config.json``).
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

import yaml

from examples.operations.plumbing import _read_json as _json

PERMISSIVE = {"apache-2.0", "mit", "bsd-2-clause", "bsd-3-clause"}
PICKLE_SUFFIXES = {".bin", ".pt", ".pth", ".ckpt", ".pkl"}
MAX_HEADER = 100_000_000   # safetensors refuses headers above 100 MB


@dataclass(frozen=True)
class Finding:
    severity: str   # "blocker" | "review"
    check: str
    detail: str

    def __str__(self) -> str:
        return f"[{self.severity}] {self.check}: {self.detail}"


def card_metadata(model_dir: Path) -> dict:
    """The YAML block between the first two ``---`` lines of README.md ({} without a card or a block)."""
    card = model_dir / "README.md"
    if not card.is_file():
        return {}
    lines = card.read_text(encoding="utf-8").splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in (s.strip() for s in lines[1:]):
        return {}
    end = next(i for i, s in enumerate(lines[1:], 1) if s.strip() == "---")
    try:
        meta = yaml.safe_load("\n".join(lines[1:end])) or {}
    except yaml.YAMLError as e:
        raise ValueError(f"{card}: model-card metadata is not valid YAML ({e})") from None
    if not isinstance(meta, dict):
        raise ValueError(f"{card}: model-card metadata must be a mapping")
    return meta


# --8<-- [start:shard]
def safetensors_tensors(path: Path) -> dict[str, int]:
    """Tensor name -> stored bytes of one safetensors file; ValueError naming the file if it is cut short."""
    size = path.stat().st_size
    with path.open("rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise ValueError(f"{path.name}: {size} bytes, too short for a safetensors header")
        (n,) = struct.unpack("<Q", head)
        if n > MAX_HEADER or 8 + n > size:
            raise ValueError(f"{path.name}: header claims {n:,} bytes but the file has {size:,}")
        try:
            header = json.loads(f.read(n))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise ValueError(f"{path.name}: header is not JSON (not a safetensors file?)") from None
    header.pop("__metadata__", None)
    ends = [t["data_offsets"][1] for t in header.values()]
    expected = 8 + n + max(ends, default=0)
    if size != expected:
        raise ValueError(f"{path.name}: header describes {expected:,} bytes, file has {size:,} "
                         f"({'truncated' if size < expected else 'trailing bytes'})")
    return {name: t["data_offsets"][1] - t["data_offsets"][0] for name, t in header.items()}
# --8<-- [end:shard]


def _licence(meta: dict) -> list[Finding]:
    lic = meta.get("license")
    if not lic:
        return [Finding("blocker", "license", "the model card declares no license: nobody can approve the use")]
    out = []
    if lic == "other":
        out.append(Finding("review", "license", f"custom license {meta.get('license_name', '(unnamed)')!r} "
                           f"({meta.get('license_link', 'no link')}): legal review before anything else"))
    elif str(lic).lower() not in PERMISSIVE:
        out.append(Finding("review", "license", f"license {lic!r}: read its use restrictions, user thresholds "
                           "and attribution terms before anything else"))
    if any(k.startswith("extra_gated") for k in meta):
        out.append(Finding("review", "gated", "access is granted per Hub user after a request in the browser: "
                           "the token that downloads must belong to an approved user"))
    return out


def _weights(model_dir: Path) -> list[Finding]:
    out: list[Finding] = []
    shards = sorted(model_dir.glob("*.safetensors"))
    pickles = sorted(p.name for p in model_dir.iterdir() if p.suffix in PICKLE_SUFFIXES)
    if pickles and not shards:
        out.append(Finding("blocker", "pickle", f"weights only as pickle ({', '.join(pickles)}): loading them can "
                           "run code; get a safetensors revision or convert it in a sandbox"))
    elif pickles:
        out.append(Finding("review", "pickle", f"{', '.join(pickles)} beside safetensors: --load-format auto "
                           "uses the safetensors; leave the pickles out of the staged copy"))
    if not shards:
        if not pickles:
            out.append(Finding("blocker", "weights", "no weight files: the download did not happen or did not finish"))
        return out
    stored: dict[str, dict[str, int]] = {}
    for p in shards:
        try:
            stored[p.name] = safetensors_tensors(p)
        except ValueError as e:
            out.append(Finding("blocker", "truncated", str(e)))
    index_file = model_dir / "model.safetensors.index.json"
    if not index_file.is_file():
        return out
    index = _json(index_file)
    weight_map: dict[str, str] = index.get("weight_map", {})
    named = sorted(set(weight_map.values()))
    missing = [s for s in named if not (model_dir / s).is_file()]
    if missing:
        out.append(Finding("blocker", "missing", f"{len(named) - len(missing)} of {len(named)} shards present; "
                           f"missing: {', '.join(missing)}"))
    for tensor, shard in weight_map.items():
        if shard in stored and tensor not in stored[shard]:
            out.append(Finding("blocker", "index", f"{tensor} is mapped to {shard}, which does not hold it"))
    total = index.get("metadata", {}).get("total_size")
    if total is not None and not missing and len(stored) == len(shards):
        held = sum(sum(t.values()) for t in stored.values())
        if held != total:
            out.append(Finding("review", "total_size", f"shards hold {held:,} bytes of tensors, "
                               f"the index says {total:,}"))
    return out


def _code_and_template(model_dir: Path) -> list[Finding]:
    out = []
    config = model_dir / "config.json"
    if not config.is_file():
        return [Finding("blocker", "config", "config.json is missing: no engine can build the model")]
    auto_map = _json(config).get("auto_map")
    if auto_map:
        out.append(Finding("review", "remote-code", f"auto_map {sorted(auto_map)} points at the repository's Python, "
                           "which --trust-remote-code runs at load; review it and pin --code-revision"))
    tok = model_dir / "tokenizer_config.json"
    inline = _json(tok).get("chat_template") if tok.is_file() else None
    jinja = model_dir / "chat_template.jinja"
    if not inline and not jinja.is_file():
        out.append(Finding("blocker", "chat-template", "no chat template: vLLM 0.11's /v1/chat/completions cannot "
                           "render a prompt unless --chat-template names one (it bundles fallbacks only for a few "
                           "model types)"))
    elif inline and jinja.is_file() and isinstance(inline, str) and inline != jinja.read_text(encoding="utf-8"):
        out.append(Finding("review", "chat-template", "chat_template.jinja and tokenizer_config.json disagree; "
                           "transformers uses the .jinja file"))
    return out


def intake(model_dir: Path) -> list[Finding]:
    """Every finding for one downloaded model directory, blockers first."""
    model_dir = Path(model_dir)
    if not model_dir.is_dir():
        raise ValueError(f"{model_dir}: not a directory")
    found = _licence(card_metadata(model_dir)) + _weights(model_dir) + _code_and_template(model_dir)
    return sorted(found, key=lambda f: f.severity != "blocker")


if __name__ == "__main__":  # python -m examples.operations.intake /models/new-model
    import sys

    results = intake(Path(sys.argv[1]))
    print("\n".join(map(str, results)) or "no findings")
    sys.exit(1 if any(f.severity == "blocker" for f in results) else 0)
