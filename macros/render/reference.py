"""The generated reference pages: models, GPUs, number formats and prices, each entry with the anchor
that worked examples link to (``model-<key>``, ``gpu-<key>``, ``format-<key>``, ``price-<key>``,
``api-<key>``)."""

from __future__ import annotations

from .. import formulas as F
from .. import units as U
from ..catalog import Gpu, Model
from . import inputs
from .blocks import (REFERENCE_FORMATS, REFERENCE_KV, _bits, _domain, _esc, _glink, _i, _n, _src_cell, anchor_id,
                     catalog_href, catalog_link, deferred_block)
from .registry import macro


def _cuda_total(g) -> str:
    """The cudaMemGetInfo total with its source, or the fallback the catalog states."""
    src, note = g.extra.get("cuda_total_source"), str(g.extra.get("cuda_total_note", ""))
    figure = f"{g.cuda_total_bytes / U.GiB:.2f} GiB ({g.cuda_total_bytes:,} bytes)"
    if src:
        return f"{figure} ([log]({src}))"
    return f"{figure}; {note}"


def _heading(level: int, text: str, kind: str, key: str) -> str:
    return f"{'#' * level} {text} {{#{anchor_id(kind, key)}}}"


CATALOG_ROW_REM = 2.4    # height of one catalog table row on a phone, for the placeholder
CATALOG_TABLE_REM = 4.0  # a table's header row and margins


def _model_section(m: Model, level: int) -> str:
    cat = inputs.cat()
    b = F.param_breakdown(m)
    lines = [_heading(level, m.name, "model", m.key), ""]
    kind = "mixture-of-experts" if m.is_moe else "dense"
    att = {"mha": "multi-head", "gqa": "grouped-query", "mqa": "multi-query", "mla": "multi-head latent"}[m.attention]
    extras = []
    if m.sliding_window:
        extras.append(f"{m.sliding_window.num_sliding_layers} of {m.num_hidden_layers} layers use a "
                      f"{_i(m.sliding_window.size)}-token sliding window")
    if m.linear_attention:
        extras.append(f"{m.linear_attention.num_linear_layers} of {m.num_hidden_layers} layers are "
                      "linear-attention layers with a constant state")
    lines.append(f"Key `{m.key}` · {kind}, {att} attention · ships in "
                 f"{catalog_link('format', m.released_format, cat.format(m.released_format).name)} · "
                 f"[{m.hf_repo}](https://huggingface.co/{m.hf_repo})"
                 + ("" if not extras else " · " + "; ".join(extras)))
    lines.append("")
    # config table
    cfg = [("num_hidden_layers", m.num_hidden_layers), ("hidden_size", m.hidden_size),
           ("num_attention_heads", m.num_attention_heads), ("num_key_value_heads", m.num_key_value_heads),
           ("head_dim", f"{m.head_dim}" + ("" if m.head_dim_in_config else " (not stated in config.json; see notes)")),
           ("intermediate_size", m.intermediate_size if m.intermediate_size is not None else "—"),
           ("vocab_size", m.vocab_size), ("tie_word_embeddings", str(m.tie_word_embeddings).lower()),
           ("max_position_embeddings", m.max_position_embeddings),
           ("attention_bias", str(m.attention_bias).lower())]
    if m.moe:
        cfg += [("experts (routed / shared / per token)",
                 f"{m.moe.num_experts} / {m.moe.num_shared_experts} / {m.moe.experts_per_token}"),
                ("moe_intermediate_size", m.moe.moe_intermediate_size),
                ("dense layers first", m.moe.first_dense_layers)]
    if m.mla:
        cfg += [("kv_lora_rank / q_lora_rank", f"{m.mla.kv_lora_rank} / {m.mla.q_lora_rank}"),
                ("qk_nope / qk_rope / v head dims",
                 f"{m.mla.qk_nope_head_dim} / {m.mla.qk_rope_head_dim} / {m.mla.v_head_dim}")]
    tables = []
    rows = ["| Config field | Value |", "| --- | --- |"]
    for k, v in cfg:
        v = _i(v) if isinstance(v, int) and not isinstance(v, bool) else v
        plain = k.startswith(("experts", "dense", "kv_lora", "qk_"))  # descriptions, not config.json names
        rows.append(f"| {k} | {v} |" if plain else f"| `{k}` | {v} |")
    tables.append("\n".join(rows))
    # sizes table
    rows = ["| Figure | Value |", "| --- | --- |"]
    rows.append(f"| Total parameters (computed) | {_i(b.total)} ({U.fmt_params(b.total)}) |")
    if m.stated_total_params:
        diff = F.relative_difference(b.total, m.stated_total_params)
        rows.append(f"| Total parameters (stated) | {U.fmt_params(m.stated_total_params)}; computed is "
                    f"{'+' if diff >= 0 else ''}{U.fmt_pct(diff)} off ([source]({m.stated_params_source})) |")
    if m.is_moe:
        rows.append(f"| Active parameters per token (computed) | {U.fmt_params(b.active)} "
                    f"({U.fmt_params(b.active - b.embedding)} without the input embedding) |")
        if m.stated_active_params:
            rows.append(f"| Active parameters (stated) | {U.fmt_params(m.stated_active_params)} |")
    for key in REFERENCE_FORMATS:
        if key in cat.formats:
            f = cat.format(key)
            rows.append(f"| Weights, {catalog_link('format', key, f.name)} | {U.fmt_gb(F.weight_bytes(m, f))} |")
    for key in REFERENCE_KV:
        if key in cat.formats:
            f = cat.format(key)
            rows.append(f"| KV cache per token, {catalog_link('format', key, f.name)} | "
                        f"{U.fmt_bytes(F.kv_bytes_per_token(m, f))} |")
    if m.sliding_window or m.linear_attention:
        f = cat.format("bf16")
        ctx = m.max_position_embeddings
        rows.append(f"| KV per sequence at {_i(ctx)} tokens, BF16 (windows and states applied) | "
                    f"{U.fmt_gb(F.kv_bytes_per_sequence(m, ctx, f))} |")
    rows.append(f"| Valid tensor-parallel degrees (≤ 16) | {', '.join(map(str, F.valid_tp_degrees(m)))} |")
    tables.append("\n".join(rows))
    # 21 sections of two tables: laid out when near the viewport (the page's start-up on a phone).
    n_rows = sum(t.count("\n") - 1 for t in tables)
    lines += [deferred_block("\n\n".join(tables), CATALOG_ROW_REM * n_rows + 2 * CATALOG_TABLE_REM), ""]
    if b.approximate:
        lines += ["Parameter count approximate: the linear-attention layers are counted with the standard "
                  "attention shape.", ""]
    if m.notes:
        lines += [f"Notes: {_esc(m.notes.strip())}", ""]
    lines.append(f"Sources: [config.json]({m.config_source}) · [model card]({m.card_source})"
                 + (f" · [stated parameters]({m.stated_params_source})" if m.stated_params_source else ""))
    return "\n".join(lines)


def _model_summary() -> str:
    """One comparison row per model, linking to its section below."""
    cat = inputs.cat()
    bf16, fp8, int4 = cat.format("bf16"), cat.format("fp8"), cat.format("int4-g128")
    rows = ["| Model | Total params | Active params | BF16 weights | FP8 weights | INT4 (g128) weights "
            "| KV per token, BF16 | KV per token, FP8 |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for m in cat.models.values():
        b = F.param_breakdown(m)
        active = U.fmt_params(b.active) if m.is_moe else "all"
        rows.append(
            f"| [{m.name}]({catalog_href('model', m.key)}) | {U.fmt_params(b.total)} | {active} "
            f"| {U.fmt_gb(F.weight_bytes(m, bf16))} | {U.fmt_gb(F.weight_bytes(m, fp8))} "
            f"| {U.fmt_gb(F.weight_bytes(m, int4))} | {_i(F.kv_bytes_per_token(m, bf16))} B "
            f"| {_i(F.kv_bytes_per_token(m, fp8))} B |")
    return "\n".join(rows)


@macro("page", example='model_catalog()')
def model_catalog(level: int = 3) -> str:
    """Reference page: every model with config, computed parameters, weights per format, KV per token.

    For docs/reference/models.md: per model (grouped dense / MoE under `level − 1` headings) the config
    fields, computed total and active parameters with the vendor's figure and % difference, weights in
    BF16, FP8 and INT4-g128, KV bytes per token in BF16 and FP8, valid TP degrees, notes and sources.
    """
    cat = inputs.cat()
    out = [f"{'#' * (level - 1)} Summary", _model_summary(),
           "Weights with every tensor in the named format; KV bytes per token count only the layers that keep a "
           "KV cache (sliding-window and linear-attention layers are capped or constant per sequence, see each "
           "model's section)."]
    groups = [("Dense models", [m for m in cat.models.values() if not m.is_moe]),
              ("Mixture-of-experts models", [m for m in cat.models.values() if m.is_moe])]
    for title, models in groups:
        if not models:
            continue
        out.append(f"{'#' * (level - 1)} {title}")
        for m in models:
            out.append(_model_section(m, level))
    out.append("Weights are parameters × the format's effective bits per weight / 8, with every tensor in that "
               "format; KV per token counts only the layers that keep a KV cache.")
    return "\n\n".join(out)


@macro("page", example='gpu_catalog()')
def gpu_catalog(level: int = 3) -> str:
    """Reference page: every GPU with memory (GB and GiB), bandwidth, dense FLOPS, link, ridge point.

    For docs/reference/gpus.md: memory (GB and GiB), bandwidth, dense BF16 / FP8 / INT8, BF16 ridge
    point, interconnect per direction, board power, notes, source.
    """
    cat = inputs.cat()
    vendors: dict[str, list[Gpu]] = {}
    for g in cat.gpus.values():
        vendors.setdefault(g.vendor, []).append(g)
    out = []
    for vendor, gpus in vendors.items():
        label = {"nvidia": "NVIDIA", "amd": "AMD", "intel": "Intel", "google": "Google"}.get(vendor, vendor.title())
        out.append(f"{'#' * (level - 1)} {label}")
        for g in gpus:
            int8 = U.fmt_ops(g.int8_dense_ops) if g.int8_dense_ops else "—"
            ridge = F.ridge_point(g.bf16_dense_flops, g.memory_bandwidth_bytes_per_s)
            rows = ["| Figure | Value |", "| --- | --- |",
                    f"| Memory | {U.fmt_gb(g.memory_bytes)} (nvidia-smi); datasheet: {g.memory_label} |",
                    f"| Memory as CUDA reports it (what KV budgets use) | {_cuda_total(g)} |",
                    f"| Memory bandwidth | {U.fmt_bandwidth(g.memory_bandwidth_bytes_per_s)} |",
                    f"| Dense BF16 | {U.fmt_flops(g.bf16_dense_flops)} |",
                    f"| Dense FP8 | {U.fmt_flops(g.fp8_dense_flops) if g.fp8_dense_flops else 'not supported'} |",
                    f"| Dense INT8 | {int8} |",
                    f"| Ridge point, BF16 | {_n(ridge)} FLOP/byte |"]
            if g.interconnect_bytes_per_s_per_direction:
                rows.append(f"| Interconnect ({g.interconnect}) | "
                            f"{U.fmt_bandwidth(g.interconnect_bytes_per_s_per_direction)} per direction |")
            if g.allreduce_latency_s:
                rows.append(f"| All-reduce latency per call (modelled) | {U.fmt_seconds(g.allreduce_latency_s)} |")
            if g.tdp_watts:
                rows.append(f"| Board power | {_i(g.tdp_watts)} W |")
            parts = [_heading(level, g.name, "gpu", g.key), f"Key `{g.key}`", "\n".join(rows)]
            lat_note = g.extra.get("allreduce_latency_note")
            lat_src = g.extra.get("allreduce_latency_source")
            for label, text in (("Memory", g.memory_note), ("Interconnect", g.interconnect_note),
                                ("All-reduce latency", lat_note), ("Notes", g.notes)):
                if text and text.strip():
                    cite = f" ([{_domain(lat_src)}]({lat_src}))" if label == "All-reduce latency" and lat_src else ""
                    parts.append(f"{label}: {_esc(text.strip())}" + cite)
            parts.append(f"Source: [{_domain(g.source)}]({g.source})")
            out.append("\n\n".join(parts))
    return "\n\n".join(out)


@macro("page", example='format_catalog()')
def format_catalog(level: int = 3) -> str:
    """Reference page: every number format with effective bits, bytes per billion parameters, KV use.

    For docs/reference/formats.md: effective bits, bytes per billion parameters, group size and scale
    bits, KV-cache usability, notes, source.
    """
    cat = inputs.cat()
    kinds = {"float": "Floating point", "int": "Integer", "block": "Block-scaled"}
    out = []
    for kind, title in kinds.items():
        fmts = [f for f in cat.formats.values() if f.kind == kind]
        if not fmts:
            continue
        out.append(f"{'#' * (level - 1)} {title}")
        for f in fmts:
            rows = ["| Figure | Value |", "| --- | --- |",
                    f"| Effective bits per weight | {_bits(f.bits_per_weight)} |",
                    f"| Bytes per billion parameters | {U.fmt_gb(F.bytes_for_params(1e9, f))} |"]
            if f.group_size:
                eff = F.effective_bits_per_weight(f.bits_per_weight - (f.scale_bits or 0) / f.group_size,
                                                  f.group_size, f.scale_bits or 0)
                rows.append(f"| Group size; scale bits per group | {f.group_size}; {_bits(f.scale_bits or 0)} "
                            f"(element bits + {_bits(f.scale_bits or 0)}/{f.group_size} = {_bits(eff)}) |")
            rows.append(f"| Usable as KV-cache dtype | {'yes' if f.kv_cache else 'no'} |")
            if f.embedding_bits_per_weight is not None:
                rows.append(f"| Embedding and lm_head | not quantized: {_bits(f.embedding_bits_per_weight)} bits |")
            parts = [_heading(level, f.name, "format", f.key), f"Key `{f.key}`", "\n".join(rows)]
            if f.notes:
                parts.append(f"Notes: {_esc(f.notes.strip())}")
            emb_note, emb_src = f.extra.get("embedding_note"), f.extra.get("embedding_source")
            if emb_note:
                parts.append(f"Embedding and lm_head: {_esc(str(emb_note).strip())}"
                             + (f" ([{_domain(emb_src)}]({emb_src}))" if emb_src else ""))
            parts.append(f"Source: [{_domain(f.source)}]({f.source})")
            out.append("\n\n".join(parts))
    return "\n\n".join(out)


@macro("page", example='price_table()')
def price_table() -> str:
    """Reference page: illustrative GPU-hour and API prices, each row with an anchor and its source.

    For docs/reference/prices.md: GPU-hour and API price tables (with `## GPU hours` and `## Hosted APIs`
    headings), the as-of date and the disclaimer.
    """
    cat = inputs.cat()
    pr = cat.prices
    out = [f"Prices as of {pr.as_of}. {_esc(pr.disclaimer)}"]
    rows = ["| Key | GPU | $ per GPU-hour | Monthly (730 h) | Basis | Source |",
            "| --- | --- | --- | --- | --- | --- |"]
    for p in pr.gpu_hour.values():
        g = cat.gpu(p.gpu)
        rows.append(f"| <a id=\"{anchor_id('price', p.key)}\"></a>`{p.key}` | {_glink(g)} | "
                    f"{U.fmt_usd(p.usd_per_hour)} | {U.fmt_usd(F.fixed_cost_floor(p.usd_per_hour, 1))} | "
                    f"{_esc(p.basis, cell=True)} | {_src_cell(p.source)} |")
    out += ["## GPU hours", "\n".join(rows)]
    rows = ["| Key | Offering | $ per M input | $ per M output | Source |", "| --- | --- | --- | --- | --- |"]
    for a in pr.api.values():
        rows.append(f"| <a id=\"{anchor_id('api', a.key)}\"></a>`{a.key}` | {_esc(a.name, cell=True)} | "
                    f"{U.fmt_usd(a.usd_per_m_input)} | "
                    f"{U.fmt_usd(a.usd_per_m_output)} | {_src_cell(a.source)} |")
    out += ["## Hosted APIs", "\n".join(rows)]
    return "\n\n".join(out)
