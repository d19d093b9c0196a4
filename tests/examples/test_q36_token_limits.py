"""Q36: examples/serving/token_limits.py. Expected values are hand arithmetic in the comments."""

from __future__ import annotations

import random
import threading

import pytest

from examples.serving.token_limits import TokenBudget, admit_response


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_reserves_the_worst_case_and_refunds_the_unused_part() -> None:
    clock = Clock()
    b = TokenBudget(tokens_per_s=100, burst=1_000, clock=clock)
    r = b.reserve(prompt_tokens=300, max_tokens=500)        # 800 of 1,000 reserved
    assert r.allowed and b.available() == 200
    assert not b.reserve(100, 200).allowed                  # 300 needed, 200 there
    b.settle(r, prompt_tokens=300, completion_tokens=50)    # used 350: 450 come back
    assert b.available() == 650
    assert b.reserve(100, 200).allowed


def test_retry_after_is_the_deficit_over_the_rate_rounded_up() -> None:
    clock = Clock()
    b = TokenBudget(tokens_per_s=100, burst=1_000, clock=clock)
    assert b.reserve(900, 100).allowed                       # empty
    status, headers, _ = admit_response(b, 200, 50)          # 250 missing at 100/s = 2.5 s -> "3"
    assert (status, headers) == (429, {"Retry-After": "3"})
    clock.t = 2.5
    assert admit_response(b, 200, 50)[0] == 200              # exactly enough after 2.5 s


def test_a_request_that_can_never_fit_is_a_client_error() -> None:
    b = TokenBudget(tokens_per_s=100, burst=1_000, clock=Clock())
    assert admit_response(b, 900, 200)[0] == 400             # 1,100 > burst: retrying cannot help
    with pytest.raises(ValueError, match="needs 1100 tokens"):
        b.reserve(900, 200)


def test_settling_more_than_was_reserved_is_refused() -> None:
    b = TokenBudget(tokens_per_s=100, burst=1_000, clock=Clock())
    r = b.reserve(10, 10)
    with pytest.raises(ValueError, match="cannot settle 30"):
        b.settle(r, 10, 20)


def test_never_grants_more_than_burst_plus_rate_times_elapsed_under_threads() -> None:
    clock = Clock()
    lock = threading.Lock()
    b = TokenBudget(tokens_per_s=50, burst=400, clock=clock)
    granted = []

    def worker(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(300):
            with lock:
                clock.t += 0.01
            prompt, max_new = rng.randint(0, 50), rng.randint(1, 50)
            r = b.reserve(prompt, max_new)
            if r.allowed:
                used = prompt + rng.randint(0, max_new)
                b.settle(r, prompt, used - prompt)
                granted.append(used)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert granted
    assert sum(granted) <= 400 + 50 * clock.t + 1e-6
