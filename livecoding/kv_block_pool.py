"""Q151: a paged KV-cache block allocator with prefix sharing.

The pool owns ``num_blocks`` fixed-size blocks of ``block_size`` token slots. A sequence holds a list of
block ids (its block table). Full blocks are identified by a chained hash, ``sha256(parent hash, salt,
tokens)``, so one hash names a whole prefix; a map from hash to block id lets a new sequence reuse the
blocks of any earlier sequence that began with the same tokens. Each block has a reference count: it is
in use while some sequence holds it, and free when the count is zero. Free blocks wait in one
least-recently-freed order; a free block that still has a hash stays findable (a cache hit takes it back
out of the free list) until an allocation takes it from the front of that order and evicts its hash.

One lock guards every public method, so the pool is safe to share between threads.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from ._checks import check_count

__all__ = ["Allocation", "BlockPool", "OutOfBlocks", "ROOT_HASH", "chain_hashes"]

ROOT_HASH = bytes(32)  # the parent of a sequence's first block
TOKEN_LIMIT = 2**64    # token ids are encoded as 8 unsigned bytes


class OutOfBlocks(Exception):
    """Raised by ``allocate``/``append`` when the free blocks cannot cover the request; nothing changed."""


@dataclass(frozen=True)
class Allocation:
    """What ``allocate`` returns: the sequence's block table and how many prompt tokens were cache hits."""

    block_ids: tuple[int, ...]
    cached_tokens: int


def _check_salt(salt: object) -> None:
    if not isinstance(salt, bytes):
        raise ValueError(f"salt must be bytes, got {type(salt).__name__}")


def _check_seq(seq_id: object) -> None:
    try:
        hash(seq_id)  # not isinstance(Hashable): a tuple holding a list passes that test and fails here
    except TypeError:
        raise ValueError(f"seq_id must be hashable, got {seq_id!r}") from None
    if seq_id != seq_id:  # NaN: a later lookup by an equal-looking id would never find it, leaking its blocks
        raise ValueError(f"seq_id must equal itself, got {seq_id!r}")


def _check_tokens(tokens: object, *, allow_empty: bool = False) -> list[int]:
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise ValueError(f"tokens must be a sequence of ints, got {type(tokens).__name__}")
    out = list(tokens)
    if not out and not allow_empty:
        raise ValueError("tokens must not be empty")
    for i, t in enumerate(out):
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < TOKEN_LIMIT:
            raise ValueError(f"tokens[{i}] must be an int in [0, 2**64), got {t!r}")
    return out


# --8<-- [start:hash]
def _block_hash(parent: bytes, block: Sequence[int], salt: bytes | None) -> bytes:
    h = hashlib.sha256(parent)
    if salt is not None:  # first block only; length-prefixed, so salt bytes never read as tokens
        h.update(len(salt).to_bytes(4, "little") + salt)
    h.update(b"".join(t.to_bytes(8, "little") for t in block))
    return h.digest()


def chain_hashes(tokens: Sequence[int], block_size: int, salt: bytes = b"") -> list[bytes]:
    """Hashes of the full blocks of ``tokens``: ``h[i] = sha256(h[i-1], salt if i == 0, block i)``, ``h[-1] =
    ROOT_HASH``. Equal ``h[i]`` means equal first ``(i + 1) x block_size`` tokens and salt; a partial block has none."""
    check_count("block_size", block_size)
    toks = _check_tokens(tokens, allow_empty=True)
    _check_salt(salt)
    return _extend(ROOT_HASH, [], toks, block_size, salt)


# --8<-- [end:hash]


def _extend(parent: bytes, hashes: list[bytes], toks: list[int], block_size: int, salt: bytes) -> list[bytes]:
    """Append to ``hashes`` the hashes of the full blocks of ``toks`` past ``len(hashes)``: each block once."""
    for i in range(len(hashes), len(toks) // block_size):
        parent = _block_hash(hashes[-1] if hashes else parent, toks[i * block_size:(i + 1) * block_size],
                             salt if i == 0 else None)
        hashes.append(parent)
    return hashes


# --8<-- [start:pool]
class BlockPool:
    """``num_blocks`` blocks of ``block_size`` tokens, shared between sequences by prefix."""

    def __init__(self, num_blocks: int, block_size: int) -> None:
        check_count("num_blocks", num_blocks)
        check_count("block_size", block_size)
        self.num_blocks, self.block_size = num_blocks, block_size
        self._lock = threading.Lock()
        self._ref = [0] * num_blocks                             # holders of each block
        self._hash: list[bytes | None] = [None] * num_blocks      # set while the block is findable
        self._cached: dict[bytes, int] = {}                       # hash -> block id
        self._free = OrderedDict.fromkeys(range(num_blocks))      # free block ids; front = evict first
        # per sequence: block ids, tokens, full-block hashes, salt
        self._tables: dict = {}
        self._tokens: dict = {}
        self._hashes: dict = {}
        self._salt: dict = {}

    def allocate(self, seq_id: Hashable, tokens: Sequence[int], salt: bytes = b"") -> Allocation:
        """Give a new sequence blocks for ``tokens``, reusing cached blocks of its longest cached prefix.

        At most ``len(tokens) - 1`` tokens count as hits: the last prompt token must be computed to
        produce logits. Raises ``OutOfBlocks`` (changing nothing) if the free blocks cannot cover the rest.
        """
        _check_seq(seq_id)
        toks = _check_tokens(tokens)
        _check_salt(salt)
        hashes = _extend(ROOT_HASH, [], toks, self.block_size, salt)
        with self._lock:
            if seq_id in self._tables:
                raise ValueError(f"sequence {seq_id!r} already holds blocks; free it first")
            hits: list[int] = []
            for h in hashes[: (len(toks) - 1) // self.block_size]:
                b = self._cached.get(h)
                if b is None:
                    break  # chained hashes: after the first miss nothing later can hit
                hits.append(b)
            need = -(-len(toks) // self.block_size) - len(hits)
            reusable = sum(1 for b in hits if self._ref[b] == 0)  # hits that sit in the free list
            if need > len(self._free) - reusable:
                raise OutOfBlocks(f"need {need} free blocks, {len(self._free) - reusable} available")
            for b in hits:
                self._take(b)
            table = hits + [self._pop_lru() for _ in range(need)]
            for i in range(len(hits), len(hashes)):
                self._register(hashes[i], table[i])
            self._tables[seq_id], self._tokens[seq_id], self._salt[seq_id] = table, toks, salt
            self._hashes[seq_id] = hashes
            return Allocation(tuple(table), len(hits) * self.block_size)

    # --8<-- [end:pool]

    # --8<-- [start:free]
    def free(self, seq_id: Hashable) -> None:
        """Release a sequence's blocks, last block first, so a prefix outlives its tails in the cache.

        A second ``free`` of the same sequence raises ``KeyError``: counts never go below zero.
        """
        _check_seq(seq_id)
        with self._lock:
            table = self._known(seq_id)
            for b in reversed(table):
                self._ref[b] -= 1
                if self._ref[b] == 0:
                    self._free[b] = None  # to the back: evicted after every block freed before it
            del self._tables[seq_id], self._tokens[seq_id], self._hashes[seq_id], self._salt[seq_id]

    # Private helpers: called with the lock held.
    def _take(self, b: int) -> None:
        if self._ref[b] == 0:
            del self._free[b]  # a hit on a free cached block: it is in use again, no longer evictable
        self._ref[b] += 1

    def _pop_lru(self) -> int:
        b, _ = self._free.popitem(last=False)
        old = self._hash[b]
        if old is not None:  # evict: the block's old contents can no longer be found
            del self._cached[old]
            self._hash[b] = None
        self._ref[b] = 1
        return b

    def _register(self, h: bytes, b: int) -> None:
        if h not in self._cached:  # an identical block cached earlier stays the one that is found
            self._cached[h] = b
            self._hash[b] = h
    # --8<-- [end:free]

    def append(self, seq_id: Hashable, tokens: Sequence[int]) -> tuple[int, ...]:
        """Add decoded ``tokens`` to a sequence: new blocks as the last one fills, hashed once full.

        Returns the ids of the blocks it added (often none): O(1) amortised per token, whatever the
        length of the sequence. Raises ``OutOfBlocks`` (changing nothing) if a new block is needed and
        none is free, ``KeyError`` for a sequence that holds no blocks.
        """
        _check_seq(seq_id)
        toks = _check_tokens(tokens)
        with self._lock:
            table = self._known(seq_id)
            have, hashes = self._tokens[seq_id], self._hashes[seq_id]
            need = -(-(len(have) + len(toks)) // self.block_size) - len(table)
            if need > len(self._free):
                raise OutOfBlocks(f"need {need} free blocks, {len(self._free)} available")
            added = tuple(self._pop_lru() for _ in range(need))
            table.extend(added)
            have.extend(toks)
            done = len(hashes)
            _extend(ROOT_HASH, hashes, have, self.block_size, self._salt[seq_id])  # only the newly full blocks
            for i in range(done, len(hashes)):
                self._register(hashes[i], table[i])
            return added

    @property
    def num_free(self) -> int:
        """Blocks no sequence holds (cached or not): what an allocation can still take."""
        with self._lock:
            return len(self._free)

    def ref_count(self, block_id: int) -> int:
        """How many sequences hold the block."""
        self._check_block(block_id)
        with self._lock:
            return self._ref[block_id]

    def is_cached(self, block_id: int) -> bool:
        """True while the block can still be found by its hash (held, or free but not yet evicted)."""
        self._check_block(block_id)
        with self._lock:
            return self._hash[block_id] is not None

    def _check_block(self, block_id: object) -> None:
        if isinstance(block_id, bool) or not isinstance(block_id, int) or not 0 <= block_id < self.num_blocks:
            raise ValueError(f"block_id must be an int in [0, {self.num_blocks}), got {block_id!r}")

    def _known(self, seq_id: Hashable) -> list[int]:
        try:
            return self._tables[seq_id]
        except KeyError:
            raise KeyError(f"sequence {seq_id!r} holds no blocks (never allocated, or already freed)") from None
