"""Q117: examples/operations/output_shape.py. z values are worked by hand in the comments."""

from __future__ import annotations

import math

import pytest

from examples.operations.output_shape import FINGERPRINT_FIELDS, Response, compare, fingerprint, two_proportion_z


def test_two_proportion_z_by_hand() -> None:
    # p1 = 100/5000 = 0.02, p2 = 200/5000 = 0.04, pooled p = 0.03,
    # se = sqrt(0.03 * 0.97 * (2 / 5000)) = sqrt(0.00001164) = 0.0034117, z = 0.02 / 0.0034117 = 5.862.
    assert math.isclose(two_proportion_z(100, 5000, 200, 5000), 5.862, abs_tol=0.001)
    assert two_proportion_z(0, 10, 0, 10) == 0.0 and two_proportion_z(1, 0, 1, 10) == 0.0


def fleet(n: int, length: int, tool: int, bad_json: int) -> list[Response]:
    rs = [Response("length", 512) for _ in range(length)]
    rs += [Response("tool_calls", 40) for _ in range(tool)]
    rs += [Response("stop", 200, json_expected=True, json_ok=False) for _ in range(bad_json)]
    rs += [Response("stop", 200, json_expected=True, json_ok=True) for _ in range(n - len(rs))]
    return rs


def test_canary_with_more_truncations_and_fewer_tool_calls_is_flagged() -> None:
    stable = fleet(5000, length=100, tool=500, bad_json=10)
    canary = fleet(5000, length=200, tool=300, bad_json=12)
    found = compare(stable, canary)
    # length: z = 5.86 (above). tool_calls: p 0.10 -> 0.06, pooled 0.08, se = sqrt(0.08*0.92*0.0004) = 0.005426,
    # z = -0.04 / 0.005426 = -7.37. Invalid JSON: 10/4400 vs 12/4500 is well inside noise.
    assert found == ["finish=length: 100/5000 -> 200/5000 (z = 5.86)",
                     "finish=tool_calls: 500/5000 -> 300/5000 (z = -7.37)"]


def test_identical_shapes_pass() -> None:
    assert compare(fleet(2000, 40, 200, 5), fleet(2000, 40, 200, 5)) == []


def test_fingerprint_is_stable_and_sensitive() -> None:
    cfg = {k: "x" for k in FINGERPRINT_FIELDS} | {"sampling_defaults": {"temperature": 0.6, "top_p": 0.9}}
    same = dict(reversed(list(cfg.items()))) | {"sampling_defaults": {"top_p": 0.9, "temperature": 0.6}}
    assert fingerprint(cfg) == fingerprint(same)                 # key order does not matter
    assert fingerprint(cfg) != fingerprint(cfg | {"chat_template_sha256": "y"})
    assert fingerprint(cfg | {"replica": "r7"}) == fingerprint(cfg)   # fields outside the list are ignored
    with pytest.raises(ValueError, match=r"missing fields \['image_digest'\]"):
        fingerprint({k: "x" for k in FINGERPRINT_FIELDS if k != "image_digest"})
