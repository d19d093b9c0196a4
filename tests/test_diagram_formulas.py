"""The small simulators behind the generated diagrams, against schedules and tables worked out by hand
(macros/formulas/batchsim.py, macros/formulas/blocktable.py)."""

from __future__ import annotations

import pytest

from macros import formulas as F

# Four slots, eight queued requests needing 8, 3, 5, 2, 4, 6, 2, 3 steps (33 busy slot-steps).
LENGTHS = (8, 3, 5, 2, 4, 6, 2, 3)


def test_static_batching_by_hand():
    s = F.static_batching(LENGTHS, 4)
    # Batch 1 (R0-R3) runs max(8, 3, 5, 2) = 8 steps; batch 2 (R4-R7) starts at step 8 and runs
    # max(4, 6, 2, 3) = 6 steps: 14 steps, 4 x 14 = 56 slot-steps of which 33 are busy.
    assert s.steps == 14
    assert [(r.slot, r.start, r.end) for r in s.runs] == [
        (0, 0, 8), (1, 0, 3), (2, 0, 5), (3, 0, 2), (0, 8, 12), (1, 8, 14), (2, 8, 10), (3, 8, 11)]
    assert s.busy_slot_steps == 33 and s.idle_slot_steps() == 23
    assert s.utilization == pytest.approx(33 / 56)
    # completions 8, 3, 5, 2, 12, 14, 10, 11 -> 65 / 8
    assert s.mean_completion == pytest.approx(65 / 8)


def test_continuous_batching_by_hand():
    s = F.continuous_batching(LENGTHS, 4)
    # R0-R3 start at step 0. R3 (2 steps) frees slot 3 after step 2: R4 runs steps 2-5 there. R1 frees
    # slot 1 at 3: R5 runs 3-8. R2 frees slot 2 at 5: R6 runs 5-6. Slot 3 frees again at 6: R7 runs 6-8.
    assert [(r.slot, r.start, r.end) for r in s.runs] == [
        (0, 0, 8), (1, 0, 3), (2, 0, 5), (3, 0, 2), (3, 2, 6), (1, 3, 9), (2, 5, 7), (3, 6, 9)]
    assert s.steps == 9
    assert s.utilization == pytest.approx(33 / 36)
    assert s.mean_completion == pytest.approx((8 + 3 + 5 + 2 + 6 + 9 + 7 + 9) / 8)


def test_the_two_agree_when_nothing_waits_or_lengths_are_equal():
    # More slots than requests: one batch either way, and it lasts as long as the longest request.
    a, b = F.static_batching((5, 1, 3), 4), F.continuous_batching((5, 1, 3), 4)
    assert a.runs == b.runs and a.steps == b.steps == 5
    # Equal lengths: static batches are already full to the end, so continuous gains nothing.
    a, b = F.static_batching((4,) * 6, 3), F.continuous_batching((4,) * 6, 3)
    assert a.steps == b.steps == 8 and a.utilization == b.utilization == 1.0


@pytest.mark.parametrize("lengths, slots, msg", [((), 2, "at least one"), ((3, 0), 2, r"lengths\[1\]"),
                                                 ((3,), 0, "slots"), ((2.5,), 1, r"lengths\[0\]")])
def test_batching_rejects_bad_input(lengths, slots, msg):
    for fn in (F.static_batching, F.continuous_batching):
        with pytest.raises(ValueError, match=msg):
            fn(lengths, slots)


def test_block_tables_by_hand():
    # Blocks of 16; A (40 tokens) and B (27) start with the same 20-token prompt, C (30) does not.
    lay = F.block_tables([("A", 40, True), ("B", 27, True), ("C", 30, False)], 16, prefix_tokens=20,
                         pool_blocks=8)
    # One full shared block (P0, 2 refs); the prompt's other 4 tokens live in A's and B's own blocks.
    # Round 1: A->P1, B->P2, C->P3; round 2: A->P4, C->P5 (B needs only two blocks). P6, P7 are free.
    a, b, c = lay.sequences
    assert lay.shared_blocks == 1
    assert a.table == (0, 1, 4) and a.fills == (16, 16, 8) and a.tail_empty == 8
    assert b.table == (0, 2) and b.fills == (16, 11) and b.tail_empty == 5
    assert c.table == (3, 5) and c.fills == (16, 14) and c.tail_empty == 2
    assert [(p.filled, p.refs) for p in lay.blocks] == [
        (16, 2), (16, 1), (11, 1), (16, 1), (8, 1), (14, 1), (0, 0), (0, 0)]
    assert lay.tail_empty_total == 15


def test_block_tables_share_only_full_blocks_and_only_between_two_or_more():
    # A 15-token prompt does not fill a 16-token block: nothing is shared.
    lay = F.block_tables([("A", 20, True), ("B", 18, True)], 16, prefix_tokens=15)
    assert lay.shared_blocks == 0 and all(p.refs == 1 for p in lay.blocks)
    # One sharer alone shares with nobody.
    lay = F.block_tables([("A", 40, True), ("C", 5, False)], 16, prefix_tokens=32)
    assert lay.shared_blocks == 0 and lay.sequences[0].table == (0, 2, 3)
    # Block counts are kvbudget.blocks_per_sequence, tails at most block_size - 1.
    for s in F.block_tables([(f"s{n}", n, False) for n in (1, 16, 17, 31)], 16).sequences:
        assert len(s.table) == F.blocks_per_sequence(s.tokens, 16)
        assert 0 <= s.tail_empty <= 15


@pytest.mark.parametrize("seqs, kw, msg", [
    ([], {}, "at least one"),
    ([("A", 4, False), ("A", 5, False)], {}, "unique"),
    ([("A", 10, True), ("B", 40, True)], {"prefix_tokens": 16}, "only 10 tokens"),
    ([("A", 40, False)], {"pool_blocks": 2}, "smaller than the 3 blocks"),
    ([("A", 0, False)], {}, "tokens of sequence 'A'"),
])
def test_block_tables_reject_bad_input(seqs, kw, msg):
    with pytest.raises(ValueError, match=msg):
        F.block_tables(seqs, 16, **kw)
