"""Streaming end to end (Q150): KV cache and decode work held by requests whose client disconnected
before the server noticed (formulas: :mod:`macros.formulas.fleet_streaming`)."""

from __future__ import annotations

from html import escape

from .. import formulas as F
from .. import units as U
from ..catalog import Format, Model
from ..errors import MacroInputError
from .blocks import GIVEN, Example, _flink, _i, _mlink, _n
from .registry import COUNT, TOKENS, Arg, macro
from . import inputs

_POS = Arg(inputs.number, "a number", "> 0")


def _scenarios(rows) -> list[tuple[str, float]]:
    """Rows as a page writes them: [label, seconds until the server aborts the request]."""
    if not isinstance(rows, (list, tuple)) or not rows:
        raise MacroInputError(f"detect must be a non-empty list of [label, seconds] rows, got {rows!r}")
    out = []
    for r in rows:
        if (not isinstance(r, (list, tuple)) or len(r) != 2 or not isinstance(r[0], str)
                or isinstance(r[1], bool) or not isinstance(r[1], (int, float)) or r[1] < 0):
            raise MacroInputError(f"each detect row must be [label, seconds >= 0], got {r!r}")
        out.append((r[0], float(r[1])))
    return out


@macro("block", example='leaked_kv("llama-3.1-70b", kv_dtype="fp8", request_rate=20, abandon_share=0.05, '
                        'context="4K", tpot_ms=40, remaining_tokens=1500, detect=[["clean close", 0.04], '
                        '["proxy idle timeout", 60]])',
       args={"request_rate": _POS, "abandon_share": _POS, "tpot_ms": _POS, "remaining_tokens": TOKENS,
             "detect": Arg(lambda name, v: v, "rows", "[[label, seconds], ...]"), "gpus": COUNT})
def leaked_kv(model: Model, request_rate: float, abandon_share: float, context: int, tpot_ms: float,
              remaining_tokens: int, detect: list, kv_dtype: Format = "bf16", gpus: int = 1) -> str:
    """Worked example: KV and decode work held by abandoned streams, by Little's law, per detection time.

    Leaked requests = disconnect rate × time until the server aborts; leaked KV = that × KV per request
    (at `context` tokens); tokens generated for nobody = leaked requests / TPOT. `detect` rows are
    `[label, seconds]`; a last row is added for a server that never notices, where the request runs
    `remaining_tokens × TPOT` to `max_tokens`. `request_rate` in requests/s, `abandon_share` 0..1.
    """
    if abandon_share > 1:
        raise MacroInputError(f"abandon_share must lie in (0, 1], got {abandon_share!r}")
    rows_in = _scenarios(detect)
    tpot = tpot_ms / 1000.0
    rate = request_rate * abandon_share
    kv_req = F.kv_bytes_per_sequence(model, context, kv_dtype)
    never = F.run_to_max_tokens_s(remaining_tokens, tpot)
    rows_in.append(("never noticed: runs to `max_tokens`", never))
    ex = Example(f"abandoned streams on {model.name}: Little's law for the leak")
    ex.formula("leaked requests = disconnect rate × time until abort")
    ex.formula("leaked KV = leaked requests × KV per request; tokens for nobody = leaked requests / TPOT")
    ex.input("request rate × share abandoned mid-stream", f"{_n(request_rate)} /s × {_n(abandon_share)} = "
             f"{_n(round(rate, 4))} disconnects/s", GIVEN)
    ex.input("context at disconnect", f"{_i(context)} tokens", GIVEN)
    ex.input(f"KV per request ({kv_dtype.key})", U.fmt_bytes(kv_req), f"{_mlink(model)}, {_flink(kv_dtype)}")
    ex.input("TPOT", f"{_n(tpot_ms)} ms", "measured (given)")
    ex.input("output tokens left when the client leaves", _i(remaining_tokens), GIVEN)
    ex.step(f"never noticed: {_i(remaining_tokens)} × {_n(tpot_ms)} ms = {U.fmt_seconds(never)} per request")
    rows = ["| Until the server aborts | Time | Leaked requests | Leaked KV" + (" per GPU" if gpus > 1 else "")
            + " | Tokens generated for nobody |", "| --- | --- | --- | --- | --- |"]
    results = []
    for label, t in rows_in:
        w = F.leaked_work(rate, t, kv_req, tpot)
        results.append((label, w))
        rows.append(f"| {escape(label) if '`' not in label else label} | {U.fmt_seconds(t)} | "
                    f"{_n(round(w.leaked_requests, 2))} | {U.fmt_bytes(w.leaked_kv_bytes / gpus)} | "
                    f"{U.fmt_rate(w.wasted_tokens_per_s)} |")
    last = results[-1][1]
    ex.step(f"never noticed: {_n(round(rate, 4))} × {U.fmt_seconds(never)} = {_n(round(last.leaked_requests, 2))} "
            f"requests × {U.fmt_bytes(kv_req)} = {U.fmt_bytes(last.leaked_kv_bytes)}")
    ex.table("\n".join(rows))
    first = results[0][1]
    ex.result(f"noticed in {U.fmt_seconds(first.detect_s)}, the leak is {U.fmt_bytes(first.leaked_kv_bytes)}; "
              f"never noticed, {U.fmt_bytes(last.leaked_kv_bytes)} of KV and "
              f"{U.fmt_rate(last.wasted_tokens_per_s)} of decode spent on streams nobody reads")
    ex.note("Steady state (Little's law), one context length per request: an abandoned request that keeps "
            "generating also grows its KV, so long runs leak more than shown."
            + (f" KV is divided over {gpus} GPUs (tensor parallel)." if gpus > 1 else ""))
    return ex.render()
