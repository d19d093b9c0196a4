"""`python -m macros.size`: the deployment ledger in the terminal, with vLLM's flag names."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from macros.size import main, size

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "calculator_configs"
GIB = 2**30


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "macros.size", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_the_ledger_reproduces_the_logged_gpt_oss_load_on_one_h100():
    # vllm-project/vllm#23278, one H100, MXFP4 experts on Marlin, --gpu-memory-utilization 0.9 (then the default):
    # "Model loading took 65.9651 GiB and 12.799889 seconds"
    out = _run("gpt-oss-120b", "--mxfp4-backend", "marlin", "--gpu-memory-utilization", "0.9")
    assert out.returncode == 0, out.stderr
    first = out.stdout.splitlines()[0]
    assert first.startswith("Model loading took ") and first.endswith(" GiB memory")
    assert float(first.split()[3]) == pytest.approx(65.9651, rel=0.03)
    assert "Maximum concurrency for 131,072 tokens per request" in out.stdout


def test_json_has_the_named_keys_and_says_why_a_model_does_not_load():
    out = _run("llama-3.1-70b", "--json")
    assert out.returncode == 0, out.stderr
    r = json.loads(out.stdout)
    for key in ("weights_bytes_per_gpu", "kv_bytes_per_token_per_gpu", "kv_cache_bytes_per_gpu", "kv_cache_tokens",
                "max_concurrency", "fits", "reasons"):
        assert key in r
    # BF16 70B on one H100: 70,553,706,496 x 2 bytes against 85,045,477,376 x 0.92
    assert r["weights_bytes_per_gpu"] == pytest.approx(70_553_706_496 * 2)
    assert r["fits"] is False and r["kv_cache_tokens"] == 0 and r["reasons"][0].startswith("does not load")
    # Llama-3.1-70B KV: 2 x 80 x 8 x 128 x 2 = 327,680 bytes per token; TP 4 holds a quarter
    r4 = size(["llama-3.1-70b", "--tensor-parallel-size", "4"])
    assert r4["kv_bytes_per_token_per_gpu"] == 327_680 / 4 and r4["fits"] is True


def test_kv_cache_memory_bytes_is_the_kv_budget_as_in_vllm():
    r = size(["llama-3.1-8b", "--kv-cache-memory-bytes", str(8 * GIB), "--max-model-len", "8192"])
    assert r["kv_cache_bytes_per_gpu"] == 8 * GIB
    # 8 GiB / (8,192 tokens x 131,072 bytes) = 8 requests, 65,536 tokens
    assert r["max_concurrency"] == pytest.approx(8.0) and r["kv_cache_tokens"] == 65_536


def test_a_config_json_path_sizes_like_the_catalog_key():
    by_path = size([str(CONFIGS / "llama-3.1-8b.json")])
    by_key = size(["llama-3.1-8b"])
    assert by_path["weights_bytes_per_gpu"] == pytest.approx(by_key["weights_bytes_per_gpu"])
    assert by_path["kv_cache_tokens"] == by_key["kv_cache_tokens"]


@pytest.mark.parametrize("args, needle", [
    (["llama-3.1-8b", "--kv-cache-dtype", "fp16"], "--kv-cache-dtype"),
    (["llama-3.1-8b", "--gpu", "h900"], "--gpu: 'h900'"),
    (["llama-3.1-8b", "--tensor-parallel-size", "3"], "--tensor-parallel-size"),
    (["llama-3.1-8b", "--engine", "vllm==0.11.0"], "--engine"),
    (["llama-3.1-8b", "--gpu-memory-utilization", "1.5"], "--gpu-memory-utilization"),
    (["llama-3.1-8b", "--quantization", "exl2"], "--quantization"),
    (["no-such-model"], "neither a catalog model key nor a file"),
])
def test_bad_flags_give_one_line_and_exit_2(args, needle, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and needle in err


def test_a_bad_config_json_names_the_field(tmp_path, capsys):
    cfg = json.loads((CONFIGS / "llama-3.1-8b.json").read_text(encoding="utf-8"))
    del cfg["num_attention_heads"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg), encoding="utf-8")
    assert main([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "num_attention_heads" in err and str(path) in err
    path.write_text("{not json", encoding="utf-8")
    assert main([str(path)]) == 2
    assert "not a readable JSON file" in capsys.readouterr().err
