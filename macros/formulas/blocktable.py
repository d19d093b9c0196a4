"""A paged KV cache's block tables for a few sequences, allocated the way the Q77 figure draws them.

Each sequence's block table maps its logical block ``i`` (tokens ``i x bs`` .. ``(i + 1) x bs - 1``) to a
physical block of a pool. Sequences that start with the same prompt share its *full* blocks, each with a
reference count equal to the number of sharers; the part of the prompt that does not fill a block is
stored privately by each sequence (vLLM V1's prefix caching reuses full blocks only). Private blocks are
handed out from a free list in index order as the sequences grow in turns, one block each per round,
which is why a table points to scattered physical blocks. Block counts are
:func:`~macros.formulas.kvbudget.blocks_per_sequence`; the empty slots of each last block are the tail
waste that :func:`~macros.formulas.kvbudget.paged_tail_waste` bounds by ``block_size - 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import _checks as chk
from .kvbudget import blocks_per_sequence

__all__ = ["BlockTableLayout", "PhysicalBlock", "SequenceTable", "block_tables"]


@dataclass(frozen=True)
class SequenceTable:
    name: str
    tokens: int
    shares_prefix: bool
    table: tuple[int, ...]   # logical block index -> physical block index
    fills: tuple[int, ...]   # tokens held in each logical block
    tail_empty: int          # empty slots in the last block


@dataclass(frozen=True)
class PhysicalBlock:
    index: int
    filled: int              # token slots holding KV (0 for a free block)
    refs: int                # block tables pointing here (0 = on the free list)


@dataclass(frozen=True)
class BlockTableLayout:
    block_size: int
    prefix_tokens: int
    shared_blocks: int       # full prefix blocks shared by the sharers
    sequences: tuple[SequenceTable, ...]
    blocks: tuple[PhysicalBlock, ...]   # the whole pool, in index order

    @property
    def tail_empty_total(self) -> int:
        return sum(s.tail_empty for s in self.sequences)


def block_tables(sequences, block_size: int, prefix_tokens: int = 0, pool_blocks: int | None = None
                 ) -> BlockTableLayout:
    """Block tables for ``sequences``, a list of ``(name, tokens, shares_prefix)``.

    The sharers' first ``prefix_tokens`` tokens are identical: ``prefix_tokens // block_size`` full
    blocks are allocated once (first, from the head of the free list) and mapped by every sharer; the
    rest of each sequence goes into private blocks, allocated one per sequence per round in list order.
    ``pool_blocks`` (default: exactly the blocks needed) adds free blocks at the end of the pool.
    """
    chk.positive_int("block_size", block_size)
    chk.non_negative_int("prefix_tokens", prefix_tokens)
    if not sequences:
        raise ValueError("sequences must list at least one (name, tokens, shares_prefix)")
    names = [s[0] for s in sequences]
    if len(set(names)) != len(names):
        raise ValueError(f"sequence names must be unique, got {names}")
    sharers = [s for s in sequences if s[2]]
    for name, tokens, shares in sequences:
        chk.positive_int(f"tokens of sequence {name!r}", tokens)
        if shares and tokens < prefix_tokens:
            raise ValueError(f"sequence {name!r} shares a {prefix_tokens}-token prefix but has only {tokens} tokens")
    shared = prefix_tokens // block_size if len(sharers) >= 2 else 0
    next_free = shared
    tables: dict[str, list[int]] = {name: list(range(shared)) if shares else [] for name, _, shares in sequences}
    need = {name: blocks_per_sequence(tokens, block_size) for name, tokens, _ in sequences}
    while any(len(tables[n]) < need[n] for n in names):
        for n in names:
            if len(tables[n]) < need[n]:
                tables[n].append(next_free)
                next_free += 1
    size = next_free if pool_blocks is None else pool_blocks
    if size < next_free:
        raise ValueError(f"pool_blocks {pool_blocks} is smaller than the {next_free} blocks the sequences need")
    filled, refs = [0] * size, [0] * size
    out = []
    for name, tokens, shares in sequences:
        table = tables[name]
        fills = tuple(min(block_size, tokens - i * block_size) for i in range(len(table)))
        for phys, fill in zip(table, fills):
            refs[phys] += 1
            filled[phys] = fill
        out.append(SequenceTable(name, tokens, bool(shares), tuple(table), fills,
                                 len(table) * block_size - tokens))
    return BlockTableLayout(block_size, prefix_tokens, shared, tuple(out),
                            tuple(PhysicalBlock(i, filled[i], refs[i]) for i in range(size)))
