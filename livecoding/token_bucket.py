"""Q93: a thread-safe token-bucket rate limiter with an injected clock.

The bucket holds at most ``burst`` tokens and gains ``rate`` tokens per second. A request that
costs ``n`` tokens is allowed if ``n`` tokens are there, and then takes them; otherwise it is
refused and told how long until ``n`` tokens will be there. Refill is computed lazily from the
time since the last call, so there is no background thread and an idle bucket costs nothing.

Over any interval of length ``T`` starting from a full bucket, at most ``burst + rate * T``
tokens are granted; that is the property the tests check under many threads.

``rate``, ``burst`` and every cost are positive finite numbers (``ValueError`` otherwise). A clock
that steps back adds no tokens. A refusal carries ``whole_seconds``: a client that waits that many
seconds and retries is allowed, unless other requests took the tokens meanwhile.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from ._checks import check_real

__all__ = ["Decision", "TokenBucket", "rate_limited_response", "retry_after_header"]


# --8<-- [start:core]
@dataclass(frozen=True, slots=True)
class Decision:
    allowed: bool
    retry_after: float  # seconds until the request could succeed; 0.0 when allowed
    whole_seconds: int = 0  # whole seconds after which a retry is sure to succeed (Retry-After)


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
        self._rate = check_real("rate", rate, allow_zero=False, allow_inf=False)
        self._burst = check_real("burst", burst, allow_zero=False, allow_inf=False)
        self._clock = clock
        self._lock = threading.Lock()
        if initial is not None:
            initial = min(check_real("initial", initial, allow_inf=False), self._burst)
        self._tokens = self._burst if initial is None else initial
        self._last = clock()

    def try_acquire(self, n: float = 1.0) -> Decision:
        """Take ``n`` tokens if available; never blocks."""
        check_real("cost", n, allow_zero=False, allow_inf=False)
        if n > self._burst:
            # It can never fit: reject as a bad request rather than promise a retry time.
            raise ValueError(f"cost {n} exceeds burst {self._burst}")
        with self._lock:  # refill + check + take must be one atomic step
            self._refill()
            if self._tokens >= n:
                self._tokens -= n
                return Decision(True, 0.0)
            return Decision(False, (n - self._tokens) / self._rate, self._whole_seconds(n))

    def available(self) -> float:
        with self._lock:
            self._refill()
            return self._tokens

    def _tokens_at(self, now: float) -> float:  # caller holds the lock
        elapsed = max(0.0, now - self._last)  # a clock that steps back adds nothing
        return min(self._burst, self._tokens + elapsed * self._rate)

    def _refill(self) -> None:  # caller holds the lock
        now = self._clock()
        self._tokens = self._tokens_at(now)
        self._last = now

    def _whole_seconds(self, n: float) -> int:
        """Fewest whole seconds h >= 1 after which the bucket's own float arithmetic grants n.

        ``(n - tokens) / rate`` rounded up is not enough: the clock a client reads after waiting
        h seconds is ``last + h`` rounded to a float, and the refill it triggers rounds too.
        So h is checked with the same arithmetic the retry will run. Rounding is monotonic, so
        any later clock reading grants ``n`` as well.
        """
        h = max(1, math.ceil((n - self._tokens) / self._rate))
        while self._tokens_at(self._last + h) < n:
            h += 1
        while h > 1 and self._tokens_at(self._last + h - 1) >= n:
            h -= 1
        return h
# --8<-- [end:core]


# --8<-- [start:http]
def retry_after_header(seconds: float) -> str:
    """Retry-After takes whole seconds (RFC 9110): round up, never below the wait, at least 1."""
    return str(max(1, math.ceil(check_real("seconds", seconds, allow_inf=False))))


def rate_limited_response(bucket: TokenBucket, cost: float = 1.0) -> tuple[int, dict[str, str]]:
    """Map one request to ``(status, headers)``: 200 if allowed, else 429 with Retry-After."""
    decision = bucket.try_acquire(cost)
    if decision.allowed:
        return 200, {}
    return 429, {"Retry-After": str(decision.whole_seconds)}  # a promise, checked by the bucket
# --8<-- [end:http]
