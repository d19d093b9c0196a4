"""Q60: one structured log record per LLM request, written by the gateway, with a keep-or-drop rule.

The record holds what an on-call engineer needs to find and explain one request (ids that join it to
its trace and to the engine's own lines, model and revision, tenant, token counts, timings, finish
reason, error class) and nothing that makes the log store a second copy of user data: no prompt, no
completion, no raw API key. Fields that could carry identifying data are hashed with a keyed hash, so
equal values can still be grouped without being readable.

Sampling: every error, every truncated or slow answer and every request whose trace was sampled is
kept; the rest is kept with probability ``rate``, decided from the trace id so that repeated calls and
other services (the trace sampler, the engine's logs) can make the same choice for the same request.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import asdict, dataclass
from datetime import datetime, timezone

__all__ = ["RequestLog", "keep", "pseudonymize", "to_json"]

#: OpenAI-style finish reasons (vLLM 0.11 also returns these); "length" means cut off at max_tokens.
FINISH_REASONS = frozenset({"stop", "length", "tool_calls", "content_filter", "abort", "error"})
LEVELS = frozenset({"DEBUG", "INFO", "WARNING", "ERROR"})


# --8<-- [start:record]
@dataclass(frozen=True)
class RequestLog:
    timestamp: str              # RFC 3339 in UTC, when the request finished
    level: str                  # INFO on success, WARNING when truncated, ERROR on failure
    request_id: str             # X-Request-Id: also the base of vLLM's request id
    trace_id: str               # 32 hex digits, from the W3C traceparent
    span_id: str                # 16 hex digits: the gateway's span for this request
    model: str                  # served model name, as the client asked for it
    model_revision: str         # weights revision or image digest actually serving it
    replica: str                # pod that served it
    tenant: str                 # pseudonymized tenant or API-key id, never the key itself
    prompt_tokens: int
    completion_tokens: int
    ttft_s: float | None        # None if no token was produced
    duration_s: float
    finish_reason: str          # stop, length, tool_calls, content_filter, abort, error
    status: int                 # HTTP status returned to the client
    error_class: str | None     # e.g. "timeout", "engine_dead", "context_too_long"; None on success
    stream: bool
# --8<-- [end:record]

    def __post_init__(self) -> None:
        problems = []
        if self.level not in LEVELS:
            problems.append(f"level {self.level!r} not in {sorted(LEVELS)}")
        if len(self.trace_id) != 32 or not _is_hex(self.trace_id) or set(self.trace_id) == {"0"}:
            problems.append(f"trace_id {self.trace_id!r} is not 32 hex digits (and not all zero)")
        if len(self.span_id) != 16 or not _is_hex(self.span_id) or set(self.span_id) == {"0"}:
            problems.append(f"span_id {self.span_id!r} is not 16 hex digits (and not all zero)")
        if self.finish_reason not in FINISH_REASONS:
            problems.append(f"finish_reason {self.finish_reason!r} not in {sorted(FINISH_REASONS)}")
        if self.prompt_tokens < 0 or self.completion_tokens < 0 or self.duration_s < 0:
            problems.append("token counts and duration must not be negative")
        if (self.error_class is None) != (self.status < 400):
            problems.append(f"error_class must be set exactly when status >= 400 (status {self.status}, "
                            f"error_class {self.error_class!r})")
        if problems:
            raise ValueError("RequestLog: " + "; ".join(problems))


def _is_hex(s: str) -> bool:
    return all(c in "0123456789abcdef" for c in s)


# --8<-- [start:pseudonymize]
def pseudonymize(value: str, key: bytes) -> str:
    """Keyed hash of an identifier: groupable (same input, same output) but not reversible without
    the key, and not guessable from a list of candidates, unlike a plain SHA-256."""
    if not key:
        raise ValueError("pseudonymize: an empty key makes the hash a plain, guessable digest")
    return hmac.new(key, value.encode("utf-8"), hashlib.sha256).hexdigest()[:16]
# --8<-- [end:pseudonymize]


# --8<-- [start:keep]
def keep(rec: RequestLog, *, rate: float, slow_s: float, trace_sampled: bool = False) -> bool:
    """Keep every error, truncation, slow answer and traced request; sample the rest by trace id."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"keep: rate must be within [0, 1], got {rate}")
    if rec.status >= 400 or rec.finish_reason == "length" or trace_sampled:
        return True
    if rec.duration_s > slow_s or (rec.ttft_s is not None and rec.ttft_s > slow_s):
        return True
    # OpenTelemetry SDKs draw trace ids at random (Trace Context level 2 lets a flag promise that the
    # rightmost 56 bits are random); a fixed share of that range gives a fixed share of requests.
    return int(rec.trace_id[-14:], 16) < rate * (1 << 56)
# --8<-- [end:keep]


def to_json(rec: RequestLog) -> str:
    """One line of JSON, keys in a stable order, for a log shipper to parse without regular expressions."""
    return json.dumps(asdict(rec), separators=(",", ":"), sort_keys=True)


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
