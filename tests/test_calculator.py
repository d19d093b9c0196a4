"""The calculator's Python side: the catalog export (and its refusal of fields it cannot size), the
config.json reader on the fixtures and on the families' special cases, and the sheet against the
worked-example macros that show the same figures on question pages."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from calckit import fixture_configs
from macros.catalog import load_catalog
from macros.formulas.memory import DEFAULT_GPU_UTILIZATION as UTIL  # what the macros default to
from macros.render.budget import max_context, max_seqs
from macros.render.nodefit import node_fit
from macros.render.speed import decode_speed
from sitebuild.calcsheet import custom_gpu, evaluate
from sitebuild.calculator import (CalculatorExportError, calculator_payload, calculator_script, export_gpu,
                                  export_model)
from sitebuild.hfconfig import parse_config

SIZING = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
          "intermediate_size", "vocab_size", "tie_word_embeddings", "max_position_embeddings", "attention_bias",
          "moe", "mla", "linear_attention")


def test_payload_holds_the_whole_catalog():
    cat = load_catalog()
    data = calculator_payload(cat)
    assert [m["key"] for m in data["models"]] == list(cat.models)
    assert [g["key"] for g in data["gpus"]] == list(cat.gpus)
    assert [f["key"] for f in data["formats"]] == list(cat.formats)
    text = calculator_script(cat)
    assert text.startswith("window.MSIB_CALC_DATA=") and "</" not in text
    assert json.loads(text[len("window.MSIB_CALC_DATA="):-2])["defaults"]["block_size"] == 16


def _with_new_field(record, name: str, value):
    cls = dataclasses.make_dataclass(type(record).__name__, [(name, object, dataclasses.field(default=None))],
                                     bases=(type(record),), frozen=True)
    return cls(**{f.name: getattr(record, f.name) for f in dataclasses.fields(record)}, **{name: value})


def test_a_model_field_the_exporter_does_not_know_fails_with_the_entry_named():
    kimi = load_catalog().model("kimi-k2")
    latent = _with_new_field(kimi, "latent_moe", {"latent_dim": 1024})
    with pytest.raises(CalculatorExportError, match=r"models\[kimi-k2\]: field 'latent_moe' is not known"):
        export_model(latent)
    assert export_model(_with_new_field(kimi, "latent_moe", None)) == export_model(kimi)  # unused: fine


def test_a_new_field_inside_a_block_fails_too():
    ds = load_catalog().model("deepseek-v3")
    moe = _with_new_field(ds.moe, "latent_size", 2048)
    with pytest.raises(CalculatorExportError, match=r"models\[deepseek-v3\]\.moe: field 'latent_size'"):
        export_model(dataclasses.replace(ds, moe=moe))
    k3 = load_catalog().model("kimi-k3")
    kda = _with_new_field(k3.linear_attention.kda, "gate_lower_bound", -5.0)
    with pytest.raises(CalculatorExportError, match=r"models\[kimi-k3\]\.linear_attention\.kda: field 'gate_lower"):
        export_model(dataclasses.replace(k3, linear_attention=dataclasses.replace(k3.linear_attention, kda=kda)))
    gpu = _with_new_field(load_catalog().gpu("b200"), "fp4_dense_flops", 9e15)
    with pytest.raises(CalculatorExportError, match=r"gpus\[b200\]: field 'fp4_dense_flops'"):
        export_gpu(gpu)


@pytest.mark.parametrize("key", sorted(fixture_configs()))
def test_each_fixture_config_reads_back_as_its_catalog_entry(key):
    res = parse_config(fixture_configs()[key])
    assert res["errors"] == [], res["errors"]
    m, c = res["model"], load_catalog().model(key)
    assert {f: getattr(m, f) for f in SIZING} == {f: getattr(c, f) for f in SIZING}
    sw = (m.sliding_window.size, m.sliding_window.num_sliding_layers) if m.sliding_window else None
    assert sw == ((c.sliding_window.size, c.sliding_window.num_sliding_layers) if c.sliding_window else None)
    if key in FORMAT_NOT_READ:  # a quantization_config the reader names instead of guessing
        assert [u[0] for u in res["unread"]] == ["quantization_config"] and res["fmt"] == "bf16"
    else:
        assert (res["expert_fmt"] or res["fmt"]) == c.released_format


# Kimi K3 ships compressed-tensors (mxfp4-pack-quantized): which tensors it covers is in the checkpoint's
# config groups, so the reader leaves the format to the reader of the page.
FORMAT_NOT_READ = {"kimi-k3"}


def test_kimi_k3_config_reads_its_hybrid_and_latent_moe_fields():
    cfg = fixture_configs()["kimi-k3"]
    res = parse_config(cfg)
    la, moe = res["model"].linear_attention, res["model"].moe
    assert (la.num_linear_layers, la.state_bytes_per_layer) == (69, 6_512_640)  # FP32 recurrent + BF16 conv
    assert (moe.routed_expert_hidden_size, moe.latent_moe_use_norm, res["model"].mla.output_gate) == (3584, True, True)
    assert ["attn_res_block_size", "attention-residual vectors are not counted"] in res["notes"]
    text = cfg["text_config"]
    for change, text_in_error in (({"kda_layers": [1, 1]}, "distinct"), ({"kda_layers": [94]}, "past num_hidden"),
                                  ({"num_heads": 0}, "num_heads must be")):
        bad = parse_config({**text, "linear_attn_config": {**text["linear_attn_config"], **change}})
        assert bad["model"] is None and any(e[0] == "linear_attn_config" and text_in_error in e[1]
                                            for e in bad["errors"]), bad["errors"]
    bad = parse_config({**text, "routed_expert_hidden_size": 8192, "mla_use_output_gate": "yes"})
    assert {e[0] for e in bad["errors"]} == {"routed_expert_hidden_size", "mla_use_output_gate"}


LLAMA = fixture_configs()["llama-3.1-8b"]


@pytest.mark.parametrize("change, field, text", [
    ({"sliding_window": 4096, "model_type": "phi3"}, "sliding_window", "does not say which layers"),
    ({"use_sliding_window": True, "sliding_window": 4096, "model_type": "qwen2"}, "use_sliding_window", "not modelled"),
    ({"layer_types": ["full_attention"] * 31}, "layer_types", "lists 31 layers"),
    ({"num_key_value_heads": 64}, "num_key_value_heads", "exceeds num_attention_heads"),
    ({"hybrid_override_pattern": "M-M-"}, "hybrid_override_pattern", "Mamba"),
    ({"num_local_experts": 8}, "num_experts_per_tok", "required"),
])
def test_fields_it_cannot_interpret_are_named(change, field, text):
    res = parse_config({**LLAMA, **change})
    assert res["model"] is None
    assert any(e[0] == field and text in e[1] for e in res["errors"]), res["errors"]


def test_family_defaults_and_wrappers():
    assert parse_config({**LLAMA, "model_type": "qwen2", "attention_bias": False})["model"].attention_bias
    gemma = {k: v for k, v in LLAMA.items() if k != "tie_word_embeddings"}
    assert parse_config({**gemma, "model_type": "gemma2"})["model"].tie_word_embeddings is True
    assert parse_config({**gemma, "model_type": "llama"})["model"].tie_word_embeddings is False
    wrapped = parse_config({"model_type": "llava", "text_config": LLAMA})
    assert wrapped["source"] == "text_config" and wrapped["model"].hidden_size == 4096
    assert parse_config({**LLAMA, "full_attention_interval": 4, "linear_num_value_heads": 32,
                         "linear_num_key_heads": 16, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
                         "linear_conv_kernel_dim": 4})["model"].linear_attention.num_linear_layers == 24


@pytest.mark.parametrize("quant, fmt", [
    ({"quant_method": "awq", "bits": 4, "group_size": 128, "zero_point": True}, "int4-g128-zp"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True}, "int4-g128"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
      "bnb_4bit_use_double_quant": True}, "nf4-dq"),
    ({"quant_method": "fp8"}, "fp8"),
    ({"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0, "modules_to_not_convert": ["lm_head"]}, "fp8"),
    ({"quant_method": "compressed-tensors", "ignore": ["lm_head"],
      "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}}}, "fp8"),
    ({"quant_method": "compressed-tensors",
      "config_groups": {"g": {"weights": {"num_bits": 4, "type": "int", "group_size": 128}}}}, "int4-g128"),
])
def test_quantization_config_picks_the_format(quant, fmt):
    assert parse_config({**LLAMA, "quantization_config": quant})["fmt"] == fmt


def test_an_unknown_quantization_method_is_named_not_guessed():
    res = parse_config({**LLAMA, "quantization_config": {"quant_method": "exl2"}})
    assert res["model"] is not None and res["fmt"] == "bf16"  # from torch_dtype
    assert res["unread"][0][0] == "quantization_config" and "'exl2'" in res["unread"][0][1]


@pytest.mark.parametrize("model, gpu, fmt, n", [
    ("llama-3.1-70b", "h100-sxm", "fp8", 2), ("deepseek-v3", "h200-sxm", "fp8", 8),
    ("gemma-2-9b", "l4", "bf16", 1), ("qwen3-next-80b-a3b", "h100-sxm", "bf16", 2),
    ("gpt-oss-20b", "rtx-4090", "int4-g128", 1),
])
def test_the_sheet_gives_the_worked_examples_figures(model, gpu, fmt, n):
    cat = load_catalog()
    r = evaluate(cat.model(model), cat.gpu(gpu), cat.format(fmt), cat.format("bf16"), None, n, 8192, 1, UTIL)
    if r["max_sequences"]:
        assert f"{r['max_sequences']:,}" == max_seqs(model, gpu, fmt=fmt, n_gpus=n)
    else:  # never a bare 0: the macro says why none fits
        why = "does not load" if not r["fits"] else "one sequence of 8,192 tokens does not fit"
        assert max_seqs(model, gpu, fmt=fmt, n_gpus=n).startswith(why)
    if r["fits"]:
        assert max_context(model, gpu, fmt=fmt, n_gpus=n).startswith(f"{r['max_context']:,} tokens")
    else:
        assert max_context(model, gpu, fmt=fmt, n_gpus=n).startswith("does not load: the weights need")
    if n == 1 or cat.gpu(gpu).allreduce_latency_s:
        text = decode_speed(model, gpu, fmt=fmt, n_gpus=n, batch=1, context=8192)
        assert re.search(rf"at most {r['decode_per_sequence']:.3g}|at most {r['decode_per_sequence']:,.1f}", text)


def test_the_sheet_gives_kimi_k3s_node_fit_and_decode_figures():
    """KDA states split by TP while the MLA latent stays whole: the sheet follows node_fit and decode_speed."""
    cat = load_catalog()
    m, g, bf16 = cat.model("kimi-k3"), cat.gpu("b300"), cat.format("bf16")
    r = evaluate(m, g, bf16, bf16, cat.format("mxfp4"), 8, 131072, 1, UTIL)
    text = node_fit("kimi-k3", "b300", n_gpus=8, fmt="bf16", expert_fmt="mxfp4", context="128K")
    assert f"floor({r['kv_budget']:,.0f} / {r['kv_per_sequence_gpu']:,.0f}) = {r['max_sequences']:,}" in text
    r = evaluate(m, g, bf16, bf16, cat.format("mxfp4"), 8, 8192, 1, UTIL)
    text = decode_speed("kimi-k3", "b300", fmt="bf16", expert_fmt="mxfp4", n_gpus=8, batch=1, context=8192)
    assert f"at most {r['decode_per_sequence']:,.1f} tokens/s per sequence" in text


def test_a_custom_gpu_without_fp8_has_no_fp8_prefill():
    cat = load_catalog()
    r = evaluate(cat.model("llama-3.1-8b"), custom_gpu(24e9, 1e12, 165e12), cat.format("fp8"), cat.format("bf16"),
                 None, 1, 4096, 1, 0.9)
    assert "prefill_s" not in r and r["prefill_peak_label"] == "no FP8 tensor rate" and r["fits"]


def test_the_build_stops_on_a_field_the_calculator_cannot_export(monkeypatch):
    from types import SimpleNamespace

    from mkdocs.exceptions import PluginError

    from sitebuild import hooks
    from sitekit import ROOT

    def refuse(cat=None):
        raise CalculatorExportError("macros/catalog/models.yaml: models[kimi-k3]: field 'latent_moe' is not known")

    monkeypatch.setattr(hooks, "calculator_script", refuse)
    config = SimpleNamespace(docs_dir=str(ROOT / "docs"), nav=["index.md", hooks.NAV_PLACEHOLDER], extra={})
    with pytest.raises(PluginError, match=r"models\[kimi-k3\]: field 'latent_moe'"):
        hooks.on_config(config)


@pytest.mark.parametrize("name", ["calc-engine.js", "calculator.js", "fits-filter.js"])
def test_the_scripts_never_write_markup(name):
    """Pasted and linked text reaches the page through textContent only."""
    from sitekit import ROOT
    text = (ROOT / "docs" / "assets" / "javascripts" / name).read_text(encoding="utf-8")
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
        assert sink not in text, f"{name} uses {sink}"


def test_modules_left_in_16_bit_beyond_lm_head_are_named_not_hidden():
    # Meta's 405B FP8 config lists attention and two blocks' MLPs in modules_to_not_convert; the calculator's
    # one-format model prices them in FP8 and says so (macros.formulas.checkpoint sizes them exactly).
    q = {"quant_method": "fbgemm_fp8", "modules_to_not_convert": ["model.layers.0.mlp.down_proj",
                                                                    "model.layers.0.self_attn.k_proj", "lm_head"]}
    res = parse_config({**LLAMA, "quantization_config": q})
    assert res["fmt"] == "fp8"
    note = [n for k, n in res["notes"] if k == "quantization_config"]
    assert note and "model.layers.0.mlp.down_proj" in note[0] and "(2 in all)" in note[0] and "lower bound" in note[0]
    only_head = parse_config({**LLAMA, "quantization_config": {**q, "modules_to_not_convert": ["lm_head"]}})
    assert not [n for k, n in only_head["notes"] if k == "quantization_config"]
