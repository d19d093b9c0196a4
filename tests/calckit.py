"""Parity harness for the sizing calculator: cases generated in Python, their results from the Python
engine (sitebuild.calcsheet, sitebuild.hfconfig) and from the browser engine (calc-engine.js in
Chromium, one page, one batch), and the comparison that reports every difference."""

from __future__ import annotations

import copy
import json
import math
import random
from pathlib import Path

from macros.catalog import load_catalog
from sitebuild.calcsheet import custom_gpu, evaluate
from sitebuild.calculator import export_model
from sitebuild.hfconfig import parse_config

CONFIGS = Path(__file__).parent / "calculator_configs"
REL = 1e-9
SEED = 20261201


def fixture_configs() -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text(encoding="utf-8")) for p in sorted(CONFIGS.glob("*.json"))}


# Ways to break a real config, each aimed at one check of the reader.
def _broken(cfg: dict, i: int) -> dict:
    top = copy.deepcopy(cfg)
    c = top.get("text_config", top)  # a wrapped config (Kimi K3) is broken inside its text model
    kind = i % 10
    if kind == 0:
        c.pop("num_hidden_layers")
    elif kind == 1:
        c["hidden_size"] = "4096"
    elif kind == 2:
        c["num_attention_heads"] = 0
    elif kind == 3:
        c["layer_types"] = ["full_attention"] * (c["num_hidden_layers"] - 1)
    elif kind == 4:
        c["layer_types"] = ["full_attention"] * (c["num_hidden_layers"] - 1) + ["mamba"]
    elif kind == 5:
        c["attention_chunk_size"] = 8192
    elif kind == 6:
        top["quantization_config"] = {"quant_method": "compressed-tensors"}
    elif kind == 7:
        c.pop("num_key_value_heads")
        c.pop("head_dim", None)
        c.pop("tie_word_embeddings", None)
    elif kind == 8:
        top = {"text_config": top, "model_type": "wrapper"}
    else:
        c["vocab_size"] = -5
    return top


def cases() -> list[dict]:
    """Every catalog model x GPU x format, random settings, and the pasted-config path."""
    cat = load_catalog()
    rng = random.Random(SEED)
    models, gpus, fmts = list(cat.models.values()), list(cat.gpus), list(cat.formats)
    kvs = cat.kv_formats()

    def settings(m) -> dict:
        return {"ctx": rng.randint(1, int(m.max_position_embeddings * 1.25)), "conc": rng.choice(
            [1, 2, 4, 8, 16, 32, 64, 128, 256, rng.randint(1, 1000)]), "util": round(rng.uniform(0.3, 1.0), 4),
            "mfu": round(rng.uniform(0.2, 0.9), 3)}

    out: list[dict] = []
    for mi, m in enumerate(models):
        for gi, g in enumerate(gpus):
            for fi, f in enumerate(fmts):
                expert = rng.choice([None, "mxfp4", "int4-g128", "fp8"]) if m.moe else None
                out.append({"kind": "grid", "model": m.key, "gpu": g, "fmt": f, "kv": kvs[(mi + fi) % len(kvs)],
                            "expert": expert, "n": (1, 2, 4, 8)[(mi + gi + fi) % 4], **settings(m)})
    for _ in range(600):
        m = rng.choice(models)
        gpu = rng.choice(gpus) if rng.random() < 0.7 else {
            "memory_bytes": rng.choice([16e9, 24e9, 48e9, 80e9, 141e9, rng.uniform(8e9, 300e9)]),
            "memory_bandwidth_bytes_per_s": rng.uniform(3e11, 8e12), "bf16_dense_flops": rng.uniform(5e13, 2.5e15),
            "fp8_dense_flops": rng.choice([None, rng.uniform(1e14, 5e15)])}
        out.append({"kind": "random", "model": m.key, "gpu": gpu, "fmt": rng.choice(fmts), "kv": rng.choice(kvs),
                    "expert": rng.choice([None, rng.choice(fmts)]) if m.moe else None, "n": rng.randint(1, 16),
                    **settings(m)})
    for i, (key, cfg) in enumerate(fixture_configs().items()):
        m = cat.model(key)
        for j in range(10):
            out.append({"kind": "config", "config": cfg, "gpu": rng.choice(gpus), "fmt": rng.choice(fmts),
                        "kv": rng.choice(kvs), "expert": rng.choice([None, "mxfp4"]) if m.moe else None,
                        "n": rng.choice([1, 2, 4, 8, 3]), **settings(m)})
        for j in range(3):
            out.append({"kind": "broken-config", "config": _broken(cfg, i * 3 + j), "gpu": gpus[0], "fmt": "bf16",
                        "kv": "bf16", "expert": None, "n": 1, **settings(m)})
    llama = fixture_configs()["llama-3.1-8b"]
    for qc in QUANT_VARIANTS:  # quantization_config readings the fixtures do not carry
        out.append({"kind": "quant-config", "config": {**llama, "quantization_config": qc}, "gpu": gpus[0],
                    "fmt": "bf16", "kv": "bf16", "expert": None, "n": 1, **settings(cat.model("llama-3.1-8b"))})
    for bad in (None, [], "text", 42, {}):
        out.append({"kind": "broken-config", "config": bad, "gpu": gpus[0], "fmt": "bf16", "kv": "bf16",
                    "expert": None, "n": 1, "ctx": 8192, "conc": 1, "util": 0.9, "mfu": 0.5})
    return out


def _keys(pairs: list) -> list:
    return [p[0] for p in pairs]


QUANT_VARIANTS = [
    {"quant_method": "fbgemm_fp8", "modules_to_not_convert": ["lm_head"]},
    {"quant_method": "fbgemm_fp8", "modules_to_not_convert": ["model.layers.0.mlp.down_proj", "lm_head"]},
    {"quant_method": "compressed-tensors", "ignore": ["lm_head"],
     "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 8, "type": "float"}}}},
    {"quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*self_attn.*", "a", "b"],
     "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128, "symmetric": False}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 8, "type": "int"}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": 3, "type": "int"}}}},
    {"quant_method": "compressed-tensors", "config_groups": {}},
]


def python_result(case: dict) -> dict:
    cat = load_catalog()
    parse = None
    if case["kind"] in ("config", "broken-config", "quant-config"):
        res = parse_config(case["config"])
        model = res["model"]
        parse = {"model": export_model(model) if model else None, "found": res["found"],
                 "defaults": res["defaults"], "unread": _keys(res["unread"]), "errors": _keys(res["errors"]),
                 "notes": _keys(res["notes"]), "fmt": res["fmt"], "expert_fmt": res["expert_fmt"],
                 "source": res["source"]}
    else:
        model = cat.model(case["model"])
    g = case["gpu"]
    gpu = cat.gpu(g) if isinstance(g, str) else custom_gpu(g["memory_bytes"], g["memory_bandwidth_bytes_per_s"],
                                                          g["bf16_dense_flops"], g["fp8_dense_flops"])
    result = None
    if model is not None:
        expert = cat.format(case["expert"]) if case["expert"] else None
        result = evaluate(model, gpu, cat.format(case["fmt"]), cat.format(case["kv"]), expert, case["n"],
                          case["ctx"], case["conc"], case["util"], case["mfu"])
    return {"parse": parse, "result": result}


def python_results(all_cases: list[dict]) -> list[dict]:
    return [python_result(c) for c in all_cases]


JS_RUN = """(cases) => {
  const D = window.MSIB_CALC_DATA, E = window.MSIBCalcEngine;
  const by = (list) => Object.fromEntries(list.map((x) => [x.key, x]));
  const models = by(D.models), gpus = by(D.gpus), fmts = by(D.formats);
  const keys = (pairs) => pairs.map((p) => p[0]);
  return cases.map((c) => {
    let m = null, parse = null;
    if (c.kind === "config" || c.kind === "broken-config" || c.kind === "quant-config") {
      const r = E.parseConfig(c.config);
      m = r.model;
      parse = {model: r.model, found: r.found, defaults: r.defaults, unread: keys(r.unread), errors: keys(r.errors),
               notes: keys(r.notes), fmt: r.fmt, expert_fmt: r.expert_fmt, source: r.source};
    } else { m = models[c.model]; }
    const g = typeof c.gpu === "string" ? gpus[c.gpu] : Object.assign({key: "custom", name: "Custom GPU",
      int8_dense_ops: null, interconnect_bytes_per_s_per_direction: null, allreduce_latency_s: null}, c.gpu);
    const result = m ? E.evaluate(m, g, fmts[c.fmt], fmts[c.kv], c.expert ? fmts[c.expert] : null, c.n, c.ctx,
                                  c.conc, c.util, c.mfu, D.defaults) : null;
    return {parse: parse, result: result};
  });
}"""


def js_results(page, all_cases: list[dict]) -> list[dict]:
    """Run every case through the page's MSIBCalcEngine in one evaluate call."""
    return page.evaluate(JS_RUN, all_cases)


def _num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def mismatches(expected, actual, path: str = "") -> list[str]:
    """Every place where ``actual`` differs from ``expected``: numbers beyond a relative 1e-9, anything
    else by equality; missing or extra keys count."""
    if _num(expected) and _num(actual):
        if math.isfinite(expected) and math.isfinite(actual):
            scale = max(abs(expected), abs(actual))
            if abs(expected - actual) <= REL * scale:
                return []
        return [f"{path}: python {expected!r} != js {actual!r}"]
    if isinstance(expected, dict) and isinstance(actual, dict):
        out = [f"{path}.{k}: missing in js" for k in expected if k not in actual]
        out += [f"{path}.{k}: only in js" for k in actual if k not in expected]
        for k in expected:
            if k in actual:
                out += mismatches(expected[k], actual[k], f"{path}.{k}")
        return out
    if isinstance(expected, (list, tuple)) and isinstance(actual, (list, tuple)):
        if len(expected) != len(actual):
            return [f"{path}: python {list(expected)!r} != js {list(actual)!r}"]
        return [m for i, (e, a) in enumerate(zip(expected, actual)) for m in mismatches(e, a, f"{path}[{i}]")]
    if expected == actual and type(expected) is type(actual):
        return []
    return [f"{path}: python {expected!r} != js {actual!r}"]


def all_mismatches(expected: list[dict], actual: list[dict]) -> list[str]:
    if len(expected) != len(actual):
        return [f"{len(expected)} python results but {len(actual)} js results"]
    return [m for i, (e, a) in enumerate(zip(expected, actual)) for m in mismatches(e, a, f"case {i}")]
