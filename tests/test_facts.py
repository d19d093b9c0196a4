"""Engine facts: the extractors on small fixture trees shaped like each engine's source, the committed
snapshots against facts read by hand from the reference wheels, the releases file, the engine
defaults the sizing engine takes from the snapshot, the facts macros and the drift report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from macros.catalog.records import CatalogError
from macros.errors import MacroInputError
from macros.facts import Facts, Release, facts, load_snapshot, release, releases
from macros.facts import defaults as D
from macros.facts.extract import sglang as sglang_x
from macros.facts.extract import vllm as vllm_x
from macros.facts.extract.astkit import ExtractError
from macros.facts.snapshot import dumps, extract_release
from macros.render import MACROS

FIXTURES = Path(__file__).parent / "facts_fixtures"


@pytest.fixture(scope="module")
def mini_vllm():
    return vllm_x.extract(FIXTURES / "vllm_mini")


@pytest.fixture(scope="module")
def mini_sglang():
    return sglang_x.extract(FIXTURES / "sglang_mini")


# --- the vLLM extractor -------------------------------------------------------------------------------

def test_vllm_flag_default_comes_from_the_config_field(mini_vllm):
    (d,) = mini_vllm["flags"]["--gpu-memory-utilization"]
    assert d["default"] == "0.92"
    assert d["field"] == "CacheConfig.gpu_memory_utilization"
    assert (d["file"], d["line"]) == ("vllm/config/cache.py", 13)
    assert d["aliases"] == ["--device-memory-utilization"]
    assert d["command"] == "serve"


def test_vllm_literal_alias_gives_choices_and_open_literal_gives_suggestions(mini_vllm):
    (evict,) = mini_vllm["flags"]["--eviction"]
    assert evict["choices"] == ["'lru'", "'fifo'"]
    (kv,) = mini_vllm["flags"]["--kv-cache-dtype"]
    assert kv["choices"] is None  # CacheDType | str: any string is accepted
    assert kv["suggested"] == ["'auto'", "'fp8'", "'fp8_e4m3'"]


def test_vllm_default_written_at_registration_overrides_and_keeps_the_field_default(mini_vllm):
    (pc,) = mini_vllm["flags"]["--enable-prefix-caching"]
    assert pc["default"] == "None" and pc["field_default"] == "True"
    assert pc["negatable"] is True
    (swap,) = mini_vllm["flags"]["--swap-space"]
    assert swap["default"] == "8" and swap["field_default"] == "4"


def test_vllm_plain_flags_and_defaults_naming_another_field(mini_vllm):
    (st,) = mini_vllm["flags"]["--shutdown-timeout"]
    assert st["default"] == "0" and st["field"] is None
    (lr,) = mini_vllm["flags"]["--enable-log-requests"]
    assert lr["default"] == "False"          # EngineArgs.enable_log_requests, resolved
    assert lr["negatable"] is True


def test_vllm_frontend_loop_registers_every_field_of_the_class_and_its_subclasses(mini_vllm):
    assert mini_vllm["flags"]["--port"][0]["default"] == "8000"
    assert mini_vllm["flags"]["--uvicorn-log-level"][0]["default"] == "'info'"
    assert mini_vllm["flags"]["--disable-fastapi-docs"][0]["field"] == "FrontendArgs.disable_fastapi_docs"


def test_vllm_config_env_backends_quant(mini_vllm):
    assert mini_vllm["config"]["CacheConfig.DEFAULT_BLOCK_SIZE"]["default"] == "16"
    assert mini_vllm["config"]["CacheConfig.extra"]["default"] == "dict()"
    assert "CacheConfig._private" not in mini_vllm["config"]
    env = mini_vllm["env"]
    assert set(env) == {"VLLM_HOST_IP", "VLLM_LOGGING_LEVEL", "VLLM_WORKER_MULTIPROC_METHOD"}
    assert env["VLLM_LOGGING_LEVEL"]["default"] == "'INFO'"
    assert env["VLLM_WORKER_MULTIPROC_METHOD"]["choices"] == ["'spawn'", "'fork'"]
    assert set(mini_vllm["env_unregistered"]) == {"VLLM_METRICS_PORT"}
    assert set(mini_vllm["attention_backends"]) == {"FLASH_ATTN", "FLASHINFER"}
    q = mini_vllm["quantization_methods"]
    assert set(q) == {"awq", "fp8", "fbgemm_fp8"} and q["fbgemm_fp8"]["deprecated"] and not q["fp8"]["deprecated"]


def test_vllm_metrics_with_type_and_condition(mini_vllm):
    m = mini_vllm["metrics"]
    assert set(m) == {"vllm:num_requests_running", "vllm:prompt_tokens", "vllm:time_to_first_token_seconds",
                      "vllm:gpu_cache_usage_perc", "vllm:spec_decode_num_drafts",
                      "vllm:spec_decode_num_accepted_tokens", "vllm:cache_config_info"}  # not "vllm::unified_attention"
    assert m["vllm:spec_decode_num_accepted_tokens"]["type"] == "counter"      # from the list's name
    assert m["vllm:spec_decode_num_drafts"]["documentation"] == "Number of drafts."
    assert m["vllm:cache_config_info"]["type"] == "gauge"                      # from the constructor taking it
    assert m["vllm:cache_config_info"]["condition"] == "kind == 'cache_config'"
    assert m["vllm:prompt_tokens"]["type"] == "counter"
    assert m["vllm:time_to_first_token_seconds"]["type"] == "histogram"
    assert m["vllm:gpu_cache_usage_perc"]["condition"] == "show_hidden"
    assert m["vllm:num_requests_running"]["condition"] is None


def test_vllm_log_lines_at_info_and_above(mini_vllm):
    logs = mini_vllm["log_lines"]
    assert "Model loading took %.4f GiB and %.6f seconds" in logs
    assert "Available KV cache memory: %.2f GiB" in logs           # implicit concatenation joined
    assert logs["GPU KV cache size: {…} tokens"]["level"] == "warning"  # f-string placeholders
    assert not any("debug line" in t for t in logs)
    assert "short" not in logs


def test_vllm_batch_default_tiers(mini_vllm):
    tiers = mini_vllm["batch_defaults"]
    assert [t["when"] for t in tiers] == ["device_memory >= 160 * GiB_bytes",
                                          "device_memory >= 70 * GiB_bytes and 'a100' not in device_name", None]
    assert [t["max_num_batched_tokens"]["OPENAI_API_SERVER"] for t in tiers] == [16384, 8192, 2048]
    assert [t["max_num_seqs"]["LLM_CLASS"] for t in tiers] == [1024, 1024, 256]


def test_extractor_names_the_file_when_the_source_moved(tmp_path):
    (tmp_path / "vllm").mkdir()
    (tmp_path / "vllm" / "__init__.py").write_text("")
    with pytest.raises(ExtractError, match=r"vllm/envs.py: expected file is missing"):
        vllm_x.extract(tmp_path)
    with pytest.raises(ExtractError, match="package folder not found"):
        vllm_x.extract(tmp_path / "nowhere")


# --- the SGLang extractor -----------------------------------------------------------------------------

def test_sglang_field_flags(mini_sglang):
    f = mini_sglang["flags"]
    assert f["--mem-fraction-static"][0]["default"] == "None"
    assert f["--schedule-policy"][0]["choices"] == ["'fcfs'", "'lpm'"]
    assert f["--attention-backend"][0]["choices"] == ["'flashinfer'", "'fa3'", "'triton'"]
    assert f["--tp-size"][0]["aliases"] == ["--tensor-parallel-size"]
    assert "--model-path" in f and f["--model-path"][0]["aliases"] == ["--model"]
    assert "--internal" not in f and "--attn-tp-size" not in f
    assert mini_sglang["config"]["Schedule.internal"]["default"] == "0"


def test_sglang_manual_flags_resolve_declared_defaults(mini_sglang):
    (sb,) = mini_sglang["flags"]["--sampling-backend"]
    assert sb["default"] == "'fcfs'" and sb["choices"] == ["'flashinfer'", "'pytorch'"]
    assert sb["file"] == "sglang/srt/arg_groups/fields/schedule.py"
    assert mini_sglang["flags"]["--enable-metrics"][0]["default"] == "False"


def test_sglang_env_metrics_choices(mini_sglang):
    assert mini_sglang["env"]["SGLANG_DETOKENIZER_MAX_STATES"]["default"] == "1 << 16"
    assert mini_sglang["env"]["SGLANG_ENABLE_TORCH_COMPILE"]["type"] == "EnvBool"
    assert set(mini_sglang["env_unregistered"]) == {"SGLANG_LEGACY_FLAG"}
    assert set(mini_sglang["metrics"]) == {"sglang:num_running_reqs"}
    assert list(mini_sglang["attention_backends"]) == ["flashinfer", "fa3", "triton"]
    assert list(mini_sglang["quantization_methods"]) == ["fp8", "awq"]
    assert "max_total_num_tokens={…}, chunked_prefill_size={…}" in mini_sglang["log_lines"]


# --- snapshots: determinism and the committed ones ----------------------------------------------------

def test_snapshot_text_is_deterministic_and_valid_json(tmp_path):
    rel = release("vllm")
    a = dumps(extract_release(rel, source=FIXTURES / "vllm_mini"))
    b = dumps(extract_release(rel, source=FIXTURES / "vllm_mini"))
    assert a == b
    data = json.loads(a)
    assert data["schema"] == 1 and data["engine"] == "vllm"
    # one fact per line: every flag starts a line of its own
    assert sum(1 for line in a.splitlines() if line.startswith('  "--')) == len(data["flags"])
    path = tmp_path / "x.json"
    path.write_text(a)
    assert load_snapshot(path)["flags"] == data["flags"]


def test_broken_snapshot_names_the_file(tmp_path):
    bad = tmp_path / "vllm-9.json"
    bad.write_text('{"schema": 1, "flags": {}}')
    with pytest.raises(CatalogError, match=r"vllm-9.json: missing section\(s\)"):
        load_snapshot(bad)
    bad.write_text("{not json")
    with pytest.raises(CatalogError, match=r"vllm-9.json:1: not valid JSON"):
        load_snapshot(bad)


def test_committed_snapshots_hold_what_the_reference_wheels_say():
    """Read by hand from the unpacked wheels of vLLM 0.33.0 and SGLang 0.5.23."""
    v = facts("vllm")
    assert v.release.version == "0.33.0"
    name, d = v.flag("--gpu-memory-utilization")
    assert d["default"] == "0.92" and (d["file"], d["line"]) == ("vllm/config/cache.py", 215)
    assert v.flag("--attention-backend")[1]["field"] == "AttentionConfig.backend"
    assert v.flag("--shutdown-timeout")[1]["default"] == "0"
    assert v.flag("-tp")[0] == "--tensor-parallel-size"
    assert v.flag_name("--max_model_len") == "--max-model-len"
    assert not v.has_env("VLLM_ATTENTION_BACKEND")
    assert v.has_env("VLLM_BATCH_INVARIANT")
    assert v.metric("vllm:num_requests_running")[1]["type"] == "gauge"
    assert "FLASH_ATTN" in v.data["attention_backends"]
    assert v.data["config"]["CacheConfig.DEFAULT_BLOCK_SIZE"]["default"] == "16"
    s = facts("sglang")
    assert s.release.version == "0.5.23"
    assert s.flag("--mem-fraction-static")[1]["default"] == "None"
    assert s.flag("--tensor-parallel-size")[0] == "--tp-size"
    assert "fa3" in s.data["attention_backends"]


# --- the releases file --------------------------------------------------------------------------------

def test_reference_releases_are_named_and_dated():
    table = releases()
    for key in ("vllm", "sglang", "lmcache", "pytorch", "transformers", "onnxruntime", "kserve", "dynamo",
                "tensorrt-llm", "llama.cpp", "kubernetes", "prometheus"):
        assert key in table
    assert release("vllm").label == "vLLM 0.33.0"
    assert release("sglang").source_url("sglang/srt/server_args.py", 3) == (
        "https://github.com/sgl-project/sglang/blob/v0.5.23/python/sglang/srt/server_args.py#L3")
    with pytest.raises(ValueError, match="unknown engine or library 'vlm'"):
        release("vlm")


@pytest.mark.parametrize("entry,message", [
    ("  - {key: x, name: X, version: 1, date: soon, source: 'https://a', repo: 'https://b', tag: v1}",
     "x: date: expected YYYY-MM-DD"),
    ("  - {key: x, name: X, version: 1, date: 2026-01-01, repo: 'https://b', tag: v1}", "x: source: required"),
    ("  - {key: x, name: X, version: 1, date: 2026-01-01, source: 'https://a', repo: 'https://b', tag: v1, "
     "colour: red}", "unknown field"),
    ("  - {key: x, name: X, version: 1, date: 2026-01-01, source: 'http://a', repo: 'https://b', tag: v1}",
     "source: expected an https"),
])
def test_bad_releases_file_names_file_and_field(tmp_path, entry, message):
    path = tmp_path / "releases.yaml"
    path.write_text("releases:\n" + entry + "\n")
    with pytest.raises(CatalogError, match=message) as exc:
        releases(path)
    assert "releases.yaml" in str(exc.value)


# --- engine defaults from the snapshot ----------------------------------------------------------------

def test_sizing_defaults_come_from_the_reference_release():
    from macros.formulas import memory
    assert memory.DEFAULT_GPU_UTILIZATION == 0.92
    assert memory.DEFAULT_BLOCK_SIZE == 16
    assert memory.DEFAULT_MAX_NUM_BATCHED_TOKENS == 8192
    assert D.gpu_memory_utilization().source.endswith("/vllm/config/cache.py#L215")


@pytest.mark.parametrize("gib,name,tokens,seqs", [
    (79.2, "NVIDIA H100 80GB HBM3", 8192, 1024),
    (79.2, "NVIDIA A100-SXM4-80GB", 2048, 256),      # the A100 is kept on the small tier
    (178.4, "NVIDIA B200", 16384, 1024),
    (139.8, "NVIDIA H200", 8192, 1024),
    (23.5, "NVIDIA GeForce RTX 4090", 2048, 256),
])
def test_batch_default_tiers_by_gpu(gib, name, tokens, seqs):
    got = D.batch_defaults(gib * 2**30, name)
    assert (got.max_num_batched_tokens, got.max_num_seqs) == (tokens, seqs)


def test_gb10_and_offline_defaults():
    assert D.batch_defaults(119 * 2**30, "NVIDIA GB10", is_gb10=True).max_num_batched_tokens == 2048
    assert D.batch_defaults(79.2 * 2**30, "NVIDIA H100", usage="LLM_CLASS").max_num_batched_tokens == 16384
    with pytest.raises(ValueError, match="unknown usage context"):
        D.batch_defaults(79.2 * 2**30, "H100", usage="BATCH")


def test_unknown_name_in_a_tier_condition_is_a_clear_error():
    with pytest.raises(ValueError, match="cannot evaluate 'sm_count'"):
        D._evaluate("sm_count >= 132", {"device_memory": 1})


# --- the facts macros ---------------------------------------------------------------------------------

def test_flag_macro_links_to_the_default_line():
    out = MACROS["flag"]("vllm", "--gpu-memory-utilization", default=True)
    assert out == ("[`--gpu-memory-utilization`](https://github.com/vllm-project/vllm/blob/v0.33.0/"
                   "vllm/config/cache.py#L215) (default `0.92`)")
    assert MACROS["flag_default"]("sglang", "--mem-fraction-static").startswith("[`None`](https://github.com/"
                                                                                  "sgl-project/sglang/blob/v0.5.23/")


def test_field_default_links_to_the_config_field_not_the_flag_registration():
    snap = json.loads((Path(__file__).parents[1] / "macros/catalog/facts/vllm-0.33.0.json").read_text())
    cfg = snap["config"]["CacheConfig.enable_prefix_caching"]
    out = MACROS["flag_default"]("vllm", "--enable-prefix-caching", field=True)
    assert out.startswith("[`True`](") and out.endswith(f"/{cfg['file']}#L{cfg['line']})")
    assert "arg_utils.py" in MACROS["flag_default"]("vllm", "--enable-prefix-caching")


def test_facts_macros_reject_names_the_release_lacks():
    with pytest.raises(MacroInputError, match=r"vLLM 0.33.0 has no flag '--gpu-memory-utilisation' "
                                              r"\(did you mean --gpu-memory-utilization"):
        MACROS["flag"]("vllm", "--gpu-memory-utilisation")
    with pytest.raises(MacroInputError, match="has no env"):
        MACROS["env_var"]("vllm", "VLLM_ATTENTION_BACKEND")
    with pytest.raises(MacroInputError, match="has no metric"):
        MACROS["metric"]("vllm", "vllm:num_requests_running_total")  # a gauge has no _total series
    with pytest.raises(MacroInputError, match="unknown engine"):
        MACROS["flag"]("vlm", "--port")


def test_gone_asserts_absence():
    assert MACROS["gone"]("vllm", "VLLM_ATTENTION_BACKEND") == "`VLLM_ATTENTION_BACKEND`"
    with pytest.raises(MacroInputError, match="is still in vLLM 0.33.0"):
        MACROS["gone"]("vllm", "--attention-backend")


def test_metric_accepts_series_names_of_its_type():
    counters = [n for n, r in facts("vllm").data["metrics"].items() if r["type"] == "counter"]
    assert counters
    assert MACROS["metric"]("vllm", counters[0] + "_total").startswith(f"[`{counters[0]}_total`]")


def test_log_line_needs_a_unique_fragment():
    out = MACROS["log_line"]("vllm", "Model loading took")
    assert out.startswith("[`Model loading took") and "GiB" in out
    with pytest.raises(MacroInputError, match="logs no line containing"):
        MACROS["log_line"]("vllm", "This line was never logged by anyone")
    with pytest.raises(MacroInputError, match="log lines contain"):
        MACROS["log_line"]("vllm", "GiB")


def test_engine_src_checks_the_file_exists():
    assert MACROS["engine_src"]("vllm", "vllm/config/cache.py", line=215).endswith("cache.py#L215)")
    with pytest.raises(MacroInputError, match="has no file"):
        MACROS["engine_src"]("vllm", "vllm/config/caches.py")


def test_release_macros():
    assert MACROS["release"]("sglang") == "SGLang 0.5.23"
    assert MACROS["version"]("vllm") == "0.33.0"


def test_facts_object_rejects_an_engine_without_a_snapshot():
    with pytest.raises(ValueError, match="no facts snapshot is kept"):
        facts("kubernetes")
    assert isinstance(facts("vllm"), Facts) and isinstance(release("vllm"), Release)
