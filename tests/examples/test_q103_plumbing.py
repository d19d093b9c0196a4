"""Q103: examples/operations/plumbing.py on the fixture model directory. Expected values are read off
the fixture files by hand (comments), never produced by the code under test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from examples.operations.plumbing import Deployment, diff, effective

FIX = Path(__file__).resolve().parents[2] / "examples" / "operations" / "fixtures"
MODEL = FIX / "chat-model"
REF = Deployment(MODEL)


def _copy(tmp_path: Path, drop: str | None = None) -> Path:
    d = tmp_path / "model"
    shutil.copytree(MODEL, d)
    if drop:
        (d / drop).unlink()
    return d


def test_effective_reads_the_fixture_as_vllm_would() -> None:
    e = effective(REF)
    # The template starts with {{ bos_token }}; trim_blocks keeps the newline after each role tag.
    assert e["prompt"] == ("<s><|system|>\nAnswer in one word.<|end|>\n<|user|>\nCapital of France?<|end|>\n"
                           "<|assistant|>\n")
    assert e["leading_bos"] == 1
    # tokenizer eos "</s>" is id 2; generation_config.json adds [2, 7] (7 = "<|end|>").
    assert e["stop_token_ids"] == [2, 7]
    # temperature and top_p are sampling keys; do_sample and the token ids are not.
    assert e["sampling_defaults"] == {"temperature": 0.6, "top_p": 0.9}


def test_identical_deployments_have_no_findings() -> None:
    assert diff(REF, Deployment(MODEL)) == []


def test_missing_generation_config_loses_end_of_turn_stop_and_sampling_defaults(tmp_path: Path) -> None:
    served = Deployment(_copy(tmp_path, drop="generation_config.json"))
    found = {f.check: f.detail for f in diff(REF, served)}
    assert found == {"3 stop tokens": "[2, 7] vs [2]",
                     "4 sampling defaults": "{'temperature': 0.6, 'top_p': 0.9} vs {}"}


def test_missing_generation_config_falls_back_to_config_json(tmp_path: Path) -> None:
    d = _copy(tmp_path, drop="generation_config.json")
    cfg = (d / "config.json").read_text(encoding="utf-8")
    (d / "config.json").write_text(cfg.replace('"eos_token_id": 2', '"eos_token_id": [2, 7]'), encoding="utf-8")
    # The end-of-turn id 7 now comes from config.json; only the sampling defaults are lost.
    assert {f.check for f in diff(REF, Deployment(d))} == {"4 sampling defaults"}


def test_generation_config_vllm_keeps_stop_ids_but_drops_sampling_defaults() -> None:
    found = {f.check for f in diff(REF, Deployment(MODEL, generation_config="vllm"))}
    assert found == {"4 sampling defaults"}


def test_override_generation_config_merges_over_the_model_defaults() -> None:
    e = effective(Deployment(MODEL, override_generation_config={"temperature": 0.0, "max_new_tokens": 256}))
    assert e["sampling_defaults"] == {"temperature": 0.0, "top_p": 0.9, "max_tokens": 256}


def test_hand_copied_template_without_bos_is_caught_at_the_first_differing_character() -> None:
    served = Deployment(MODEL, chat_template=FIX / "hand-copied-template.jinja")
    found = {f.check: f.detail for f in diff(REF, served)}
    assert set(found) == {"1 chat template", "2 special tokens"}
    # "<s><|system|>" vs "<|system|>": both start with "<", so character 1 ("s" vs "|") is the first difference.
    assert "prompt differs at character 1: 's><|system|>\\nAns' vs '|system|>\\nAnswer'" in found["1 chat template"]
    assert found["2 special tokens"] == "prompt starts with 1 vs 0 BOS"


def test_client_rendered_prompt_on_completions_endpoint_gets_two_bos() -> None:
    # The rendered string already starts with <s>; /v1/completions adds special tokens by default.
    found = {f.check: f.detail for f in diff(REF, Deployment(MODEL, endpoint="completions"))}
    assert found == {"2 special tokens": "prompt starts with 1 vs 2 BOS"}


def test_fp8_kv_cache_is_flagged_and_the_unscaled_case_named() -> None:
    (f,) = diff(REF, Deployment(MODEL, kv_cache_dtype="fp8"))
    assert f.check == "5 numerics" and "scales defaulting to 1.0" in f.detail
    (g,) = diff(REF, Deployment(MODEL, kv_cache_dtype="fp8", calculate_kv_scales=True))
    assert "1.0" not in g.detail


def test_bad_files_are_named(tmp_path: Path) -> None:
    d = _copy(tmp_path)
    (d / "generation_config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"generation_config\.json: not valid JSON"):
        effective(Deployment(d))
    d2 = _copy(tmp_path / "b", drop="tokenizer_config.json")
    with pytest.raises(ValueError, match=r"tokenizer_config\.json: file not found"):
        effective(Deployment(d2))
