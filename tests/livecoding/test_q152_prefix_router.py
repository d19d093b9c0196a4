"""Q152: PrefixRouter; expected values are hand arithmetic or a brute-force model of the same rule."""

from __future__ import annotations

import hashlib
import math
import random
import struct
import sys
import threading

import pytest
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from lc_support import (BAD_COUNTS, DETERMINISTIC, INF, NAN, SlowStr, best_seconds_per_op, gil_pressure, join_all,
                        run_threads, traced_growth)

from livecoding.prefix_router import PrefixRouter, block_hashes


# --- block hashes -------------------------------------------------------------------------------------

def test_block_hashes_by_hand() -> None:
    tokens = list(range(10))  # two full blocks of 4; the partial block (8, 9) gets no hash
    h = block_hashes(tokens, 4)
    first = hashlib.sha256(struct.pack("<4I", 0, 1, 2, 3)).digest()
    second = hashlib.sha256(first + struct.pack("<4I", 4, 5, 6, 7)).digest()
    assert h == [first, second]
    assert block_hashes([1, 2, 3], 4) == []


def test_a_hash_names_the_whole_prefix() -> None:
    a = block_hashes([1, 1, 1, 1, 2, 2, 2, 2], 4)
    b = block_hashes([3, 3, 3, 3, 2, 2, 2, 2], 4)
    assert a[1] != b[1]  # same second block, different first block: different prefix, different hash
    assert block_hashes([2, 2, 2, 2], 4)[0] != a[1]  # same block content at another position


@pytest.mark.parametrize("tokens", [[1, -1], [1, 2**32], [1.0, 2], [True, 2], [NAN], "abcd", b"abcd", {1, 2}, None])
def test_block_hashes_reject_bad_tokens(tokens) -> None:
    with pytest.raises(ValueError, match="tokens"):
        block_hashes(tokens, 2)


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_bad_block_size(bad) -> None:
    with pytest.raises(ValueError, match="block_size"):
        block_hashes([1, 2, 3], bad)
    with pytest.raises(ValueError, match="block_size"):
        PrefixRouter(["a"], block_size=bad)


# --- constructor and replica set ----------------------------------------------------------------------

@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_bad_capacity(bad) -> None:
    with pytest.raises(ValueError, match="capacity_blocks"):
        PrefixRouter(["a"], capacity_blocks=bad)


@pytest.mark.parametrize("bad", [-1.0, NAN, INF, "1", None, True])
def test_bad_load_weight(bad) -> None:
    with pytest.raises(ValueError, match="load_weight"):
        PrefixRouter(["a"], load_weight=bad)


@pytest.mark.parametrize("replicas", [[], ["a", "a"], ["a", ""], ["a", 3], [None]])
def test_bad_replica_sets(replicas) -> None:
    with pytest.raises(ValueError, match="replica"):
        PrefixRouter(replicas)


def test_unknown_replicas_and_tickets_are_errors() -> None:
    r = PrefixRouter(["a", "b"], block_size=2)
    for call in (r.pending, r.cached, r.remove_replica):
        with pytest.raises(ValueError, match="unknown replica"):
            call("zz")
    t = r.route([1, 2, 3, 4]).ticket
    r.finish(t)
    for bad in (t, 999, None, "x"):
        with pytest.raises(ValueError, match="ticket"):
            r.finish(bad)
    r.remove_replica("a")
    with pytest.raises(ValueError, match="last replica"):
        r.remove_replica("b")
    with pytest.raises(ValueError, match="tokens"):
        r.route([])


# --- routing decisions --------------------------------------------------------------------------------

def test_affinity_then_load_by_hand() -> None:
    r = PrefixRouter(["a", "b"], block_size=4)
    doc = list(range(100, 112))                   # 12 tokens = 3 blocks
    first = r.route(doc + [1, 2])                 # both empty and idle: tie -> "a"; 14 tokens to prefill
    assert (first.replica, first.cached_tokens, first.cost) == ("a", 0, 14)
    # a: 1 * 14 pending + (14 - 12 cached) = 16; b: 0 + 14 = 14 -> b, although a holds the prefix
    second = r.route(doc + [3, 4])
    assert (second.replica, second.cached_tokens, second.cost) == ("b", 0, 14)
    r.finish(first.ticket)
    r.finish(second.ticket)
    # both idle now and both hold the 3 blocks: tie on cost 2 and on pending 0 -> first in order, "a"
    third = r.route(doc + [5, 6])
    assert (third.replica, third.cached_tokens, third.cost) == ("a", 12, 2)
    assert r.pending("a") == 2 and r.pending("b") == 0


def test_load_weight_zero_is_pure_affinity() -> None:
    r = PrefixRouter(["a", "b"], block_size=4, load_weight=0)
    doc = list(range(50, 66))
    assert r.route(doc).replica == "a"
    for _ in range(20):  # never finished: a's pending grows, but load is ignored
        assert r.route(doc + [7]).replica == "a"
    assert r.pending("b") == 0


def test_longest_match_wins_when_idle() -> None:
    r = PrefixRouter(["a", "b", "c"], block_size=2)
    t1 = r.route([1, 2, 3, 4]).ticket                 # a: blocks (1,2), (3,4)
    t2 = r.route([1, 2, 3, 4, 5, 6, 7, 8, 9]).ticket  # a has pending 4, uncached 5: cost 9; b: 9, c: 9
    r.finish(t1)
    r.finish(t2)
    # who got the second? tie on cost 9 between a (pending 4) and b, c (pending 0) -> b
    route = r.route([1, 2, 3, 4, 5, 6, 7, 8, 0])
    assert route.replica == "b" and route.cached_tokens == 8  # b holds 4 blocks, a only 2


def test_new_replica_starts_empty_and_removed_replica_is_forgotten() -> None:
    r = PrefixRouter(["a"], block_size=2)
    t = r.route([5, 6, 7, 8])
    r.add_replica("b")
    assert r.cached("b") == frozenset()
    with pytest.raises(ValueError, match="already exists"):
        r.add_replica("b")
    r.remove_replica("a")
    r.finish(t.ticket)  # a ticket of a removed replica can still be finished
    assert r.route([5, 6, 7, 8]).cached_tokens == 0


def test_the_documented_defaults() -> None:
    # PrefixRouter(replicas, block_size=16, capacity_blocks=100_000, load_weight=1.0)
    r = PrefixRouter(["a", "b"])
    first = r.route([3] * 33)                     # 2 full blocks of 16 and 1 token
    assert (first.replica, first.cost) == ("a", 33)
    second = r.route([3] * 33)                    # a: 1.0 * 33 pending + 33 - 32 = 34; b: 33
    assert (second.replica, second.cached_tokens, second.cost) == ("b", 0, 33)
    r.finish(first.ticket)
    third = r.route([3] * 33)                     # a idle and holding both blocks: 1 token to prefill
    assert (third.replica, third.cached_tokens, third.cost) == ("a", 32, 1)
    fourth = r.route([3] * 33)                    # a: 1.0 * 1 pending + 1 = 2; b: 33 + 1 = 34
    assert (fourth.replica, fourth.cost) == ("a", 2)
    r.finish(r.route(list(range(100_001 * 16))).ticket)  # one prompt of 100,001 blocks (to b or a)
    assert sorted(len(r.cached(n)) for n in ("a", "b")) == [2, 100_000]  # the oldest block evicted


def test_a_single_name_is_one_replica() -> None:
    r = PrefixRouter("solo")                      # a str is a name, not an iterable of one-letter names
    assert r.pending("solo") == 0 and r.route([1]).replica == "solo"


# --- eviction: bounded per replica, tail first --------------------------------------------------------

def test_capacity_evicts_least_recent_tail_first() -> None:
    r = PrefixRouter(["a"], block_size=2, capacity_blocks=3)
    r.finish(r.route([1, 1, 2, 2, 3, 3]).ticket)      # 3 blocks: full
    r.finish(r.route([9, 9, 8, 8]).ticket)            # 2 more: evicts the tail of the first prompt first
    assert len(r.cached("a")) == 3
    route = r.route([1, 1, 2, 2, 3, 3])
    assert route.cached_tokens == 2                   # its head block survived; blocks 2 and 3 were evicted


@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=12), min_size=1, max_size=40),
       st.integers(1, 6), st.integers(1, 3))
@DETERMINISTIC
def test_match_equals_brute_force_and_index_stays_consistent(prompts, capacity, n_replicas) -> None:
    names = [f"r{i}" for i in range(n_replicas)]
    r = PrefixRouter(names, block_size=2, capacity_blocks=capacity, load_weight=0.5)
    for p in prompts:
        hashes = block_hashes(p, 2)
        # brute force: for each replica, the longest run of leading blocks in its LRU
        usable = min(len(hashes), (len(p) - 1) // 2)  # vLLM's cap: a hit covers at most prompt - 1 tokens
        want = {}
        for n in names:
            held = r.cached(n)
            k = 0
            while k < usable and hashes[k] in held:
                k += 1
            want[n] = k * 2
        costs = {n: 0.5 * r.pending(n) + len(p) - want[n] for n in names}
        route = r.route(p)
        assert route.cached_tokens == want[route.replica]
        assert route.cost == min(costs.values())
        if random.Random(len(p)).random() < 0.5:
            r.finish(route.ticket)
        for n in names:
            assert len(r.cached(n)) <= capacity


# --- concurrency --------------------------------------------------------------------------------------

def test_threads_routing_and_finishing_keep_the_books_exact() -> None:
    r = PrefixRouter([f"r{i}" for i in range(4)], block_size=4, capacity_blocks=64)
    shared = list(range(200, 232))
    routed: list[tuple[str, int, int]] = []
    lock = threading.Lock()

    def worker(seed: int) -> None:
        rnd = random.Random(seed)
        mine = []
        for i in range(300):
            tokens = shared[: rnd.randrange(4, 32)] + [seed, i]
            route = r.route(tokens)
            mine.append((route.replica, len(tokens) - route.cached_tokens, route.ticket))
            if rnd.random() < 0.7:
                r.finish(route.ticket)
                mine[-1] = (route.replica, 0, route.ticket)
        with lock:
            routed.extend(mine)

    with gil_pressure():
        threads = [threading.Thread(target=worker, args=(s,)) for s in range(8)]
        for t in threads:
            t.start()
        join_all(threads)
    assert len({t for _, _, t in routed}) == 8 * 300  # every ticket unique
    for name in (f"r{i}" for i in range(4)):
        assert r.pending(name) == sum(left for rep, left, _ in routed if rep == name)
        assert len(r.cached(name)) <= 64
    # the index the routes read and the per-replica sets agree: a fresh prompt of every cached prefix...
    for i in range(4, 33):
        probe = shared[:i] + [10**6]
        hashes = block_hashes(probe, 4)
        best = {}
        for name in (f"r{j}" for j in range(4)):
            held, k = r.cached(name), 0
            while k < min(len(hashes), (len(probe) - 1) // 4) and hashes[k] in held:
                k += 1
            best[name] = k * 4
        route = r.route(probe)
        assert route.cached_tokens == best[route.replica]


def test_a_ticket_finishes_once_under_races() -> None:
    r = PrefixRouter(["a"], block_size=2)
    ticket = r.route([1, 2, 3, 4]).ticket
    wins = []

    def finisher() -> None:
        try:
            r.finish(ticket)
            wins.append(1)
        except ValueError:
            pass

    with gil_pressure():
        threads = [threading.Thread(target=finisher) for _ in range(16)]
        for t in threads:
            t.start()
        join_all(threads)
    assert wins == [1] and r.pending("a") == 0


# --- complexity: routing cost does not grow with the number of cached prefixes -----------------------

def test_route_time_is_independent_of_index_size() -> None:
    def setup(n_prefixes: int):
        r = PrefixRouter(["a", "b", "c", "d"], block_size=16, capacity_blocks=10**7)
        for i in range(n_prefixes):  # unrelated cached prompts of 4 blocks each
            r.finish(r.route([i % 65536, i // 65536] + [7] * 62).ticket)
        prompt = [1] * 256

        def op(i: int):
            r.finish(r.route(prompt).ticket)
        return op

    small = best_seconds_per_op(setup, 100, ops=300)
    large = best_seconds_per_op(setup, 10_000, ops=300, limit=3 * small)
    assert large / small < 3, f"route slowed {large / small:.1f}x with 100x more cached prefixes"


# --- second-reader cases: identity of removed replicas, ticket types, short prompts, engine's full-hit rule ---

def test_an_old_ticket_does_not_touch_a_new_replica_of_the_same_name() -> None:
    r = PrefixRouter(["a", "b"], block_size=2)
    old = r.route([1, 2, 3, 4]).ticket         # a: 4 tokens pending
    r.remove_replica("a")
    r.add_replica("a")                         # a new, idle replica that reuses the name
    r.finish(old)                              # belongs to the removed replica: must not subtract from the new one
    assert r.pending("a") == 0
    fresh = r.route([9, 9, 9, 9])
    assert fresh.replica == "b"                # tie on cost and load: b was added before the new a
    r.finish(fresh.ticket)
    assert (r.pending("a"), r.pending("b")) == (0, 0)


@pytest.mark.parametrize("bad", [True, 1.0, 1 + 0j, [1], {1: 1}])
def test_finish_refuses_tickets_that_only_compare_equal(bad) -> None:
    r = PrefixRouter(["a"], block_size=2)
    ticket = r.route([1, 2, 3, 4]).ticket
    assert ticket == 1
    with pytest.raises(ValueError, match="ticket"):
        r.finish(bad)
    assert r.pending("a") == 4                 # ticket 1 is still open
    r.finish(ticket)
    assert r.pending("a") == 0


@pytest.mark.parametrize("bad", [[], {}, None, 3, ""])
def test_replica_lookups_refuse_non_names(bad) -> None:
    r = PrefixRouter(["a", "b"])
    for call in (r.pending, r.cached, r.remove_replica):
        with pytest.raises(ValueError, match="replica"):
            call(bad)


@pytest.mark.parametrize("bad", [None, 3, 2.5])
def test_replicas_must_be_an_iterable_of_names(bad) -> None:
    with pytest.raises(ValueError, match="replica"):
        PrefixRouter(bad)


def test_a_prompt_shorter_than_a_block_is_routed_and_indexes_nothing() -> None:
    r = PrefixRouter(["a", "b"], block_size=4)
    first = r.route([7])
    assert (first.replica, first.cached_tokens, first.cost) == ("a", 0, 1)
    assert r.cached("a") == frozenset() and r.pending("a") == 1
    assert r.route([7, 8, 9]).replica == "b"  # a has 1 pending token, b none


def test_a_full_hit_still_prefills_the_last_block_as_vllm_does() -> None:
    # vLLM 0.11 caps a cache hit at prompt - 1 tokens (it needs the last token's logits), and hits are
    # whole blocks, so a block-aligned prompt that is fully cached recomputes its last block.
    r = PrefixRouter(["a"], block_size=2)
    r.finish(r.route([1, 2, 3, 4]).ticket)
    again = r.route([1, 2, 3, 4])
    assert (again.cached_tokens, again.cost) == (2, 2)
    longer = r.route([1, 2, 3, 4, 5])           # 5 tokens: both blocks usable, only the 5th is prefilled
    assert longer.cached_tokens == 4


def test_threads_with_replica_churn_keep_the_books_exact() -> None:
    r = PrefixRouter(["a", "b", "c"], block_size=2, capacity_blocks=32)
    stop = threading.Event()
    errors: list[BaseException] = []
    open_tickets: list[int] = []
    lock = threading.Lock()

    def router(seed: int) -> None:
        rnd = random.Random(seed)
        mine: list[int] = []
        try:
            while not stop.is_set():
                mine.append(r.route([rnd.randrange(4) for _ in range(rnd.randrange(1, 9))]).ticket)
                if len(mine) > 8:  # finish an older ticket, often one routed before the last churn
                    r.finish(mine.pop(rnd.randrange(len(mine))))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        with lock:
            open_tickets.extend(mine)

    def churn() -> None:
        try:
            for _ in range(300):
                r.remove_replica("c")
                r.add_replica("c")
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)
        finally:
            stop.set()

    with gil_pressure():
        threads = [threading.Thread(target=router, args=(s,)) for s in range(4)] + [threading.Thread(target=churn)]
        for t in threads:
            t.start()
        join_all(threads)
    assert errors == []
    for ticket in open_tickets:
        r.finish(ticket)
    assert {n: r.pending(n) for n in ("a", "b", "c")} == {"a": 0, "b": 0, "c": 0}


# --- remove_replica forgets everything; the index does not grow without bound -------------------------

def test_a_replica_added_again_inherits_nothing_from_its_old_self() -> None:
    r = PrefixRouter(["a", "b"], block_size=2)
    prompt = [1, 2, 3, 4, 5, 6, 7]
    r.finish(r.route(prompt).ticket)           # a holds the prompt's 3 blocks
    r.remove_replica("a")
    r.add_replica("a")
    assert r.cached("a") == frozenset()
    again = r.route(prompt)                     # both idle and empty: tie on cost and load -> b, added first
    assert (again.replica, again.cached_tokens, again.cost) == ("b", 0, 7)
    r.finish(again.ticket)
    third = r.route(prompt)                     # b holds it now; the new a still holds nothing
    assert (third.replica, third.cached_tokens) == ("b", 6)


def test_the_index_stays_bounded_as_distinct_prefixes_pass_through() -> None:
    # Capacity 8 blocks per replica: after the first few prompts every new prompt evicts as many hashes
    # as it adds, so memory must stop growing. An index that keeps a hash's entry after its last holder
    # is evicted (an empty set per prefix ever seen) grows by ~300 bytes per block, ~5 MB here.
    def setup():
        r = PrefixRouter(["a", "b"], block_size=2, capacity_blocks=8)
        return lambda i: r.finish(r.route([i % 65536, i // 65536] + [9] * 14 + [0]).ticket)

    grown = traced_growth(setup, warm=500, more=2_000)
    assert grown < 100_000, f"{grown} bytes more after 2,000 distinct prompts (8 blocks each)"


def test_removing_a_replica_returns_its_share_of_the_index() -> None:
    def setup():
        # "keep" has one request in flight forever and a heavy load weight: every prompt goes to the
        # idle temporary replica, which then holds 1,000 block hashes when it is removed.
        r = PrefixRouter(["keep"], block_size=2, capacity_blocks=10**6, load_weight=10**6)
        r.route([0])

        def op(i: int) -> None:
            name = f"tmp{i}"
            r.add_replica(name)
            for j in range(200):
                route = r.route([i, j] + [7] * 8 + [0])
                assert route.replica == name
                r.finish(route.ticket)
            r.remove_replica(name)
        return op

    grown = traced_growth(setup, warm=2, more=10)
    assert grown < 200_000, f"{grown} bytes left behind by 10 removed replicas of 1,000 blocks each"


# --- forced thread switches: a replica name whose hashing sleeps ----------------------------------------

def test_routes_racing_on_slow_names_keep_the_loads_exact() -> None:
    # Every dict access keyed by a SlowStr name sleeps, so an unlocked `pending[name] += tokens` loses
    # updates on every run; under one lock the loads add up exactly.
    names = [SlowStr("a"), SlowStr("b")]
    r = PrefixRouter(names, block_size=2)
    added: list[tuple[str, int]] = []

    def worker(w: int) -> None:
        for i in range(6):
            route = r.route([w, i, 1])
            added.append((route.replica, 3 - route.cached_tokens))

    assert run_threads(worker, 4, pressure=False) == []
    for name in ("a", "b"):
        assert r.pending(name) == sum(t for rep, t in added if rep == name), name


def test_replicas_added_and_removed_by_racing_threads() -> None:
    r = PrefixRouter(["base"], block_size=2)

    def worker(w: int) -> None:
        for i in range(5):
            r.add_replica(SlowStr(f"r{w}"))
            r.finish(r.route([w, i, 0]).ticket)
            r.remove_replica(SlowStr(f"r{w}"))

    assert run_threads(worker, 3, pressure=False) == []
    with pytest.raises(ValueError, match="last replica"):
        r.remove_replica("base")           # every racing replica was removed: base is the only one
    assert r.pending("base") == 0


# --- exact costs: a huge load_weight neither overflows nor rounds two costs together ------------------

@pytest.mark.parametrize("weight", [1e308, 2.0**60, 10**30])
def test_a_huge_load_weight_still_separates_different_costs(weight) -> None:
    # Equal pending on both replicas, b holds the prefix: b's exact cost is 4 tokens lower. In floats,
    # 1e308 * 5 is inf on both, and 2**60 * 5 + 5 rounds to 2**60 * 5 + 1: a tie that goes to a.
    r = PrefixRouter(["a", "b"], block_size=2, load_weight=weight)
    assert r.route([7, 7, 7, 7, 8]).replica == "a"
    assert r.route([1, 2, 3, 4, 5]).replica == "b"      # a: weight * 5 + 5, b: 5
    assert (r.pending("a"), r.pending("b")) == (5, 5)
    again = r.route([1, 2, 3, 4, 5])
    assert (again.replica, again.cached_tokens) == ("b", 4)
    exact = Fraction(weight) * 5 + 1
    assert again.cost == (math.inf if exact > Fraction(sys.float_info.max) else float(exact))


def test_a_tiny_load_weight_still_counts_load() -> None:
    r = PrefixRouter(["a", "b"], block_size=2, load_weight=5e-324)  # the smallest float above 0
    assert r.route([1, 2, 3]).replica == "a"
    assert r.route([4, 5, 6]).replica == "b"  # equal uncached tokens: a's load, however small, decides


# --- a model-based check: the router against a plain model, operation by operation --------------------

def chain(prefix: tuple[int, ...], block_size: int) -> bytes:
    """The block hash of the last full block of ``prefix``, by hand: SHA-256 over packed 32-bit ids."""
    digest = b""
    for start in range(0, len(prefix) - block_size + 1, block_size):
        digest = hashlib.sha256(digest + struct.pack(f"<{block_size}I", *prefix[start:start + block_size])).digest()
    return digest


class ModelRouter:
    """The routing rule written plainly: per replica a list of held prefixes (oldest first), linear
    scans, exact fractions for the cost."""

    def __init__(self, names, block_size, capacity, load_weight) -> None:
        self.bs, self.capacity, self.weight = block_size, capacity, Fraction(load_weight)
        self.replicas: dict[str, dict] = {}      # insertion order = order added, as ties are broken
        self.tickets: dict[int, tuple[dict, int]] = {}
        for name in names:
            self.add(name)

    def add(self, name: str) -> None:
        if name in self.replicas:
            raise ValueError
        self.replicas[name] = {"held": [], "pending": 0}

    def remove(self, name: str) -> None:
        if name not in self.replicas or len(self.replicas) == 1:
            raise ValueError
        del self.replicas[name]

    def route(self, tokens: list[int]):
        prefixes = [tuple(tokens[:k * self.bs]) for k in range(1, len(tokens) // self.bs + 1)]
        usable = (len(tokens) - 1) // self.bs
        best = None
        for name, rep in self.replicas.items():
            k = 0
            while k < usable and prefixes[k] in rep["held"]:
                k += 1
            cost = self.weight * rep["pending"] + len(tokens) - k * self.bs
            if best is None or (cost, rep["pending"]) < (best[2], best[3]["pending"]):
                best = (name, k * self.bs, cost, rep)
        name, cached, cost, rep = best
        for prefix in reversed(prefixes):        # tail first: the head ends up the most recent
            if prefix in rep["held"]:
                rep["held"].remove(prefix)
            rep["held"].append(prefix)
        del rep["held"][:max(0, len(rep["held"]) - self.capacity)]
        rep["pending"] += len(tokens) - cached
        return name, cached, cost, (rep, len(tokens) - cached)

    def finish(self, ticket: tuple[dict, int]) -> None:
        rep, tokens = ticket
        rep["pending"] -= tokens                 # a removed replica's dict is no longer looked at


class RouterMachine(RuleBasedStateMachine):
    NAMES = ["a", "b", "c"]

    @initialize(capacity=st.integers(1, 6), weight=st.sampled_from([0, 0.5, 1, 3, 2.0**70, 1e308]))
    def start(self, capacity, weight) -> None:
        self.router = PrefixRouter(["a", "b"], block_size=2, capacity_blocks=capacity, load_weight=weight)
        self.model = ModelRouter(["a", "b"], 2, capacity, weight)
        self.open: list[tuple[int, tuple]] = []  # (router ticket, model ticket)

    @rule(tokens=st.lists(st.integers(0, 2), min_size=1, max_size=9))
    def route(self, tokens) -> None:
        got = self.router.route(tokens)
        name, cached, cost, ticket = self.model.route(tokens)
        assert (got.replica, got.cached_tokens) == (name, cached)
        assert got.cost == (math.inf if cost > Fraction(sys.float_info.max) else float(cost))
        assert got.ticket not in [t for t, _ in self.open]
        self.open.append((got.ticket, ticket))

    @precondition(lambda self: self.open)
    @rule(data=st.data())
    def finish(self, data) -> None:
        ticket, model_ticket = self.open.pop(data.draw(st.integers(0, len(self.open) - 1)))
        self.router.finish(ticket)
        self.model.finish(model_ticket)

    def both(self, model_call, router_call, name: str) -> None:
        """Change the replica set on both; where the model refuses, the router must raise ValueError."""
        try:
            model_call(name)
        except ValueError:
            with pytest.raises(ValueError):
                router_call(name)
        else:
            router_call(name)

    @rule(name=st.sampled_from(NAMES))
    def add(self, name) -> None:
        self.both(self.model.add, self.router.add_replica, name)

    @rule(name=st.sampled_from(NAMES))
    def remove(self, name) -> None:
        self.both(self.model.remove, self.router.remove_replica, name)

    @invariant()
    def books_agree(self) -> None:
        if not hasattr(self, "model"):
            return
        for name, rep in self.model.replicas.items():
            assert self.router.pending(name) == rep["pending"], name
            assert self.router.cached(name) == {chain(p, 2) for p in rep["held"]}, name


RouterMachine.TestCase.settings = settings(DETERMINISTIC, max_examples=300, stateful_step_count=30)
test_the_router_behaves_as_the_plain_model = RouterMachine.TestCase
