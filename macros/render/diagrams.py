"""Generated diagrams: the paged KV cache's block tables (Q77) and tensor-parallel all-reduces per layer
(Q79), as inline SVG computed at build time (formulas: :mod:`macros.formulas.blocktable`,
:mod:`macros.formulas.memory`, :mod:`macros.formulas.parallel`).

Same conventions as :mod:`.figures`: ``currentColor`` and Material's link colour only, ``role="img"``
with a ``<title>`` and ``<desc>``, ids from :func:`.figures.figure_id`, no blank line inside the markup.
``data-*`` attributes carry the numbers drawn, for the tests.
"""

from __future__ import annotations

from html import escape

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Model
from ..errors import MacroInputError
from . import inputs
from .blocks import _i
from .figures import LINK, figure_id
from .registry import COUNT, Arg, _each, macro

_LENGTHS = Arg(_each(inputs.count, "lengths"), "tokens per sequence", "list of integers >= 1")
_PREFIX = Arg(lambda name, v: inputs.tokens(name, v, allow_zero=True), "tokens", "integer >= 0")


def _blocks(n: int, noun: str) -> str:
    return f"{_i(n)} {noun}{'' if n == 1 else 's'}"


def _svg(fid: str, w: int, h: int, title: str, desc: str, body: list[str], cls: str) -> str:
    return (f'<svg class="{cls}" viewBox="0 0 {w} {h}" role="img" aria-labelledby="{fid}-t {fid}-d" '
            f'font-size="12" fill="currentColor"><title id="{fid}-t">{escape(title)}</title>'
            f'<desc id="{fid}-d">{escape(desc)}</desc>{"".join(body)}</svg>')


# --- Q77: block tables --------------------------------------------------------------------------------

_BW, _ROW, _BOX = 160, 20, 14          # block width, row pitch, block height
_LX, _PX = 62, 380                     # left edges of the logical and the physical blocks


def _block(x: float, y: float, fill: int, bs: int, shared: bool, attrs: str) -> str:
    """One block of ``bs`` slots, ``fill`` of them holding KV: outline, shaded fill, slot dividers."""
    cw = _BW / bs
    colour = f'style="fill:{LINK}"' if shared else 'fill-opacity="0.45"'
    out = []
    if fill:
        out.append(f'<rect x="{x}" y="{y}" width="{fill * cw:.1f}" height="{_BOX}" {colour}/>')
    if bs <= 32:  # one thin divider per slot, drawn as a dashed line as tall as the block
        out.append(f'<path d="M{x + cw:.2f},{y + _BOX / 2}H{x + _BW}" stroke="currentColor" stroke-opacity="0.4" '
                   f'stroke-width="{_BOX}" stroke-dasharray="0.8 {cw - 0.8:.2f}" fill="none"/>')
    out.append(f'<rect {attrs} x="{x}" y="{y}" width="{_BW}" height="{_BOX}" fill="none" stroke="currentColor"/>')
    return "".join(out)


@macro("figure", example='paged_kv_svg("llama-3.1-8b")',
       args={"lengths": _LENGTHS, "prefix_tokens": _PREFIX, "pool_blocks": COUNT})
def paged_kv_svg(model: Model, block_size: int = F.DEFAULT_BLOCK_SIZE, kv_dtype: Format = "bf16",
                 lengths: tuple = (40, 27, 30), prefix_tokens: int = 20, pool_blocks: int | None = None) -> str:
    """Figure: block tables of three sequences mapped to a pool of physical KV blocks (paged attention).

    Sequences A, B, C of `lengths` tokens; A and B start with the same `prefix_tokens`-token prompt, so its
    full blocks are shared (reference count 2) and its remainder is stored by each; a pool of `pool_blocks`
    (default: two more than needed, left free). Blocks from
    `blocks_per_sequence`; each last block's empty slots priced at the KV bytes per token of
    `paged_tail_waste`, whose bound (`block_size` − 1 slots) the caption states.
    """
    if len(lengths) != 3:
        raise MacroInputError(f"lengths must give three sequences (A and B share the prompt, C does not), "
                              f"got {len(lengths)}")
    seqs = [("A", lengths[0], True), ("B", lengths[1], True), ("C", lengths[2], False)]
    if pool_blocks is None:
        pool_blocks = len(F.block_tables(seqs, block_size, prefix_tokens).blocks) + 2
    lay = F.block_tables(seqs, block_size, prefix_tokens, pool_blocks)
    w = F.paged_tail_waste(model, block_size, kv_dtype, len(seqs))
    bpt = w.bytes_per_token
    fid = figure_id("paged-kv", model.key, block_size, kv_dtype.key, tuple(lengths), prefix_tokens, pool_blocks)
    body, y, logical_y = [], 40, {}
    body.append(f'<text x="8" y="16" font-weight="bold">block tables (logical block → physical)</text>'
                f'<text x="{_PX}" y="16" font-weight="bold">physical KV blocks, {block_size} slots each</text>')
    for s in lay.sequences:
        body.append(f'<text x="8" y="{y - 4}">{s.name}: {_i(s.tokens)} tokens'
                    f'{", shares the prompt" if s.shares_prefix else ""}</text>')
        y += 4
        for i, (phys, fill) in enumerate(zip(s.table, s.fills)):
            shared = lay.blocks[phys].refs > 1
            body.append(f'<text x="{_LX - 6}" y="{y + 11}" text-anchor="end">{s.name}{i}</text>')
            body.append(_block(_LX, y, fill, block_size, shared,
                               f'class="logical" data-seq="{s.name}" data-logical="{i}" data-physical="{phys}" '
                               f'data-filled="{fill}"'))
            logical_y[(s.name, i)] = y
            y += _ROW
        y += 18
    py0 = 30
    for p in lay.blocks:
        py = py0 + p.index * _ROW
        state = "free" if not p.refs else (f"ref {p.refs}" + (f", {block_size - p.filled} empty"
                                                               if p.filled < block_size else ""))
        body.append(f'<text x="{_PX - 6}" y="{py + 11}" text-anchor="end">P{p.index}</text>')
        if p.refs:
            body.append(_block(_PX, py, p.filled, block_size, p.refs > 1,
                               f'class="physical" data-physical="{p.index}" data-refs="{p.refs}" '
                               f'data-filled="{p.filled}"'))
        else:
            body.append(f'<rect class="physical" data-physical="{p.index}" data-refs="0" data-filled="0" '
                        f'x="{_PX}" y="{py}" width="{_BW}" height="{_BOX}" fill="none" stroke="currentColor" '
                        f'stroke-dasharray="3 3" stroke-opacity="0.6"/>')
        body.append(f'<text x="{_PX + _BW + 6}" y="{py + 11}">{state}</text>')
    for s in lay.sequences:
        for i, phys in enumerate(s.table):
            y1, y2 = logical_y[(s.name, i)] + _BOX / 2, py0 + phys * _ROW + _BOX / 2
            body.append(f'<path class="map" data-seq="{s.name}" data-logical="{i}" data-physical="{phys}" '
                        f'd="M{_LX + _BW + 2},{y1}L{_PX - 26},{y2}" stroke="currentColor" stroke-opacity="0.55" '
                        f'fill="none"/>')
    h = max(y - 10, py0 + len(lay.blocks) * _ROW + 8)
    tails = "; ".join(f"{s.name} {_i(s.tokens)} tokens in {len(s.table)} blocks, {s.tail_empty} empty"
                      for s in lay.sequences)
    total = lay.tail_empty_total * bpt
    title = f"Paged KV cache: block tables of three sequences, blocks of {block_size} tokens"
    desc = (f"Each sequence's block table maps its logical blocks to physical blocks anywhere in the pool. "
            f"Sequences A and B start with the same {_i(prefix_tokens)}-token prompt: its "
            f"{_blocks(lay.shared_blocks, 'full block')} {'is' if lay.shared_blocks == 1 else 'are'} stored once "
            f"with reference count 2, the rest of the prompt "
            f"in each sequence's own block. {tails}. Empty slots in last blocks: {lay.tail_empty_total} × "
            f"{U.fmt_bytes(bpt)} per token ({model.name}, {kv_dtype.name} KV) = {U.fmt_bytes(total)}; "
            f"the bound is {w.worst_tokens_per_sequence} empty slots per sequence.")
    svg = _svg(fid, 640, h, title, desc, body, "paged-kv")
    caption = (f"{title}. Only each last block is partly empty: {lay.tail_empty_total} slots here, "
               f"{U.fmt_bytes(total)} of {model.name} KV in {kv_dtype.name}, never more than "
               f"{w.worst_tokens_per_sequence} slots per sequence. Shaded: slots holding KV; link colour: the "
               f"shared block. Generated from the block-table and tail-waste formulas.")
    return (f'<figure class="msib-figure" data-tail-bytes="{total!r}" data-bytes-per-token="{bpt!r}">{svg}'
            f'<figcaption>{escape(caption)}</figcaption></figure>')


# --- Q79: tensor-parallel all-reduces --------------------------------------------------------------

_TPW = 640
_COLS = (  # (x, width, stage, split) of the four GEMM stages; the all-reduce bars sit after the 2nd and 4th
    (56, 96, "Q, K, V + attention", "column split"),
    (158, 104, "output proj", "row split"),
    (302, 112, "gate, up + SwiGLU", "column split"),
    (420, 112, "down proj", "row split"),
)
_AR = (268, 538)  # x of the two all-reduce bars
_LANE, _LH, _TOP = 44, 36, 52


def _range(i: int, per: int) -> str:
    return f"{_i(i * per)}–{_i((i + 1) * per - 1)}"


@macro("figure", example='tp_allreduce_svg("llama-3.1-70b", n_gpus=8, tokens=2048)')
def tp_allreduce_svg(model: Model, n_gpus: int = 8, tokens: int = 1, dtype: Format = "bf16") -> str:
    """Figure: one transformer layer under Megatron tensor parallelism, with its two all-reduces and their bytes.

    Lanes for the GPUs (at most four drawn); column-split Q/K/V and gate/up, row-split output and down
    projections, an all-reduce after each row split. Bytes per call and per layer from the formulas of
    `allreduce_volume` (ring, 2(p−1)/p of the buffer sent by each GPU). Dense models only.
    """
    m, n = model, n_gpus
    if m.is_moe or m.intermediate_size is None:
        raise MacroInputError(f"{m.name} is not a dense model: its MLP is routed experts, which this figure does "
                              "not draw; use a dense model such as llama-3.1-70b")
    if n < 2:
        raise MacroInputError(f"n_gpus must be at least 2 for tensor parallelism, got {n}")
    F.check_tp(m, n)
    eb = dtype.bits_per_weight / 8
    buffer = tokens * m.hidden_size * eb
    per_call = F.ring_allreduce_bytes_per_gpu(buffer, n)
    per_layer = F.tp_allreduce_bytes_per_token_per_layer(m.hidden_size, eb, n) * tokens
    per_step = F.tp_allreduce_bytes_per_token(m, eb, n) * tokens
    heads, inter = m.num_attention_heads // n, m.intermediate_size // n
    lanes = list(range(n)) if n <= 4 else [0, 1, None, n - 1]
    fid = figure_id("tp-allreduce", m.key, n, tokens, dtype.key)
    bottom = _TOP + len(lanes) * _LANE
    body = [f'<text x="{(_COLS[0][0] + _COLS[1][0] + _COLS[1][1]) / 2}" y="14" text-anchor="middle" '
            f'font-weight="bold">attention block</text>'
            f'<text x="{(_COLS[2][0] + _COLS[3][0] + _COLS[3][1]) / 2}" y="14" text-anchor="middle" '
            f'font-weight="bold">MLP block</text>']
    for x, w, stage, split in _COLS:
        body.append(f'<text x="{x + w / 2}" y="30" text-anchor="middle">{stage}</text>'
                    f'<text x="{x + w / 2}" y="44" text-anchor="middle" font-style="italic">{split}</text>')
    for k, gpu in enumerate(lanes):
        y = _TOP + k * _LANE
        if gpu is None:
            body.append(f'<text x="6" y="{y + 22}">GPU 2–{n - 2}</text>' + "".join(
                f'<text x="{x + w / 2}" y="{y + 22}" text-anchor="middle">⋮</text>' for x, w, _s, _p in _COLS))
            continue
        lines = ((f"heads {_range(gpu, heads)}", "local attention"),
                 (f"rows {_range(gpu, heads * m.head_dim)}", "→ partial sum"),
                 (f"cols {_range(gpu, inter)}", "local SwiGLU"), (f"rows {_range(gpu, inter)}", "→ partial sum"))
        body.append(f'<text x="6" y="{y + 22}">GPU {gpu}</text>')
        for (x, w, _s, _p), (l1, l2) in zip(_COLS, lines):
            body.append(f'<rect x="{x}" y="{y}" width="{w}" height="{_LH}" rx="3" fill="none" stroke="currentColor"/>'
                        f'<text x="{x + w / 2}" y="{y + 15}" text-anchor="middle" font-size="11">{l1}</text>'
                        f'<text x="{x + w / 2}" y="{y + 29}" text-anchor="middle" font-size="11">{l2}</text>')
    for j, x in enumerate(_AR, 1):
        body.append(f'<rect class="allreduce" data-buffer-bytes="{buffer!r}" data-sent-bytes="{per_call!r}" '
                    f'x="{x}" y="{_TOP - 4}" width="28" height="{bottom - _TOP}" rx="4" '
                    f'style="fill:{LINK}" fill-opacity="0.85"/>'
                    f'<text transform="translate({x + 18},{(_TOP + bottom) / 2}) rotate(-90)" text-anchor="middle" '
                    f'fill="var(--md-default-bg-color)" font-weight="bold">all-reduce {j}</text>')
    body.append(f'<text x="{_TPW - 4}" y="{(_TOP + bottom) / 2 + 4}" text-anchor="end">next</text>'
                f'<text x="{_TPW - 4}" y="{(_TOP + bottom) / 2 + 18}" text-anchor="end">layer</text>')
    notes = (f"each all-reduce: {_blocks(tokens, 'token')} × {_i(m.hidden_size)} × {eb:g} bytes = "
             f"{U.fmt_bytes(buffer)}",
             f"each GPU sends 2({n} − 1)/{n} of it in a ring all-reduce: {U.fmt_bytes(per_call)}",
             f"per layer, 2 all-reduces: {U.fmt_bytes(per_layer)} per GPU; × {m.num_hidden_layers} layers = "
             f"{U.fmt_bytes(per_step)} per forward step")
    for k, t in enumerate(notes):
        body.append(f'<text x="6" y="{bottom + 22 + 16 * k}">{escape(t)}</text>')
    h = bottom + 22 + 16 * len(notes)
    title = f"Tensor parallelism over {n} GPUs: one layer of {m.name} and its two all-reduces"
    desc = (f"Each GPU holds {heads} of {m.num_attention_heads} attention heads and {_i(inter)} of "
            f"{_i(m.intermediate_size)} MLP columns. Q, K, V and gate/up projections are split by columns, so "
            f"attention and SwiGLU run locally; the output and down projections are split by rows and leave "
            f"partial sums, which an all-reduce adds up: once after attention, once after the MLP. "
            + "; ".join(notes) + ".")
    svg = _svg(fid, _TPW, h, title, desc, body, "tp-allreduce")
    caption = (f"{title} ({_blocks(tokens, 'token')} in the step, {dtype.name} activations, ring all-reduce). "
               f"Generated from the same formulas as the all-reduce worked example.")
    return (f'<figure class="msib-figure" data-per-layer-bytes="{per_layer!r}" data-per-step-bytes="{per_step!r}">'
            f'{svg}<figcaption>{escape(caption)}</figcaption></figure>')
