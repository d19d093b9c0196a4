"""Q152: a prefix-aware router over replicas of one model.

A prompt (a sequence of token ids) is cut into full blocks of ``block_size`` tokens; block ``i``'s hash
covers its tokens and block ``i - 1``'s hash, so one hash names the whole prefix up to that block, as
vLLM's prefix cache names its KV blocks. The router keeps an index ``hash -> replicas`` of the prefixes
it has sent to each replica (an approximation of the replicas' caches: it sees its own decisions, not
the engines' evictions), bounded per replica by an LRU of ``capacity_blocks`` hashes.

For a request it finds, per replica, the longest run of the prompt's leading blocks that replica holds,
and picks the replica with the lowest estimated cost, in prompt tokens still to prefill::

    cost(r) = load_weight * pending(r) + (prompt tokens - cached tokens on r)

``pending(r)`` is the prefill work the router has sent to ``r`` and not yet seen finish: with
``load_weight = 1`` the cost is proportional to the replica's time to first token at a fixed prefill
rate. Ties go to the replica with less pending work, then to the one added first. Costs are compared
exactly, as integers scaled by the denominator of ``load_weight`` (a float is a fraction with a
power-of-two denominator; an int or a ``Fraction`` is kept as it is), so no ``load_weight`` is too
large: in floats, ``1e308 * pending`` overflows to infinity and ``2**60 * pending + 5`` rounds to
``2**60 * pending + 1``, and replicas with different costs would tie. As in vLLM (0.11 and 0.33)
(``KVCacheManager.get_computed_blocks``), a hit covers at most ``prompt - 1`` tokens in whole blocks:
the engine needs the last token's logits, so a fully cached, block-aligned prompt recomputes its last
block.

Complexity: hashing a prompt of ``P`` tokens is O(P); matching its ``B = P / block_size`` blocks costs
O(B) dictionary lookups plus O(B x R) set work in the worst case for ``R`` replicas, independent of how
many prefixes the index holds. Memory is O(total cached blocks over all replicas). Thread-safe: one
lock guards the index and the loads; hashing runs outside it.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import numbers
import struct
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ._checks import check_count, check_real

__all__ = ["PrefixRouter", "Route", "block_hashes"]

_MAX_TOKEN = 2**32  # token ids are packed as unsigned 32-bit integers


# --8<-- [start:hashes]
def block_hashes(tokens: Sequence[int], block_size: int) -> list[bytes]:
    """Chained SHA-256 digests of the full blocks of ``tokens``; a partial last block gets none."""
    check_count("block_size", block_size)
    if isinstance(tokens, (str, bytes)) or not isinstance(tokens, Sequence):
        raise ValueError(f"tokens must be a sequence of token ids, got {type(tokens).__name__}")
    for t in tokens:
        if isinstance(t, bool) or not isinstance(t, int) or not 0 <= t < _MAX_TOKEN:
            raise ValueError(f"tokens must be ints in [0, 2**32), got {t!r}")
    out: list[bytes] = []
    parent = b""
    for start in range(0, len(tokens) - block_size + 1, block_size):
        block = struct.pack(f"<{block_size}I", *tokens[start:start + block_size])
        parent = hashlib.sha256(parent + block).digest()  # names the whole prefix up to here
        out.append(parent)
    return out
# --8<-- [end:hashes]


@dataclass(frozen=True)
class Route:
    replica: str
    cached_tokens: int   # leading tokens the router believes the replica holds
    cost: float          # load_weight * pending + uncached tokens, at decision time (nearest float; inf past 1.8e308)
    ticket: int          # pass to finish() when the prefill is done


# --8<-- [start:state]
class PrefixRouter:
    """Longest-prefix match over chained block hashes, traded against each replica's pending prefill."""

    def __init__(self, replicas: Iterable[str], *, block_size: int = 16, capacity_blocks: int = 100_000,
                 load_weight: float = 1.0) -> None:
        self._block = check_count("block_size", block_size)
        self._capacity = check_count("capacity_blocks", capacity_blocks)
        weight = check_real("load_weight", load_weight, allow_inf=False)  # a number, not NaN, >= 0, finite
        # load_weight = num / den exactly; a cost is compared as den * cost = num * pending + den * uncached
        exact = Fraction(load_weight) if isinstance(load_weight, numbers.Rational) else Fraction(weight)
        self._num, self._den = exact.as_integer_ratio()
        self._lock = threading.Lock()
        self._order: dict[str, int] = {}                   # replica -> incarnation, increasing: tie-breaks
        self._lru: dict[str, OrderedDict[bytes, None]] = {}  # replica -> its hashes, oldest first
        self._pending: dict[str, int] = {}                 # replica -> prefill tokens in flight
        self._index: dict[bytes, set[str]] = {}            # hash -> replicas believed to hold it
        self._tickets: dict[int, tuple[str, int, int]] = {}  # ticket -> (replica, incarnation, tokens added)
        self._next_ticket = itertools.count(1)
        self._next_incarnation = itertools.count()
        # --8<-- [end:state]
        try:
            names = list(replicas) if not isinstance(replicas, str) else [replicas]
        except TypeError:
            raise ValueError(f"replicas must be an iterable of names, got {replicas!r}") from None
        if not names:
            raise ValueError("replicas must name at least one replica")
        for name in names:
            self.add_replica(name)

    # --8<-- [start:core]
    def route(self, tokens: Sequence[int]) -> Route:
        """Pick a replica for a prompt, record its blocks there, and add its uncached tokens to its load."""
        hashes = block_hashes(tokens, self._block)  # O(P), outside the lock
        prompt = len(tokens)
        if prompt == 0:
            raise ValueError("tokens must not be empty")
        usable = (prompt - 1) // self._block  # the engine recomputes at least the last token
        with self._lock:
            matched = self._match(hashes[:usable])
            best, best_key = "", (0, 0, 0)
            for name, pos in self._order.items():
                uncached = prompt - matched.get(name, 0) * self._block
                key = (self._num * self._pending[name] + self._den * uncached, self._pending[name], pos)
                if not best or key < best_key:
                    best, best_key = name, key
            cached = matched.get(best, 0) * self._block
            self._remember(best, hashes)
            ticket = next(self._next_ticket)
            self._pending[best] += prompt - cached
            self._tickets[ticket] = (best, self._order[best], prompt - cached)
            return Route(best, cached, _to_float(best_key[0], self._den), ticket)

    def _match(self, hashes: list[bytes]) -> dict[str, int]:  # caller holds the lock
        """Per replica, the number of leading blocks it holds (absent: none)."""
        matched: dict[str, int] = {}
        alive: set[str] | None = None
        for i, h in enumerate(hashes):
            holders = self._index.get(h)
            if not holders:
                break
            alive = set(holders) if alive is None else alive & holders
            if not alive:
                break
            for name in alive:
                matched[name] = i + 1
        return matched
    # --8<-- [end:core]

    def _remember(self, name: str, hashes: list[bytes]) -> None:  # caller holds the lock
        lru = self._lru[name]
        for h in reversed(hashes):  # tail first, so the head is the most recent and is evicted last
            if h in lru:
                lru.move_to_end(h)
            else:
                lru[h] = None
                self._index.setdefault(h, set()).add(name)
        while len(lru) > self._capacity:
            old, _ = lru.popitem(last=False)
            self._drop(old, name)

    def _drop(self, h: bytes, name: str) -> None:  # caller holds the lock
        holders = self._index[h]
        holders.discard(name)
        if not holders:
            del self._index[h]

    def finish(self, ticket: int) -> None:
        """The routed request's prefill is done: take its tokens off the replica's pending load."""
        if isinstance(ticket, bool) or not isinstance(ticket, int):  # True and 1.0 would find ticket 1
            raise ValueError(f"a ticket is an int from route(), got {ticket!r}")
        with self._lock:
            try:
                name, incarnation, tokens = self._tickets.pop(ticket)
            except KeyError:
                raise ValueError(f"unknown or already finished ticket {ticket!r}") from None
            if self._order.get(name) == incarnation:  # not a removed replica, nor a new one of that name
                self._pending[name] -= tokens

    def add_replica(self, name: str) -> None:
        """A new, empty replica: it holds nothing and has no pending work (even if the name was used before)."""
        _check_name(name)
        with self._lock:
            if name in self._lru:
                raise ValueError(f"replica {name!r} already exists")
            self._order[name] = next(self._next_incarnation)
            self._lru[name] = OrderedDict()
            self._pending[name] = 0

    def remove_replica(self, name: str) -> None:
        """Forget a replica and everything it held; its open tickets can still be finished (they change nothing)."""
        _check_name(name)
        with self._lock:
            if name not in self._lru:
                raise ValueError(f"unknown replica {name!r}")
            if len(self._lru) == 1:
                raise ValueError("cannot remove the last replica")
            for h in self._lru.pop(name):
                self._drop(h, name)
            del self._pending[name], self._order[name]

    def pending(self, name: str) -> int:
        """Prefill tokens routed to ``name`` and not yet finished."""
        _check_name(name)
        with self._lock:
            if name not in self._pending:
                raise ValueError(f"unknown replica {name!r}")
            return self._pending[name]

    def cached(self, name: str) -> frozenset[bytes]:
        """The block hashes the router believes ``name`` holds (a copy)."""
        _check_name(name)
        with self._lock:
            if name not in self._lru:
                raise ValueError(f"unknown replica {name!r}")
            return frozenset(self._lru[name])


def _to_float(num: int, den: int) -> float:
    """``num / den`` rounded once to the nearest float; infinity when it is past the largest float."""
    try:
        return num / den  # int / int is correctly rounded in Python
    except OverflowError:
        return math.inf


def _check_name(name: object) -> None:
    if not isinstance(name, str) or not name:
        raise ValueError(f"a replica name must be a non-empty str, got {name!r}")
