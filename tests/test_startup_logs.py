"""Published start-up logs (macros/catalog/startup_logs.yaml) reproduced by the sizing engine: weights
within 3% of "Model loading took", KV tokens within 2% given the logged KV memory; every figure that is
not reproduced carries its reason."""

from __future__ import annotations

import shutil

import pytest
import yaml

from macros.catalog import CATALOG_DIR, CATALOG_FILES, CatalogError
from macros.catalog.checkpoints import FILE as CKPT_FILE
from macros.render import MACROS
from macros.startup_logs import FILE, GIB, TOKENS_TOLERANCE, WEIGHTS_TOLERANCE, compare, load_logs, tokens_for

LOGS = load_logs()


@pytest.mark.parametrize("log", LOGS, ids=[log["key"] for log in LOGS])
def test_each_log_is_reproduced_or_says_why_not(log):
    c = compare(log)
    for figure, reason in c.gaps.items():
        assert reason.strip(), f"{log['key']}: {figure} is not reproduced and the entry gives no reason"
    if "weights" not in c.gaps:
        assert abs(c.weights_error) <= WEIGHTS_TOLERANCE
    if "kv_cache_tokens" not in c.gaps:
        assert abs(c.tokens_error) <= TOKENS_TOLERANCE
    # a reason for a figure that is in fact reproduced is stale and must go
    for figure in log["unreproduced"]:
        assert figure in c.gaps, f"{log['key']}: unreproduced.{figure} is stale, the figure is reproduced"


def test_the_logs_cover_dense_moe_fp8_mxfp4_tp_and_both_engines():
    assert len(LOGS) >= 6
    assert {log["engine"] for log in LOGS} == {"vllm", "sglang"}
    assert any(log["tensor_parallel_size"] > 1 for log in LOGS)
    assert {log["checkpoint"] for log in LOGS} >= {"gpt-oss-120b", "llama-3.1-405b-instruct-fp8", "llama-3.1-8b"}
    assert sum("kv_cache_tokens" not in compare(log).gaps for log in LOGS) >= 2


def test_v0_block_counts_are_reproduced_from_the_logged_kv_memory():
    # vllm#10517, RTX 3090: kv_cache_size=3.81GiB -> "GPU blocks: 1952"; 2 MiB per 16-token block of
    # Llama 3.1 8B (131,072 bytes per token) gives 1,950 blocks, 0.1% under (the log rounds to 0.01 GiB)
    c = next(compare(log) for log in LOGS if log["key"] == "vllm-10517-llama-3.1-8b-rtx3090-20k")
    assert c.log["logged"]["kv_cache_tokens"] == 1952 * 16
    assert c.tokens_from_logged_kv == 1950 * 16


def test_marlin_gpt_oss_and_llama_weights_match_and_the_h100_refusal_is_predicted():
    by_key = {log["key"]: compare(log) for log in LOGS}
    marlin = by_key["vllm-23278-gpt-oss-120b-h100-marlin"]
    # 65.9651 GiB logged; the Marlin-padded allocation is 65.90 GiB
    assert marlin.weights_error == pytest.approx(-0.001, abs=0.001)
    # the engine logged "Available KV cache memory: -2.14 GiB" and refused to start: so does the ledger
    assert marlin.fits is False
    # Llama 3 8B in BF16: 8,030,261,248 parameters x 2 bytes = 14.96 GiB, as logged
    tp1 = by_key["vllm-10511-llama-3-8b-h100-tp1"]
    assert tp1.weights_gib == pytest.approx(8_030_261_248 * 2 / GIB)
    assert abs(tp1.weights_error) < 0.001
    assert by_key["vllm-10511-llama-3-8b-h100-tp2"].weights_gib == pytest.approx(tp1.weights_gib / 2, rel=1e-4)


def test_kv_tokens_are_whole_blocks_of_the_logged_memory():
    # 53.29 GiB at 131,072 bytes per token (Llama 3 8B, BF16): 436,551 tokens, 27,284 blocks of 16
    assert tokens_for(53.29 * GIB, 131_072) == 27_284 * 16
    assert tokens_for(16 * 131_072 - 1, 131_072) == 0


def test_the_overhead_the_logs_state_differs_from_the_flat_allowance():
    # non-torch + activation peak: 1.79 + 1.26 at TP 1, 3.58 + 1.26 at TP 2 (NCCL buffers double the
    # non-torch share); the flat 2 + 1 GiB is 2% off the first and 38% under the second
    c1, c2 = (compare(log) for log in LOGS if log["key"].startswith("vllm-10511"))
    assert c1.non_kv_logged_gib == pytest.approx(3.05) and c2.non_kv_logged_gib == pytest.approx(4.84)
    assert c1.non_kv_allowance_gib == 3.0
    assert abs(c1.non_kv_allowance_gib / c1.non_kv_logged_gib - 1) < 0.02
    assert c2.non_kv_allowance_gib / c2.non_kv_logged_gib - 1 < -0.35


def test_the_accuracy_table_renders_every_log_with_its_source():
    out = MACROS["sizing_accuracy"]()
    for log in LOGS:
        assert log["url"] in out
    assert "3%" in out and "2%" in out
    assert "-5.6%" in out  # the Triton gpt-oss miss is shown, not hidden


@pytest.mark.parametrize("edit, needle", [
    (lambda e: e.update(model="llama-9"), "logs[vllm-23278-gpt-oss-120b-h100-marlin].model: 'llama-9'"),
    (lambda e: e.update(url="http://example.com/x"), ".url:"),
    (lambda e: e["logged"].update(weights_gib=65.0), "logged.weights_gib: 65.0 appears in none"),
    (lambda e: e.update(unreproduced={"speed": "x"}), "unreproduced.speed"),
])
def test_a_bad_entry_names_the_file_entry_and_field(tmp_path, edit, needle):
    for name in (*CATALOG_FILES, CKPT_FILE, FILE):
        shutil.copy(CATALOG_DIR / name, tmp_path / name)
    doc = yaml.safe_load((tmp_path / FILE).read_text(encoding="utf-8"))
    edit(doc["logs"][0])
    (tmp_path / FILE).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    with pytest.raises(CatalogError, match="startup_logs.yaml") as exc:
        load_logs(tmp_path)
    assert needle in str(exc.value)


def test_the_profile_run_estimate_follows_the_batch_but_misses_the_tp_runs():
    from macros import formulas as F
    from macros.catalog import load_catalog

    m = load_catalog().model("llama-3.1-8b")
    # 20,000 tokens x (3 x 14,336 + 3 x 4,096) x 2 bytes = 2,211,840,000 bytes
    assert F.profile_mlp_activation_bytes(m, 20_000) == 20_000 * (3 * 14_336 + 3 * 4_096) * 2
    assert F.profile_mlp_activation_bytes(m, 8_192, tp=2) < F.profile_mlp_activation_bytes(m, 8_192)
    with pytest.raises(ValueError, match="dense models only"):
        F.profile_mlp_activation_bytes(load_catalog().model("mixtral-8x7b"), 8_192)
    errors = {log["key"]: compare(log).activation_error for log in LOGS if log["logged"]["activation_gib"]}
    # the RTX 3090 pair (20,000 and 29,000 tokens, 2.07 and 2.99 GiB logged) within 1%
    assert all(abs(e) < 0.01 for k, e in errors.items() if "rtx3090" in k)
    # the H100 pair logs 1.26 GiB at TP 1 and TP 2 alike: the estimate is a third and 59% low there,
    # which is why the ledger keeps its flat allowance
    assert errors["vllm-10511-llama-3-8b-h100-tp1"] < -0.3 and errors["vllm-10511-llama-3-8b-h100-tp2"] < -0.5
