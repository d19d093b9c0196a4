"""Q60's request log record (examples/observability/request_log.py): the keep rule keeps what an
incident needs, samples the rest at the configured share and agrees with itself for one trace id; the
record rejects malformed ids and inconsistent error fields; nothing user-written reaches the JSON."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from examples.observability.request_log import RequestLog, keep, pseudonymize, to_json

BASE = dict(timestamp="2025-10-02T14:20:01.250Z", level="INFO", request_id="req-1",
            trace_id="4bf92f3577b34da6a3ce929d0e0e4736", span_id="00f067aa0ba902b7", model="chat",
            model_revision="sha256:abc", replica="vllm-0", tenant="t1", prompt_tokens=812,
            completion_tokens=95, ttft_s=0.31, duration_s=2.4, finish_reason="stop", status=200,
            error_class=None, stream=True)


def rec(**kw) -> RequestLog:
    return RequestLog(**{**BASE, **kw})


def test_errors_truncations_slow_and_traced_requests_are_always_kept():
    low = "0" * 18 + "f" * 14   # trace id whose low bits are the largest value: never sampled at rate < 1
    assert not keep(rec(trace_id=low), rate=0.5, slow_s=5)
    assert keep(rec(trace_id=low, status=503, error_class="engine_dead", finish_reason="error", level="ERROR"),
                rate=0.0, slow_s=5)
    assert keep(rec(trace_id=low, finish_reason="length", level="WARNING"), rate=0.0, slow_s=5)
    assert keep(rec(trace_id=low, ttft_s=6.0), rate=0.0, slow_s=5)
    assert keep(rec(trace_id=low, duration_s=30.0), rate=0.0, slow_s=5)
    assert keep(rec(trace_id=low), rate=0.0, slow_s=5, trace_sampled=True)


def test_sampling_keeps_the_configured_share_and_is_deterministic_per_trace():
    rng = random.Random(7)
    ids = [f"{rng.getrandbits(128):032x}" for _ in range(20000)]
    kept = [keep(rec(trace_id=t), rate=0.1, slow_s=5) for t in ids]
    share = sum(kept) / len(kept)
    # binomial standard deviation at n=20000, p=0.1 is about 0.0021; allow five of them
    assert abs(share - 0.1) < 0.011, share
    assert kept == [keep(rec(trace_id=t), rate=0.1, slow_s=5) for t in ids]
    # a lower rate keeps a subset of what a higher rate keeps (same trace, same decision downstream)
    at_5 = {t for t in ids if keep(rec(trace_id=t), rate=0.05, slow_s=5)}
    at_10 = {t for t, k in zip(ids, kept) if k}
    assert at_5 <= at_10 and at_5
    assert all(keep(rec(trace_id=t), rate=1.0, slow_s=5) for t in ids[:100])
    assert not any(keep(rec(trace_id=t), rate=0.0, slow_s=5) for t in ids[:100])


def test_bad_records_and_rates_are_rejected_with_the_reason():
    with pytest.raises(ValueError, match="trace_id"):
        rec(trace_id="4bf92f35")
    with pytest.raises(ValueError, match="trace_id"):
        rec(trace_id="0" * 32)
    with pytest.raises(ValueError, match="span_id"):
        rec(span_id="XYZ0000000000000")
    with pytest.raises(ValueError, match="finish_reason"):
        rec(finish_reason="done")
    with pytest.raises(ValueError, match="error_class must be set"):
        rec(status=500)
    with pytest.raises(ValueError, match="error_class must be set"):
        rec(error_class="timeout")
    with pytest.raises(ValueError, match="rate"):
        keep(rec(), rate=1.5, slow_s=5)


def test_json_line_has_the_fields_and_no_content():
    line = to_json(rec())
    assert "\n" not in line
    doc = json.loads(line)
    assert set(doc) == {f.name for f in dataclasses.fields(RequestLog)}
    assert not {"prompt", "messages", "completion", "output", "api_key"} & set(doc)
    assert doc["trace_id"] == BASE["trace_id"] and doc["ttft_s"] == 0.31


def test_pseudonymize_is_stable_keyed_and_refuses_an_empty_key():
    a = pseudonymize("alice@example.com", b"k1")
    assert a == pseudonymize("alice@example.com", b"k1") and len(a) == 16
    assert a != pseudonymize("alice@example.com", b"k2")
    assert a != pseudonymize("bob@example.com", b"k1")
    assert "alice" not in a
    with pytest.raises(ValueError, match="empty key"):
        pseudonymize("alice@example.com", b"")
