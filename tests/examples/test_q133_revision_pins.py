"""Q133: examples/operations/revision_pins.py on the fixture manifests and the fixture model directory.
The lock file's digests were written with coreutils ``sha256sum`` (the first value is repeated below)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from examples.operations.revision_pins import check_pins, parse_vllm_args, verify_snapshot

FIX = Path(__file__).resolve().parents[2] / "examples" / "operations" / "fixtures"


def test_parse_vllm_args_handles_positional_model_both_flag_forms_and_booleans() -> None:
    a = parse_vllm_args(["vllm", "serve", "org/m", "--revision", "abc", "--tokenizer-revision=def",
                         "--trust-remote-code", "--max-model-len", "4096"])
    assert a == {"model": "org/m", "revision": "abc", "tokenizer_revision": "def",
                 "trust_remote_code": True, "max_model_len": "4096"}


def test_unpinned_manifest_reports_each_moving_reference() -> None:
    found = [f.detail for f in check_pins(FIX / "pins" / "unpinned.yaml")]
    assert found == [
        "image 'vllm/vllm-openai:latest' is not pinned by digest",
        "model 'example-org/chat-model' revision None is not a commit hash",
        "tokenizer 'example-org/chat-tokenizer' revision None is not a commit hash",
        "draft model 'example-org/chat-draft' revision None is not a commit hash",
        "HF_HUB_OFFLINE is not set: a restart can reach the Hub",
    ]  # the log-shipper container is not a vLLM server and is skipped


def test_pinned_manifest_is_clean() -> None:
    assert check_pins(FIX / "pins" / "pinned.yaml") == []


@pytest.mark.parametrize("rev", ["main", "v1.0", "0123456", "0123456789ABCDEF0123456789ABCDEF01234567"])
def test_branch_tag_short_and_upper_case_hashes_are_not_pins(tmp_path: Path, rev: str) -> None:
    text = (FIX / "pins" / "pinned.yaml").read_text(encoding="utf-8")
    m = tmp_path / "m.yaml"
    m.write_text(text.replace("--revision=0123456789abcdef0123456789abcdef01234567", f"--revision={rev}"),
                 encoding="utf-8")
    expected = f"model 'example-org/chat-model' revision {rev!r} is not a commit hash"
    assert [f.detail for f in check_pins(m)] == [expected]


def test_offline_false_is_not_offline(tmp_path: Path) -> None:
    m = tmp_path / "m.yaml"
    m.write_text((FIX / "pins" / "pinned.yaml").read_text(encoding="utf-8").replace('value: "1"', 'value: "0"'),
                 encoding="utf-8")
    assert [f.detail for f in check_pins(m)] == ["HF_HUB_OFFLINE is not set: a restart can reach the Hub"]


def test_snapshot_matches_its_lock() -> None:
    lock = (FIX / "chat-model.lock.json").read_text(encoding="utf-8")
    assert "51eedc8212491db738ab2692bc0718c0903e367fdb275c43187b13fe3f7e203c" in lock   # sha256sum config.json
    assert verify_snapshot(FIX / "chat-model", FIX / "chat-model.lock.json") == []


def test_snapshot_drift_is_reported_file_by_file(tmp_path: Path) -> None:
    d = tmp_path / "chat-model"
    shutil.copytree(FIX / "chat-model", d)
    (d / "generation_config.json").unlink()
    (d / "tokenizer_config.json").write_text("{}", encoding="utf-8")
    (d / "extra.safetensors").write_bytes(b"")
    # sha256 of the two bytes "{}" is 44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a.
    assert [f.detail for f in verify_snapshot(d, FIX / "chat-model.lock.json")] == [
        "missing generation_config.json",
        "not in the lock: extra.safetensors",
        "changed tokenizer_config.json: sha256 44136fa355b3, lock 52eb87ffe85d",
    ]


def test_lock_without_a_commit_revision_is_rejected(tmp_path: Path) -> None:
    lock = tmp_path / "bad.lock.json"
    lock.write_text('{"revision": "main", "files": {}}', encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.lock\.json: 'revision' must be a 40-character"):
        verify_snapshot(FIX / "chat-model", lock)
