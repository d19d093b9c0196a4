"""Q36: a per-tenant token budget for an LLM endpoint: reserve at admission, settle on completion.

A request-per-second limit treats a ten-token prompt and a long-context request alike; an LLM's cost
is tokens. The budget below refills at ``tokens_per_s`` up to ``burst``. At admission it reserves the
most the request can cost, ``prompt_tokens + max_tokens``; when the request ends it settles on the
tokens actually used and refunds the rest. Reserving the maximum means the budget is never exceeded
(at most ``burst + tokens_per_s x T`` tokens in any interval T); the price is that long ``max_tokens``
requests are admitted later than their real usage would need.

A refused request gets 429 with a ``Retry-After`` in whole seconds, rounded up (the helper from the
Q93 token bucket). A request that could never fit (its reservation exceeds ``burst``) is a client
error (400), not a 429 the client would retry forever.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from livecoding.token_bucket import retry_after_header

__all__ = ["Reservation", "TokenBudget", "admit_response"]


@dataclass(frozen=True, slots=True)
class Reservation:
    allowed: bool
    reserved: int
    retry_after: float  # seconds; 0.0 when allowed


# --8<-- [start:budget]
class TokenBudget:
    def __init__(self, tokens_per_s: float, burst: float, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if tokens_per_s <= 0 or burst <= 0:
            raise ValueError("tokens_per_s and burst must be > 0")
        self._rate, self._burst, self._clock = tokens_per_s, burst, clock
        self._lock = threading.Lock()
        self._balance = burst
        self._last = clock()

    def reserve(self, prompt_tokens: int, max_tokens: int) -> Reservation:
        """Reserve the request's worst case, ``prompt_tokens + max_tokens``, or refuse it."""
        if prompt_tokens < 0 or max_tokens < 1:
            raise ValueError("prompt_tokens must be >= 0 and max_tokens >= 1")
        need = prompt_tokens + max_tokens
        if need > self._burst:
            raise ValueError(f"request needs {need} tokens; the budget holds at most {self._burst:g}")
        with self._lock:
            self._refill()
            if self._balance >= need:
                self._balance -= need
                return Reservation(True, need, 0.0)
            return Reservation(False, 0, (need - self._balance) / self._rate)

    def settle(self, reservation: Reservation, prompt_tokens: int, completion_tokens: int) -> None:
        """Return what the request reserved but did not use (stopped early, or cancelled)."""
        used = prompt_tokens + completion_tokens
        if not reservation.allowed or used > reservation.reserved:
            raise ValueError(f"cannot settle {used} tokens against a reservation of {reservation.reserved}")
        with self._lock:
            self._refill()
            self._balance = min(self._burst, self._balance + reservation.reserved - used)

    def available(self) -> float:
        with self._lock:
            self._refill()
            return self._balance

    def _refill(self) -> None:  # caller holds the lock
        now = self._clock()
        self._balance = min(self._burst, self._balance + max(0.0, now - self._last) * self._rate)
        self._last = now
# --8<-- [end:budget]


# --8<-- [start:http]
def admit_response(budget: TokenBudget, prompt_tokens: int, max_tokens: int
                   ) -> tuple[int, dict[str, str], Reservation | None]:
    """``(status, headers, reservation)``: 200 and the reservation, 429 with Retry-After, or 400."""
    try:
        r = budget.reserve(prompt_tokens, max_tokens)
    except ValueError:
        return 400, {}, None
    if r.allowed:
        return 200, {}, r
    return 429, {"Retry-After": retry_after_header(r.retry_after)}, None
# --8<-- [end:http]
