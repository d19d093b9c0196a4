"""Q117: a canary for a model update that watches the shape of the outputs, and the fingerprint that ties
every response to the exact serving configuration that produced it.

``shape`` turns responses (finish reason, output tokens, whether the body had to be JSON and parsed, whether a
tool call was expected and made) into rates. ``compare`` tests each rate of the canary against the stable
version with a two-proportion z-test (pooled variance), and reports the ones that moved beyond ``z_crit``.
``fingerprint`` hashes the configuration fields that decide what a response looks like.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Response:
    finish_reason: str              # "stop", "length", "tool_calls"
    output_tokens: int
    json_expected: bool = False
    json_ok: bool = False
    empty: bool = False


# --8<-- [start:compare]
def shape(responses: Sequence[Response]) -> dict[str, tuple[int, int]]:
    """Rate name -> (count, denominator)."""
    n = len(responses)
    js = [r for r in responses if r.json_expected]
    return {"finish=length": (sum(r.finish_reason == "length" for r in responses), n),
            "finish=tool_calls": (sum(r.finish_reason == "tool_calls" for r in responses), n),
            "empty output": (sum(r.empty for r in responses), n),
            "invalid JSON": (sum(not r.json_ok for r in js), len(js))}


def two_proportion_z(x1: int, n1: int, x2: int, n2: int) -> float:
    """z for p2 - p1 with the pooled variance; 0.0 when there is no variance to test against."""
    if n1 == 0 or n2 == 0:
        return 0.0
    p = (x1 + x2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    return 0.0 if se == 0 else (x2 / n2 - x1 / n1) / se


def compare(stable: Sequence[Response], canary: Sequence[Response], z_crit: float = 3.0) -> list[str]:
    a, b = shape(stable), shape(canary)
    out = []
    for name in a:
        z = two_proportion_z(*a[name], *b[name])
        if abs(z) > z_crit:
            out.append(f"{name}: {a[name][0]}/{a[name][1]} -> {b[name][0]}/{b[name][1]} (z = {z:.2f})")
    return out
# --8<-- [end:compare]


# --8<-- [start:fingerprint]
FINGERPRINT_FIELDS = ("model_revision", "chat_template_sha256", "sampling_defaults", "stop_token_ids",
                      "engine_version", "image_digest", "quantization", "kv_cache_dtype")


def fingerprint(config: dict) -> str:
    missing = [k for k in FINGERPRINT_FIELDS if k not in config]
    if missing:
        raise ValueError(f"fingerprint: missing fields {missing}")
    canonical = json.dumps({k: config[k] for k in FINGERPRINT_FIELDS}, sort_keys=True, separators=(",", ":"))
    return "fp_" + hashlib.sha256(canonical.encode()).hexdigest()[:16]
# --8<-- [end:fingerprint]
