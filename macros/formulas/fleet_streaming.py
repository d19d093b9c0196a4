"""Streaming end to end (Q150): what requests that the client has abandoned, but the server has not yet
noticed, hold in the KV cache and in decode work.

Little's law for the leak. Clients disconnect at rate ``λ_d`` (requests per second: the request rate times
the share of requests abandoned mid-stream), and the server goes on generating for each of them for ``T``
seconds, the time until it notices and aborts the request (or until the request reaches ``max_tokens``
if it never notices). In steady state the number of such requests in flight is

    leaked requests L = λ_d × T

each holding the KV of its context, so

    leaked KV = L × KV bytes per request

and together they generate ``L / TPOT`` tokens per second that nobody reads. Without detection,
``T = remaining output tokens × TPOT``.

Units: requests per second, seconds, bytes, tokens per second. KV per request is taken at one context
length (the context at the time of disconnect); the leak grows while the abandoned request keeps
generating, so this is a lower bound for long runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk

__all__ = ["LeakedWork", "leaked_work", "run_to_max_tokens_s"]


@dataclass(frozen=True)
class LeakedWork:
    detect_s: float             # time from disconnect to abort (s)
    leaked_requests: float      # L = disconnect rate × detect_s
    leaked_kv_bytes: float      # L × KV bytes per request
    wasted_tokens_per_s: float  # L / TPOT


def leaked_work(disconnect_rate_per_s: float, detect_s: float, kv_bytes_per_request: float,
                tpot_s: float) -> LeakedWork:
    """Little's law: requests, KV bytes and decode tokens per second held by abandoned requests."""
    chk.non_negative("disconnect_rate_per_s", disconnect_rate_per_s)
    chk.non_negative("detect_s", detect_s)
    chk.positive("kv_bytes_per_request", kv_bytes_per_request)
    chk.positive("tpot_s", tpot_s)
    n = disconnect_rate_per_s * detect_s
    return LeakedWork(detect_s, n, n * kv_bytes_per_request, n / tpot_s)


def run_to_max_tokens_s(remaining_tokens: int, tpot_s: float) -> float:
    """How long a request the server never aborts keeps running: ``remaining output tokens × TPOT``."""
    remaining_tokens = chk.non_negative_int("remaining_tokens", remaining_tokens)
    chk.positive("tpot_s", tpot_s)
    return remaining_tokens * tpot_s
