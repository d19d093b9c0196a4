"""Static against continuous batching of one fixed set of requests, step by step (the Q76 figure).

The model is the textbook one the page draws: every request is queued at step 0 and needs a known
number of decode steps (one output token per step; its first step is the prefill, which also emits the
first token, as in Orca's iteration-level scheduling). A batch has ``slots`` places.

- **Static (request-level) batching**: requests are taken in queue order, ``slots`` at a time; a batch
  runs until its longest member finishes, and the next batch starts only then.
- **Continuous (iteration-level) batching**: a slot freed at the end of step ``t`` takes the next
  queued request at step ``t + 1``.

Utilisation is busy slot-steps over ``slots x steps``; a request's completion is the step that produces
its last token (1-based), so static batching is not charged for holding results until its batch ends.
Pure Python; nothing here formats numbers.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from . import _checks as chk

__all__ = ["BatchRun", "BatchSchedule", "continuous_batching", "static_batching"]


@dataclass(frozen=True)
class BatchRun:
    request: int   # index in queue order (0-based)
    slot: int      # batch slot (0-based)
    start: int     # first step it occupies (0-based)
    end: int       # one past its last step; equals its completion step counted from 1


@dataclass(frozen=True)
class BatchSchedule:
    policy: str                 # "static" | "continuous"
    slots: int
    runs: tuple[BatchRun, ...]  # one per request, in queue order
    steps: int                  # steps until the last request finishes (makespan)
    busy_slot_steps: int        # sum of the output lengths
    utilization: float          # busy_slot_steps / (slots x steps)
    mean_completion: float      # mean completion step over requests

    def idle_slot_steps(self) -> int:
        return self.slots * self.steps - self.busy_slot_steps


def _check(lengths, slots: int) -> tuple[int, ...]:
    chk.positive_int("slots", slots)
    if not lengths:
        raise ValueError("lengths must list at least one request's output length")
    for i, n in enumerate(lengths):
        chk.positive_int(f"lengths[{i}]", n)
    return tuple(lengths)


def _schedule(policy: str, slots: int, lengths: tuple[int, ...], runs: list[BatchRun]) -> BatchSchedule:
    steps = max(r.end for r in runs)
    busy = sum(lengths)
    return BatchSchedule(policy, slots, tuple(runs), steps, busy, busy / (slots * steps),
                         sum(r.end for r in runs) / len(runs))


def static_batching(lengths, slots: int) -> BatchSchedule:
    """Request-level batching: batch ``b`` holds requests ``b x slots`` .. ``(b + 1) x slots - 1`` and
    starts when every request of batch ``b - 1`` has finished, i.e. after ``max(lengths)`` of that batch."""
    lengths = _check(lengths, slots)
    runs, start = [], 0
    for b in range(0, len(lengths), slots):
        batch = lengths[b:b + slots]
        runs += [BatchRun(b + i, i, start, start + n) for i, n in enumerate(batch)]
        start += max(batch)
    return _schedule("static", slots, lengths, runs)


def continuous_batching(lengths, slots: int) -> BatchSchedule:
    """Iteration-level batching: each request, in queue order, takes the slot that frees first (the
    lowest-numbered one on a tie) and starts at the step after that slot's previous request finished."""
    lengths = _check(lengths, slots)
    free = [(0, s) for s in range(slots)]   # (first free step, slot)
    runs = []
    for i, n in enumerate(lengths):
        at, slot = heapq.heappop(free)
        runs.append(BatchRun(i, slot, at, at + n))
        heapq.heappush(free, (at + n, slot))
    return _schedule("continuous", slots, lengths, runs)
