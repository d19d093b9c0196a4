"""Q93: a thread-safe token-bucket rate limiter with an injected clock.

The bucket holds at most ``burst`` tokens and gains ``rate`` tokens per second. A request that
costs ``n`` tokens is allowed if ``n`` tokens are there, and then takes them; otherwise it is
refused and told how long until ``n`` tokens will be there. Refill is computed lazily from the
time since the last call, so there is no background thread and an idle bucket costs nothing.

Over any interval of length ``T`` starting from a full bucket, at most ``burst + rate * T``
tokens are granted; that is the property the tests check under many threads.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Decision", "TokenBucket", "rate_limited_response", "retry_after_header"]


# --8<-- [start:core]
@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    retry_after: float  # seconds until the request could succeed; 0.0 when allowed


class TokenBucket:
    """``rate`` tokens per second, at most ``burst`` banked; starts full unless told otherwise."""

    def __init__(
        self,
        rate: float,
        burst: float,
        *,
        clock: Callable[[], float] = time.monotonic,
        initial: float | None = None,
    ) -> None:
        if rate <= 0 or burst <= 0:
            raise ValueError("rate and burst must be > 0")
        self._rate = rate
        self._burst = burst
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens = burst if initial is None else min(float(initial), burst)
        self._last = clock()

    def try_acquire(self, n: float = 1.0) -> Decision:
        """Take ``n`` tokens if available; never blocks."""
        if n <= 0:
            raise ValueError("n must be > 0")
        if n > self._burst:
            # It can never fit: reject as a bad request rather than promise a retry time.
            raise ValueError(f"cost {n} exceeds burst {self._burst}")
        with self._lock:  # refill + check + take must be one atomic step
            self._refill()
            if self._tokens >= n:
                self._tokens -= n
                return Decision(True, 0.0)
            return Decision(False, (n - self._tokens) / self._rate)

    def available(self) -> float:
        with self._lock:
            self._refill()
            return self._tokens

    def _refill(self) -> None:  # caller holds the lock
        now = self._clock()
        elapsed = max(0.0, now - self._last)  # a clock that steps back adds nothing
        self._tokens = min(self._burst, self._tokens + elapsed * self._rate)
        self._last = now
# --8<-- [end:core]


# --8<-- [start:http]
def retry_after_header(seconds: float) -> str:
    """Retry-After takes whole seconds (RFC 9110): round up, so a client that obeys succeeds.

    The 1e-9 slack keeps float noise (2.0000000000000004) from turning 2 into 3.
    """
    return str(max(1, math.ceil(seconds - 1e-9)))


def rate_limited_response(bucket: TokenBucket, cost: float = 1.0) -> tuple[int, dict[str, str]]:
    """Map one request to ``(status, headers)``: 200 if allowed, else 429 with Retry-After."""
    decision = bucket.try_acquire(cost)
    if decision.allowed:
        return 200, {}
    return 429, {"Retry-After": retry_after_header(decision.retry_after)}
# --8<-- [end:http]
