"""The calculator page and the what-fits filters in Chromium, online and from the offline bundle: the
figures equal the Python engine's, a shared URL reopens the same calculation (catalog model and pasted
config), bad input gets a message next to its field and never NaN or a blank, pasted text stays text,
and the page's own script and data stay within their size budget."""

from __future__ import annotations

import gzip
import json

import pytest

from calckit import CONFIGS
from macros.catalog import load_catalog
from macros.formulas.memory import DEFAULT_GPU_UTILIZATION
from sitebuild.calcsheet import evaluate
from sitekit import recording_page

BUDGET_GZIP = 40 * 1024
SCRIPTS = ("calc-engine.js", "calculator.js", "calculator-data.js")


@pytest.fixture(params=["online", "offline"])
def where(request, served_site, offline_site):
    """(calculator URL, what-fits URL) online or as files of the offline bundle."""
    if request.param == "online":
        return served_site + "calculator/", served_site + "reference/what-fits/"
    root = offline_site.as_uri() + "/"
    return root + "calculator.html", root + "reference/what-fits.html"


@pytest.fixture
def ctx(browser):
    context, pg = recording_page(browser)
    pg.errors = []
    pg.on("pageerror", lambda e: pg.errors.append(str(e)))
    yield pg
    context.close()


def results_text(pg) -> str:
    return pg.inner_text("#calc-results")


def assert_no_junk(pg):
    text = results_text(pg)
    assert text.strip(), "the results are blank"
    for junk in ("NaN", "undefined", "Infinity", "null"):
        assert junk not in text, f"{junk!r} in the results:\n{text}"
    assert not pg.errors, pg.errors


def set_inputs(pg, values: dict):
    for key, value in values.items():
        sel = f"[name={key}]"
        if pg.locator(sel).evaluate("e => e.tagName") == "SELECT":
            pg.select_option(sel, value)
        else:
            pg.fill(sel, value)


def test_default_figures_are_the_python_engine_s(where, ctx):
    ctx.goto(where[0])
    cat = load_catalog()
    r = evaluate(cat.model("llama-3.1-70b"), cat.gpu("h100-sxm"), cat.format("fp8"), cat.format("bf16"), None, 2,
                 8192, 16, DEFAULT_GPU_UTILIZATION)
    text = results_text(ctx)
    for section in ("r-params", "r-weights", "r-kv", "r-tp", "r-fit", "r-concurrency", "r-context", "r-decode",
                    "r-prefill"):
        assert ctx.locator(f"#{section} h2 button.msib-copy-link").count() == 1, section
    assert f"{r['max_sequences']:,} sequences of 8,192 tokens" in text
    assert f"{r['max_context']:,} tokens per sequence with 16 sequences" in text
    assert f"{r['params_total']:,} (70.55B) total" in text
    assert f"at most {r['decode_per_sequence']:.1f} tokens/s per sequence" in text
    assert_no_junk(ctx)


def test_shared_url_round_trip(where, ctx, browser):
    ctx.goto(where[0])
    set_inputs(ctx, {"m": "deepseek-v3", "g": "b200", "n": "8", "w": "fp8", "e": "int4-g128", "kv": "fp8",
                     "ctx": "32K", "c": "64", "u": "0.92", "mfu": "0.4"})
    text = results_text(ctx)
    assert "32,768 tokens" in text and "experts read per MoE layer" in text
    url = ctx.url
    assert "m=deepseek-v3" in url and "ctx=32K" in url
    assert ctx.locator("#r-decode h2 button").get_attribute("data-clipboard-text") == url + "#r-decode"
    other, pg = recording_page(browser)
    try:
        pg.goto(url + "#r-decode")
        assert results_text(pg) == text
        for key, value in {"m": "deepseek-v3", "g": "b200", "n": "8", "e": "int4-g128", "u": "0.92"}.items():
            assert pg.input_value(f"[name={key}]") == value
    finally:
        other.close()


def test_pasted_config_gives_the_catalog_figures_and_survives_the_link(where, ctx, browser):
    ctx.goto(where[0] + "?g=h100-sxm&n=1&kv=bf16&ctx=8192&c=4")
    ctx.select_option("[name=m]", "gpt-oss-120b")
    ctx.select_option("[name=w]", "bf16")
    ctx.select_option("[name=e]", "mxfp4")
    expected_text = results_text(ctx)
    ctx.select_option("[name=m]", "paste")
    ctx.fill("[name=cfg]", (CONFIGS / "gpt-oss-120b.json").read_text(encoding="utf-8"))
    # the checkpoint's quantization_config picks the formats: BF16, MXFP4 routed experts
    assert ctx.input_value("[name=w]") == "bf16" and ctx.input_value("[name=e]") == "mxfp4"
    assert results_text(ctx) == expected_text
    read = ctx.inner_text("#calc-config-read")
    assert "layer_types" in read and "moe_intermediate_size = 2880" in read
    other, pg = recording_page(browser)
    try:
        pg.goto(ctx.url)
        assert pg.input_value("[name=m]") == "paste"
        assert results_text(pg) == expected_text
    finally:
        other.close()


def test_kimi_k3_hybrid_figures_and_its_pasted_config(where, ctx):
    """Latent MoE, KDA layers split by TP, gated MLA: the catalog entry and its pasted config.json agree with
    the Python sheet (and so with node_fit on the trillion-parameter page)."""
    cat = load_catalog()
    r = evaluate(cat.model("kimi-k3"), cat.gpu("b300"), cat.format("bf16"), cat.format("bf16"),
                 cat.format("mxfp4"), 8, 131072, 1, 0.9)
    ctx.goto(where[0] + "?m=kimi-k3&g=b300&n=8&w=bf16&e=mxfp4&kv=bf16&ctx=128K&c=1&u=0.9")
    expected_text = results_text(ctx)
    assert f"{r['params_total']:,} (" in expected_text and "latent-MoE projections" in expected_text
    assert f"{r['max_sequences']:,} sequences of 131,072 tokens" in expected_text
    assert f"at most {r['decode_per_sequence']:,.0f} tokens/s per sequence" in expected_text
    assert_no_junk(ctx)
    ctx.select_option("[name=m]", "paste")
    ctx.fill("[name=cfg]", (CONFIGS / "kimi-k3.json").read_text(encoding="utf-8"))
    assert "quantization_config" in ctx.inner_text("#calc-config-read")  # named, not guessed
    ctx.select_option("[name=e]", "mxfp4")
    assert results_text(ctx) == expected_text
    assert_no_junk(ctx)


LLAMA = json.loads((CONFIGS / "llama-3.1-8b.json").read_text(encoding="utf-8"))
BAD_CONFIGS = [
    pytest.param("{not json", "cfg", "not valid JSON", id="not-json"),
    pytest.param("[1, 2]", "cfg", "is not a JSON object", id="json-array"),
    pytest.param('{"name": "my model", "license": "mit"}', "cfg", "num_hidden_layers: required field is missing",
                 id="not-a-model-config"),
    pytest.param(json.dumps({k: v for k, v in LLAMA.items() if k != "vocab_size"}), "cfg",
                 "vocab_size: required field is missing", id="missing-field"),
    pytest.param(json.dumps({**LLAMA, "hidden_size": 0}), "cfg", "hidden_size: must be a whole number >= 1",
                 id="zero-size"),
    pytest.param(json.dumps({**LLAMA, "num_key_value_heads": -8}), "cfg", "num_key_value_heads: must be a whole",
                 id="negative-size"),
    pytest.param(json.dumps({**LLAMA, "attention_chunk_size": 8192}), "cfg", "attention_chunk_size: chunked",
                 id="unmodelled-field"),
]


@pytest.mark.parametrize("text, field, message", BAD_CONFIGS)
def test_bad_config_gets_a_message_next_to_the_field(ctx, where, text, field, message):
    ctx.goto(where[0] + "?m=paste")
    ctx.fill("[name=cfg]", text)
    assert message in ctx.inner_text(f"#calc-{'config' if field == 'cfg' else field}-msg")
    assert ctx.get_attribute("#calc-config", "aria-invalid") == "true"
    assert ctx.get_attribute("#calc-config", "aria-describedby") == "calc-config-msg"
    assert "Fix the fields marked above" in results_text(ctx)
    assert_no_junk(ctx)


@pytest.mark.parametrize("key, value, message", [
    ("ctx", "-5", "whole number of tokens"), ("ctx", "8.5", "whole number of tokens"),
    ("c", "0", "whole number of sequences"), ("n", "abc", "whole number of GPUs"),
    ("u", "1.5", "between 0 and 1"), ("mfu", "0", "between 0 and 1"),
])
def test_bad_number_gets_a_message_next_to_the_field(ctx, where, key, value, message):
    ctx.goto(where[0])
    ctx.fill(f"[name={key}]", value)
    field_id = ctx.get_attribute(f"[name={key}]", "id")
    assert message in ctx.inner_text(f"#{field_id}-msg")
    assert ctx.get_attribute(f"#{field_id}", "aria-invalid") == "true"
    assert_no_junk(ctx)


def test_custom_gpu_and_its_bad_values(ctx, served_site):
    ctx.goto(served_site + "calculator/?m=llama-3.1-8b&g=custom&gmem=24&gbw=1000&gbf16=165&n=1&w=bf16&c=1")
    assert "Fits:" in results_text(ctx)
    ctx.fill("[name=gmem]", "-24")
    assert "greater than zero" in ctx.inner_text("#calc-gmem-msg")
    assert_no_junk(ctx)


def test_a_tp_degree_that_does_not_divide_the_heads(ctx, where):
    ctx.goto(where[0] + "?m=llama-3.1-70b&n=3")
    msg = ctx.inner_text("#calc-n-msg")
    assert "num_attention_heads 64 is not divisible by TP 3" in msg and "Valid: 1, 2, 4, 8, 16" in msg
    assert "Needs a valid GPU count" in ctx.inner_text("#r-fit")
    assert_no_junk(ctx)


def test_pasted_text_is_never_markup(ctx, served_site):
    ctx.goto(served_site + "calculator/?m=paste")
    evil = "<img src=x onerror=window.pwned=1>"
    ctx.fill("[name=cfg]", json.dumps({**LLAMA, "model_type": evil, "sliding_window": 4096}))
    assert evil in ctx.inner_text("#calc-config-msg")
    ctx.goto(served_site + "calculator/?m=" + evil)
    assert ctx.locator("img[src=x]").count() == 0
    assert ctx.evaluate("window.pwned") is None
    assert "which this catalog does not have" in ctx.inner_text("#calc-model-msg")


def test_what_fits_filters_keep_the_full_table_in_the_html(where, ctx, built_site):
    cat = load_catalog()
    html = (built_site / "reference" / "what-fits" / "index.html").read_text(encoding="utf-8")
    assert html.count('<td><a href="../gpus/#gpu-') == len(cat.models) * len(cat.gpus) * 4
    ctx.goto(where[1])
    ctx.select_option("#fits-model-filter", "llama-3.1-70b")
    ctx.select_option("#fits-gpu-filter", "h100-sxm")
    ctx.select_option("#fits-fmt-filter", "fp8")
    assert ctx.locator("h2[id^=fits-]:visible").count() == 1
    rows = ctx.locator("#fits-llama-3-1-70b ~ .fits-table tbody tr:visible")
    assert rows.count() == 4  # 1, 2, 4, 8 GPUs
    assert ctx.locator("#fits-llama-3-1-70b ~ .fits-table thead th:visible").count() == 3  # GPU, GPUs, fp8
    assert "Showing 1 model, one GPU, one format." in ctx.inner_text(".fits-filter__status")
    url = ctx.url
    ctx.goto(url)
    assert ctx.input_value("#fits-gpu-filter") == "h100-sxm"
    assert ctx.locator("h2[id^=fits-]:visible").count() == 1
    assert not ctx.errors


def test_script_and_data_within_budget(built_site):
    js = built_site / "assets" / "javascripts"
    total = sum(len(gzip.compress((js / name).read_bytes(), 9)) for name in SCRIPTS)
    assert total <= BUDGET_GZIP, f"calculator script + data: {total} bytes gzipped > {BUDGET_GZIP}"


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_axe_on_the_calculator_with_every_panel_open(browser, served_site, scheme):
    """The default state is in test_accessibility.py; here the pasted-config panel, its read-out, the
    custom-GPU fields and field messages are all showing."""
    from test_accessibility import describe, run_axe
    context, pg = recording_page(browser, scheme)
    try:
        pg.goto(served_site + "calculator/?m=paste&g=custom&gmem=80&gbw=&gbf16=989&n=1&c=0")
        pg.fill("[name=cfg]", (CONFIGS / "qwen3-next-80b-a3b.json").read_text(encoding="utf-8"))
        assert pg.locator("#calc-config-read li").count() >= 3 and pg.inner_text("#calc-gbw-msg")
        serious = [v for v in run_axe(pg) if v["impact"] in ("serious", "critical")]
        assert not serious, describe(serious)
        for control in pg.locator("#calc-form select, #calc-form input, #calc-form textarea").all():
            cid = control.get_attribute("id")
            assert pg.locator(f"label[for={cid}]").count() == 1, f"{cid} has no label"
    finally:
        context.close()
