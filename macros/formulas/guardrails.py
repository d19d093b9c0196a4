"""Guardrails in the serving path (Q149): what an input guard adds to TTFT in series or in parallel,
what a chunked output guard holds back from a stream, and how much GPU the guard model needs.

Pure Python: times in seconds, counts in tokens. The guard is a classifier LLM (Llama Guard 3/4,
Qwen3Guard-Gen) whose latency is a prefill of its prompt plus a few decoded verdict tokens.
"""

from __future__ import annotations

from typing import List, Tuple

from . import _checks as chk

__all__ = ["serial_guard_ttft", "parallel_guard_ttft", "rolling_checks", "chunk_release_times",
           "first_chunk_holdback", "guard_keeps_up", "guard_tokens_per_request", "guard_gpu_share"]


def serial_guard_ttft(main_ttft_s: float, guard_s: float) -> float:
    """Time to first token when the input guard must answer before the main model starts: sum of both."""
    chk.non_negative("main_ttft_s", main_ttft_s)
    chk.non_negative("guard_s", guard_s)
    return main_ttft_s + guard_s


def parallel_guard_ttft(main_ttft_s: float, guard_s: float) -> float:
    """Time to the first token a user sees when guard and main model start together and the first
    token is held until the verdict: ``max(main TTFT, guard latency)``."""
    chk.non_negative("main_ttft_s", main_ttft_s)
    chk.non_negative("guard_s", guard_s)
    return max(main_ttft_s, guard_s)


def rolling_checks(output_tokens: int, chunk_tokens: int, context_tokens: int = 0) -> List[Tuple[int, int, int]]:
    """The output-guard checks of one response under a rolling buffer, as ``(last token, window, new)``.

    Follows NeMo Guardrails 0.24.1's ``RollingBuffer``: tokens accumulate until the buffer holds ``k``
    (``chunk_size``); the guard checks those ``k`` and the new ones among them go to the user; the last
    ``c`` (``context_size``) stay in the buffer as context, so after the first check each window of ``k``
    holds ``c`` old and ``k - c`` new tokens. At the end of the stream whatever is left in the buffer is
    checked once more (context alone if the stream ended on a window boundary). ``c = 0`` is taken as
    plain non-overlapping chunks (see :func:`guard_tokens_per_request`). Requires ``0 <= c < k``.
    """
    n = chk.positive_int("output_tokens", output_tokens)
    k = chk.positive_int("chunk_tokens", chunk_tokens)
    c = chk.non_negative_int("context_tokens", context_tokens)
    if c >= k:
        raise ValueError(f"context_tokens ({c}) must be smaller than chunk_tokens ({k}): a window of {k} "
                         "tokens would hold no new token")
    out: List[Tuple[int, int, int]] = []
    buf = sent = 0
    for tok in range(1, n + 1):
        buf += 1
        if buf >= k:
            out.append((tok, buf, tok - sent))
            sent = tok
            buf = c
    if buf:
        out.append((n, buf, n - sent))
    return out


def chunk_release_times(ttft_s: float, tpot_s: float, output_tokens: int, chunk_tokens: int,
                        guard_s: float, context_tokens: int = 0) -> List[float]:
    """Times (from arrival) at which a chunked output guard releases each checked window of a stream.

    Token ``j`` (1-based) is generated at ``TTFT + (j - 1) x TPOT``. A window is ready when its last
    token is; the guard checks windows one after another (NeMo Guardrails' streaming output rails await
    each check before taking the next batch), so ``release_i = max(ready_i, release_(i-1)) + guard``.
    """
    chk.non_negative("ttft_s", ttft_s)
    chk.positive("tpot_s", tpot_s)
    chk.non_negative("guard_s", guard_s)
    out: List[float] = []
    prev = 0.0
    for last, _window, _new in rolling_checks(output_tokens, chunk_tokens, context_tokens):
        prev = max(ttft_s + (last - 1) * tpot_s, prev) + guard_s
        out.append(prev)
    return out


def first_chunk_holdback(tpot_s: float, chunk_tokens: int, guard_s: float) -> float:
    """Extra wait of the first visible token under a chunked output guard: ``(k - 1) x TPOT + guard``.

    The first token waits for the other ``k - 1`` tokens of its chunk and for the check (about
    ``k x TPOT + guard`` for large ``k``).
    """
    chk.positive("tpot_s", tpot_s)
    k = chk.positive_int("chunk_tokens", chunk_tokens)
    chk.non_negative("guard_s", guard_s)
    return (k - 1) * tpot_s + guard_s


def guard_keeps_up(tpot_s: float, chunk_tokens: int, guard_s: float, context_tokens: int = 0) -> bool:
    """Whether serial checks keep pace with generation: ``guard <= (k - c) x TPOT`` (the new tokens a
    window adds after the first); otherwise each window is released later than the one before and the
    hold-back grows through the response."""
    chk.positive("tpot_s", tpot_s)
    k = chk.positive_int("chunk_tokens", chunk_tokens)
    c = chk.non_negative_int("context_tokens", context_tokens)
    chk.non_negative("guard_s", guard_s)
    if c >= k:
        raise ValueError(f"context_tokens ({c}) must be smaller than chunk_tokens ({k})")
    return guard_s <= (k - c) * tpot_s


def guard_tokens_per_request(template: int, prompt: int, output_tokens: int, chunk_tokens: int,
                             context_tokens: int = 0, input_check: bool = True,
                             prompt_in_output_checks: bool = True) -> int:
    """Prompt tokens the guard model prefills for one request.

    Input check: ``template + prompt``. Each output check (:func:`rolling_checks`): ``template + window``,
    plus the prompt when the guard's output prompt carries the user turn (Llama Guard's response
    classification does).
    """
    t = chk.non_negative_int("template", template)
    p = chk.non_negative_int("prompt", prompt)
    checks = rolling_checks(output_tokens, chunk_tokens, context_tokens)
    per_check = t + (p if prompt_in_output_checks else 0)
    total = sum(per_check + window for _last, window, _new in checks)
    return total + ((t + p) if input_check else 0)


def guard_gpu_share(request_rate: float, tokens_per_request: int, guard_prefill_tokens_per_s: float) -> float:
    """GPUs' worth of guard prefill: ``request rate x guard tokens per request / prefill rate of one GPU``."""
    chk.non_negative("request_rate", request_rate)
    chk.non_negative_int("tokens_per_request", tokens_per_request)
    chk.positive("guard_prefill_tokens_per_s", guard_prefill_tokens_per_s)
    return request_rate * tokens_per_request / guard_prefill_tokens_per_s
