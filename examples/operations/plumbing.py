"""Q103: what a vLLM 0.11 deployment will actually do with a model directory, computed from the files
and flags alone (no GPU, no weights), and the diff between a reference deployment and a served one.

Four of the five plumbing faults of Q103 are visible in files and flags: the chat template the server
resolves, the special tokens the prompt starts with, the token ids generation stops on, and the default
sampling parameters. The fifth (numerics: quantized weights, an FP8 KV cache) shows up here only as a
flag difference; whether it matters takes an evaluation.

The rules mirror vLLM 0.11.0 (files named per function); a model directory holds ``config.json``,
``tokenizer_config.json`` and, optionally, ``generation_config.json``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from examples.mlops.skew_checks import Finding, render_chat

# vLLM 0.11 vllm/config/model.py, ModelConfig.get_diff_sampling_param: the only generation-config keys
# that become server-wide default sampling parameters (max_new_tokens is renamed max_tokens).
SAMPLING_KEYS = ("repetition_penalty", "temperature", "top_k", "top_p", "min_p", "max_new_tokens")
GOLDEN = [{"role": "system", "content": "Answer in one word."}, {"role": "user", "content": "Capital of France?"}]


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ValueError(f"{path}: file not found") from None
    except json.JSONDecodeError as e:
        raise ValueError(f"{path}: not valid JSON ({e.msg}, line {e.lineno})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object at the top level")
    return data


@dataclass(frozen=True)
class Deployment:
    """A model directory plus the vLLM 0.11 flags that change what the engine does with it."""

    model_dir: Path
    generation_config: str = "auto"           # --generation-config: "auto", "vllm" or a folder path
    override_generation_config: dict = field(default_factory=dict)  # --override-generation-config
    chat_template: Path | None = None          # --chat-template (a file here)
    endpoint: str = "chat"                     # "chat": server renders; "completions": client renders
    kv_cache_dtype: str = "auto"               # --kv-cache-dtype
    calculate_kv_scales: bool = False          # --calculate-kv-scales


# --8<-- [start:effective]
def effective(dep: Deployment) -> dict:
    """What the engine will do: template hash, leading BOS count, stop ids, default sampling."""
    d = Path(dep.model_dir)
    tok = _read_json(d / "tokenizer_config.json")
    ids = {v["content"]: int(k) for k, v in tok.get("added_tokens_decoder", {}).items()}
    # Chat template: the --chat-template file wins over the tokenizer's (chat_utils.resolve_hf_chat_template).
    template = dep.chat_template.read_text(encoding="utf-8") if dep.chat_template else tok.get("chat_template")
    if template is None:
        raise ValueError(f"{d / 'tokenizer_config.json'}: no chat_template and no --chat-template given")
    bos = tok.get("bos_token", "")
    prompt = render_chat(template, GOLDEN, bos_token=bos)
    leading_bos = 0
    while bos and prompt.startswith(bos * (leading_bos + 1)):
        leading_bos += 1
    # /v1/completions tokenizes with add_special_tokens=True by default, /v1/chat/completions with False
    # (vllm/entrypoints/openai/protocol.py); the tokenizer then prepends BOS if it is configured to.
    if dep.endpoint == "completions" and tok.get("add_bos_token", False):
        leading_bos += 1
    # Generation config: loaded from the model for "auto" AND "vllm" (eos ids), from the folder otherwise.
    gen_dir = d if dep.generation_config in ("auto", "vllm") else Path(dep.generation_config)
    gen_path = gen_dir / "generation_config.json"
    # Without the file, vLLM 0.11 (transformers_utils/config.py try_get_generation_config) builds one from
    # config.json (GenerationConfig.from_model_config): its eos_token_id and any sampling keys it holds.
    gen = _read_json(gen_path) if gen_path.exists() else _read_json(d / "config.json")
    sampling_src = {} if dep.generation_config == "vllm" else dict(gen)
    sampling_src.update(dep.override_generation_config)
    sampling = {k: sampling_src[k] for k in SAMPLING_KEYS if sampling_src.get(k) is not None}
    if "max_new_tokens" in sampling:
        sampling["max_tokens"] = sampling.pop("max_new_tokens")
    # Stop ids: tokenizer eos plus generation_config eos_token_id (SamplingParams.update_from_generation_config).
    eos = gen.get("eos_token_id", [])
    stop = {ids[tok["eos_token"]]} if tok.get("eos_token") in ids else set()
    stop |= {eos} if isinstance(eos, int) else set(eos)
    fp8_unscaled = dep.kv_cache_dtype.startswith("fp8") and "e5m2" not in dep.kv_cache_dtype \
        and not dep.calculate_kv_scales
    return {"chat_template_sha256": hashlib.sha256(template.encode()).hexdigest()[:12],
            "prompt": prompt, "leading_bos": leading_bos, "stop_token_ids": sorted(stop),
            "sampling_defaults": sampling, "kv_cache_dtype": dep.kv_cache_dtype,
            "fp8_kv_scale_1.0_risk": fp8_unscaled}
# --8<-- [end:effective]


# --8<-- [start:diff]
def diff(reference: Deployment, served: Deployment) -> list[Finding]:
    """Every plumbing difference between the deployment that was evaluated and the one serving."""
    a, b = effective(reference), effective(served)
    out = []
    if a["prompt"] != b["prompt"]:
        i = next((k for k, (x, y) in enumerate(zip(a["prompt"], b["prompt"])) if x != y),
                 min(len(a["prompt"]), len(b["prompt"])))
        out.append(Finding("1 chat template", f"template {a['chat_template_sha256']} vs "
                           f"{b['chat_template_sha256']}; prompt differs at character {i}: "
                           f"{a['prompt'][i:i + 16]!r} vs {b['prompt'][i:i + 16]!r}"))
    if a["leading_bos"] != b["leading_bos"]:
        out.append(Finding("2 special tokens", f"prompt starts with {a['leading_bos']} vs {b['leading_bos']} BOS"))
    if a["stop_token_ids"] != b["stop_token_ids"]:
        out.append(Finding("3 stop tokens", f"{a['stop_token_ids']} vs {b['stop_token_ids']}"))
    if a["sampling_defaults"] != b["sampling_defaults"]:
        out.append(Finding("4 sampling defaults", f"{a['sampling_defaults']} vs {b['sampling_defaults']}"))
    if a["kv_cache_dtype"] != b["kv_cache_dtype"] or b["fp8_kv_scale_1.0_risk"]:
        risk = " with scales defaulting to 1.0 unless the checkpoint has them" if b["fp8_kv_scale_1.0_risk"] else ""
        out.append(Finding("5 numerics", f"KV cache {a['kv_cache_dtype']} vs {b['kv_cache_dtype']}{risk}: "
                           "run the evaluation"))
    return out
# --8<-- [end:diff]


if __name__ == "__main__":  # python -m examples.operations.plumbing REFERENCE_DIR SERVED_DIR
    import sys
    for f in diff(Deployment(Path(sys.argv[1])), Deployment(Path(sys.argv[2]))):
        print(f)
