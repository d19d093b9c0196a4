"""Q151: BlockPool, a paged KV block allocator with prefix sharing (public API only, so the practice
bundle's tests hold any correct implementation to the same contract)."""

from __future__ import annotations

import math
import random
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st
from lc_support import BAD_COUNTS, DETERMINISTIC, best_seconds_per_op, gil_pressure, join_all

from livecoding.kv_block_pool import ROOT_HASH, Allocation, BlockPool, OutOfBlocks, chain_hashes


def refs(pool: BlockPool) -> list[int]:
    return [pool.ref_count(b) for b in range(pool.num_blocks)]


def check_invariants(pool: BlockPool, tables: dict) -> None:
    """Every held block is counted once per holder; free blocks are exactly the unheld ones."""
    counts = [0] * pool.num_blocks
    for table in tables.values():
        for b in table:
            counts[b] += 1
    assert refs(pool) == counts
    assert pool.num_free == counts.count(0)


# ---------------------------------------------------------------- hashing

def test_chain_hashes_cover_full_blocks_and_chain():
    assert chain_hashes([1, 2, 3, 4, 5], 2) == chain_hashes([1, 2, 3, 4], 2)  # the partial block has no hash
    assert len(chain_hashes([1, 2, 3, 4, 5], 2)) == 2 and chain_hashes([1], 2) == []
    a, b = chain_hashes([1, 2, 3, 4], 2), chain_hashes([9, 2, 3, 4], 2)
    assert a[1] != b[1]  # same second block, different first: the chain makes every later hash differ
    assert chain_hashes([1, 2], 2, salt=b"tenant-a") != chain_hashes([1, 2], 2, salt=b"tenant-b")
    assert ROOT_HASH not in a and len(set(a)) == 2
    # The salt is length-prefixed, so it cannot be confused with token bytes.
    assert chain_hashes([1, 2], 2, salt=b"") != chain_hashes([1, 2], 2, salt=b"\x00")


# ---------------------------------------------------------------- prefix sharing

def test_same_prefix_shares_full_blocks_and_counts_references():
    pool = BlockPool(8, 4)
    a = pool.allocate("a", list(range(10)))                # blocks for 4 + 4 + 2 tokens
    assert a == Allocation(a.block_ids, 0) and len(a.block_ids) == 3
    b = pool.allocate("b", list(range(9)))                 # same first 8 tokens
    assert b.cached_tokens == 8 and b.block_ids[:2] == a.block_ids[:2]
    assert b.block_ids[2] != a.block_ids[2]                # a partial block is never shared
    assert [pool.ref_count(x) for x in a.block_ids] == [2, 2, 1]
    assert pool.num_free == 8 - 4


def test_last_prompt_token_is_always_computed():
    pool = BlockPool(8, 4)
    first = pool.allocate("a", list(range(8)))             # exactly two full blocks
    again = pool.allocate("b", list(range(8)))
    # At most len - 1 tokens can be hits: the second block is recomputed into a new block.
    assert again.cached_tokens == 4 and again.block_ids[0] == first.block_ids[0]
    assert again.block_ids[1] != first.block_ids[1]


def test_a_different_first_block_hits_nothing_and_salt_isolates():
    pool = BlockPool(16, 2)
    pool.allocate("a", [1, 2, 3, 4, 5])
    assert pool.allocate("b", [9, 2, 3, 4, 5]).cached_tokens == 0
    assert pool.allocate("c", [1, 2, 3, 4, 5], salt=b"other").cached_tokens == 0
    assert pool.allocate("d", [1, 2, 3, 4, 6]).cached_tokens == 4


def test_freed_blocks_stay_findable_until_evicted():
    pool = BlockPool(4, 2)
    a = pool.allocate("a", [1, 2, 3])
    pool.free("a")
    assert pool.num_free == 4 and pool.is_cached(a.block_ids[0]) and not pool.is_cached(a.block_ids[1])
    again = pool.allocate("b", [1, 2, 7])
    assert again.cached_tokens == 2 and again.block_ids[0] == a.block_ids[0]
    assert pool.ref_count(a.block_ids[0]) == 1 and pool.num_free == 2  # the hit left the free list


def test_decoded_blocks_are_hashed_once_full_and_shared():
    pool = BlockPool(8, 2)
    first = pool.allocate("a", [1, 2, 3]).block_ids
    added = pool.append("a", [4, 5])                       # fills block 1, opens block 2
    assert len(added) == 1 and added[0] not in first
    assert pool.append("a", [6]) == ()                     # block 2 has room: nothing added
    hit = pool.allocate("b", [1, 2, 3, 4, 9])
    assert hit.cached_tokens == 4 and hit.block_ids[:2] == first


# ---------------------------------------------------------------- eviction order

def test_eviction_is_least_recently_freed_first():
    pool = BlockPool(6, 2)
    held = {name: pool.allocate(name, toks).block_ids
            for name, toks in (("A", [1, 1, 0]), ("B", [2, 2, 0]), ("C", [3, 3, 0]))}
    for name in ("A", "B", "C"):
        pool.free(name)
    d = pool.allocate("D", [4, 4, 0])                       # the pool is full: two blocks must be reused
    assert set(d.block_ids) == set(held["A"])               # A freed first: its blocks go first
    assert not pool.is_cached(held["A"][0])                 # and A's prefix can no longer be found
    assert pool.is_cached(held["B"][0]) and pool.is_cached(held["C"][0])
    assert pool.allocate("B2", [2, 2, 5]).cached_tokens == 2
    assert pool.allocate("C2", [3, 3, 5]).cached_tokens == 2


def test_a_sequence_is_freed_tail_first():
    pool = BlockPool(4, 2)
    s = pool.allocate("s", [1, 2, 3, 4, 5, 6, 7])           # 4 blocks, the pool is full
    pool.free("s")
    x = pool.allocate("x", [9])                             # one block: the sequence's last one goes first
    assert x.block_ids == (s.block_ids[3],)
    assert all(pool.is_cached(b) for b in s.block_ids[:3])  # the prefix outlives its tail
    pool.free("x")
    assert pool.allocate("again", [1, 2, 3, 4, 5, 6, 8]).cached_tokens == 6


def test_eviction_never_takes_a_held_block():
    pool = BlockPool(4, 2)
    held = pool.allocate("held", [1, 2, 3])
    for i in range(10):
        pool.allocate(f"t{i}", [100 + i, 0, 0])
        pool.free(f"t{i}")
    assert pool.ref_count(held.block_ids[0]) == 1 and pool.allocate("h2", [1, 2, 9]).cached_tokens == 2


# ---------------------------------------------------------------- failures leave the pool unchanged

def test_out_of_blocks_changes_nothing():
    pool = BlockPool(3, 2)
    a = pool.allocate("a", [1, 2, 3])
    before = (refs(pool), pool.num_free, [pool.is_cached(b) for b in range(3)])
    with pytest.raises(OutOfBlocks):
        pool.allocate("big", [1, 2, 7, 7, 7])               # 1 hit + 2 new blocks, 1 free
    with pytest.raises(OutOfBlocks):
        pool.append("a", [4, 5, 6, 7, 8])                   # needs 2 new blocks
    assert (refs(pool), pool.num_free, [pool.is_cached(b) for b in range(3)]) == before
    pool.free("a")
    assert pool.allocate("big", [1, 2, 7, 7, 7]).block_ids[0] == a.block_ids[0]


def test_a_prompt_larger_than_the_whole_pool_fails_cleanly():
    pool = BlockPool(3, 2)
    with pytest.raises(OutOfBlocks):
        pool.allocate("huge", list(range(7)))               # 4 blocks, the pool has 3
    assert pool.num_free == 3 and refs(pool) == [0, 0, 0]
    with pytest.raises(KeyError):
        pool.free("huge")                                   # the failed allocation left no sequence behind
    assert len(pool.allocate("huge", list(range(6))).block_ids) == 3  # the id is free to use


def test_a_very_long_sequence_hashes_and_hits_in_full():
    n, bs = 200_000, 16
    pool = BlockPool(2 * n // bs + 2, bs)
    long = [(i * 7919) % (2**64 - 1) for i in range(n - 1)] + [2**64 - 1]  # the largest token id is legal
    first = pool.allocate("a", long)
    second = pool.allocate("b", long)
    assert second.cached_tokens == n - bs                   # every full block but the capped last one
    assert second.block_ids[:-1] == first.block_ids[:-1] and second.block_ids[-1] != first.block_ids[-1]
    pool.free("a")
    pool.free("b")
    assert pool.num_free == pool.num_blocks


def test_a_hit_on_a_free_block_does_not_count_as_free_space():
    pool = BlockPool(2, 2)
    pool.allocate("a", [1, 2, 3])
    pool.free("a")                                          # 2 free blocks, one of them cached [1, 2]
    with pytest.raises(OutOfBlocks):
        pool.allocate("b", [1, 2, 3, 4, 5])                 # 1 hit + 2 new: only 1 left after the hit
    assert pool.num_free == 2


def test_double_free_and_unknown_sequences():
    pool = BlockPool(4, 2)
    pool.allocate("a", [1, 2, 3])
    with pytest.raises(ValueError, match="already holds blocks"):
        pool.allocate("a", [5])
    pool.free("a")
    with pytest.raises(KeyError, match="already freed"):
        pool.free("a")
    with pytest.raises(KeyError):
        pool.append("a", [1])
    with pytest.raises(KeyError):
        pool.free("never")
    assert refs(pool) == [0, 0, 0, 0] and pool.num_free == 4


@pytest.mark.parametrize("bad", BAD_COUNTS)
def test_bad_sizes_are_refused(bad):
    with pytest.raises(ValueError, match="num_blocks"):
        BlockPool(bad, 16)
    with pytest.raises(ValueError, match="block_size"):
        BlockPool(4, bad)
    with pytest.raises(ValueError, match="block_size"):
        chain_hashes([1], bad)


@pytest.mark.parametrize("bad", [[], "abc", b"ab", None, 7, [1.0], [math.nan], [math.inf], [-1], [True], [2**64],
                                 [1, "2"], iter([1, 2])])
def test_bad_tokens_are_refused_before_anything_changes(bad):
    pool = BlockPool(4, 2)
    pool.allocate("a", [1, 2, 3])
    with pytest.raises(ValueError, match="tokens"):
        pool.allocate("b", bad)
    with pytest.raises(ValueError, match="tokens"):
        pool.append("a", bad)
    assert pool.num_free == 2 and pool.append("a", [4]) == () and pool.num_free == 2


def test_bad_salt_seq_and_block_ids_are_refused():
    pool = BlockPool(4, 2)
    with pytest.raises(ValueError, match="salt"):
        pool.allocate("a", [1], salt="text")
    with pytest.raises(ValueError, match="seq_id"):
        pool.allocate(["not", "hashable"], [1])
    with pytest.raises(ValueError, match="seq_id"):
        pool.allocate(("a tuple", ["holding a list"]), [1])  # isinstance(Hashable) says yes; hash() fails
    with pytest.raises(ValueError, match="seq_id"):
        pool.allocate(math.nan, [1])                          # never equal to itself: could never be freed
    with pytest.raises(ValueError, match="seq_id"):
        pool.free(["not", "hashable"])
    for bad in (-1, 4, True, 1.0, "0"):
        with pytest.raises(ValueError, match="block_id"):
            pool.ref_count(bad)
        with pytest.raises(ValueError, match="block_id"):
            pool.is_cached(bad)
    assert pool.num_free == 4


# ---------------------------------------------------------------- a random model check

OPS = st.lists(st.tuples(st.sampled_from(["alloc", "append", "free"]), st.integers(0, 5),
                         st.lists(st.integers(0, 3), min_size=1, max_size=7)), max_size=60)


@DETERMINISTIC
@given(OPS)
def test_random_operations_keep_the_counts_exact(ops):
    pool, tables, tokens = BlockPool(12, 2), {}, {}
    for op, seq, toks in ops:
        try:
            if op == "alloc" and seq not in tables:
                got = pool.allocate(seq, toks)
                tables[seq], tokens[seq] = list(got.block_ids), list(toks)
                assert got.cached_tokens % 2 == 0 and got.cached_tokens <= len(toks) - 1
            elif op == "append" and seq in tables:
                tables[seq] += pool.append(seq, toks)
                tokens[seq] += toks
            elif op == "free" and seq in tables:
                pool.free(seq)
                del tables[seq], tokens[seq]
        except OutOfBlocks:
            pass
        for s, t in tables.items():
            assert len(t) == -(-len(tokens[s]) // 2)       # exactly ceil(tokens / block size) blocks
        check_invariants(pool, tables)


# ---------------------------------------------------------------- threads

def run_threads(worker, n: int) -> list[BaseException]:
    """Run ``worker(0..n-1)`` on ``n`` threads with forced thread switches; return what they raised."""
    errors: list[BaseException] = []

    def guarded(w: int) -> None:
        try:
            worker(w)
        except BaseException as exc:  # noqa: BLE001 - returned to the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(w,)) for w in range(n)]
    with gil_pressure():
        for t in threads:
            t.start()
        join_all(threads)
    return errors


def test_threads_sharing_prefixes_keep_the_counts_exact():
    pool = BlockPool(64, 4)
    prefixes = [[p] * 8 for p in range(3)]                  # shared two-block system prompts

    def worker(w: int) -> None:
        rng = random.Random(w)
        for i in range(300):
            seq = (w, i)
            try:
                pool.allocate(seq, prefixes[rng.randrange(3)] + [w, i % 7])
            except OutOfBlocks:
                continue
            try:
                for _ in range(rng.randrange(4)):
                    pool.append(seq, [rng.randrange(5)] * rng.randrange(1, 5))
            except OutOfBlocks:
                pass
            pool.free(seq)

    errors = run_threads(worker, 8)
    assert not errors, errors
    assert refs(pool) == [0] * 64 and pool.num_free == 64
    # The shared prefixes were cached by many sequences and are found again.
    assert pool.allocate("end", prefixes[0] + [1]).cached_tokens == 8


def test_concurrent_allocations_that_cannot_all_fit():
    # Ten blocks, eight threads each asking for three unshared blocks at the same moment: whatever the
    # interleaving, exactly three succeed, the other five fail with OutOfBlocks and change nothing.
    pool, barrier, won, lost = BlockPool(10, 2), threading.Barrier(8), [], []

    def worker(w: int) -> None:
        barrier.wait()
        try:
            won.append(pool.allocate(w, [w, 0, w, 1, w]).block_ids)
        except OutOfBlocks:
            lost.append(w)

    errors = run_threads(worker, 8)
    assert not errors, errors
    assert len(won) == 3 and len(lost) == 5
    check_invariants(pool, dict(enumerate(won)))
    assert pool.num_free == 1
    for w in set(range(8)) - set(lost):
        pool.free(w)
    assert pool.num_free == 10 and refs(pool) == [0] * 10


# ---------------------------------------------------------------- the complexity the page claims

def test_allocate_and_free_cost_does_not_grow_with_the_pool():
    def setup(size: int):
        pool = BlockPool(size, 16)
        for i in range(size // 2):                          # half the pool cached, waiting in the free list
            pool.allocate(("warm", i), [i] * 16 + [0])
            pool.free(("warm", i))
        return lambda i: (pool.allocate(i, [i % 7, 1, 2]), pool.free(i))

    small, large = best_seconds_per_op(setup, 1_000), best_seconds_per_op(setup, 100_000)
    assert large < 3 * small, (small, large)


def test_append_cost_does_not_grow_with_the_sequence():
    def setup(length: int):
        pool = BlockPool(length // 16 + 2_100, 16)
        pool.allocate("s", [1] * length)
        return lambda i: pool.append("s", [i % 50])

    short, long = best_seconds_per_op(setup, 160), best_seconds_per_op(setup, 160_000)
    assert long < 3 * short, (short, long)
