"""Q113: examples/operations/intake.py on a fixture model directory. The two shards were written by the
safetensors library itself (0.6.2, ``safetensors.numpy.save_file``), so the parser is checked against real
files, not against files it wrote; each test breaks a copy the way a download or a repository breaks."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from examples.operations.intake import card_metadata, intake, safetensors_tensors

FIX = Path(__file__).resolve().parents[2] / "examples" / "operations" / "fixtures" / "intake" / "new-model"
SHARD1, SHARD2 = "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"


@pytest.fixture
def model(tmp_path: Path) -> Path:
    return Path(shutil.copytree(FIX, tmp_path / "new-model"))


def details(found) -> list[tuple[str, str]]:
    return [(f.severity, f.check) for f in found]


def test_real_safetensors_files_parse_to_their_tensor_sizes() -> None:
    # fp16 8x4 embedding (64 bytes) and 4x4 up_proj (32); fp16 4x4 down_proj (32) and fp32 norm of 4 (16)
    assert safetensors_tensors(FIX / SHARD1) == {"model.embed_tokens.weight": 64,
                                                 "model.layers.0.mlp.up_proj.weight": 32}
    assert safetensors_tensors(FIX / SHARD2) == {"model.layers.0.mlp.down_proj.weight": 32, "model.norm.weight": 16}


def test_the_fixture_needs_only_the_licence_reviews() -> None:
    found = intake(FIX)
    assert details(found) == [("review", "license"), ("review", "gated")]
    assert "example-community-license" in found[0].detail
    assert card_metadata(FIX)["license_link"] == "LICENSE"


def test_a_truncated_shard_is_a_blocker_naming_the_file(model: Path) -> None:
    data = (model / SHARD2).read_bytes()
    (model / SHARD2).write_bytes(data[:-10])
    found = intake(model)
    assert found[0].severity == "blocker" and found[0].check == "truncated"
    assert SHARD2 in found[0].detail and "truncated" in found[0].detail
    assert f"file has {len(data) - 10:,}" in found[0].detail


def test_a_missing_shard_and_a_header_cut_off_are_blockers(model: Path) -> None:
    (model / SHARD2).unlink()
    (model / SHARD1).write_bytes((model / SHARD1).read_bytes()[:20])
    found = [f for f in intake(model) if f.severity == "blocker"]
    assert [f.check for f in found] == ["truncated", "missing"]
    assert "header claims" in found[0].detail
    assert found[1].detail == f"1 of 2 shards present; missing: {SHARD2}"


def test_an_index_that_names_a_tensor_the_shard_lacks(model: Path) -> None:
    index = json.loads((model / "model.safetensors.index.json").read_text())
    index["weight_map"]["lm_head.weight"] = SHARD2
    index["metadata"]["total_size"] += 64
    (model / "model.safetensors.index.json").write_text(json.dumps(index))
    found = intake(model)
    assert ("blocker", "index") in details(found)
    assert ("review", "total_size") in details(found)


def test_pickle_weights_remote_code_and_templates(model: Path) -> None:
    (model / "pytorch_model.bin").write_bytes(b"\x80\x04not really a pickle")
    cfg = json.loads((model / "config.json").read_text())
    cfg["auto_map"] = {"AutoConfig": "configuration_x.XConfig", "AutoModelForCausalLM": "modeling_x.XForCausalLM"}
    (model / "config.json").write_text(json.dumps(cfg))
    (model / "chat_template.jinja").write_text("{{ messages[0]['content'] }}")
    found = details(intake(model))
    assert ("review", "pickle") in found and ("review", "remote-code") in found
    assert ("review", "chat-template") in found  # the .jinja file differs from the inline template
    # without safetensors the pickle is all there is: a blocker
    for p in model.glob("*.safetensors"):
        p.unlink()
    assert ("blocker", "pickle") in details(intake(model))


def test_no_template_no_license_no_weights(model: Path) -> None:
    (model / "README.md").unlink()
    tok = json.loads((model / "tokenizer_config.json").read_text())
    del tok["chat_template"]
    (model / "tokenizer_config.json").write_text(json.dumps(tok))
    for p in model.glob("*.safetensors"):
        p.unlink()
    (model / "model.safetensors.index.json").unlink()
    assert details(intake(model)) == [("blocker", "license"), ("blocker", "weights"), ("blocker", "chat-template")]


def test_bad_input_names_the_file(model: Path, tmp_path: Path) -> None:
    (model / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"config\.json: not valid JSON"):
        intake(model)
    (model / "README.md").write_text("---\nlicense: [unclosed\n---\n")
    with pytest.raises(ValueError, match=r"README\.md: model-card metadata is not valid YAML"):
        intake(model)
    with pytest.raises(ValueError, match="not a directory"):
        intake(tmp_path / "nope")
    (tmp_path / "x.safetensors").write_bytes(struct_header(b"not json at all!"))
    with pytest.raises(ValueError, match=r"x\.safetensors: header is not JSON"):
        safetensors_tensors(tmp_path / "x.safetensors")


def struct_header(payload: bytes) -> bytes:
    return len(payload).to_bytes(8, "little") + payload
