"""Serving the policy model in RL post-training and paying for determinism.

Weight synchronisation time from bytes and link bandwidth, the cost of the longest rollout in a
synchronous batch, and the slowdown of a run against its baseline. Bandwidths are decimal bytes per
second, one direction (a link sold as "900 GB/s bidirectional" moves 450 GB/s each way).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from . import _checks as chk

__all__ = ["weight_sync_time", "RolloutBatch", "rollout_batch", "Slowdown", "slowdown"]


def weight_sync_time(n_bytes: float, link_bytes_per_s: float, efficiency: float = 1.0) -> float:
    """Seconds for one receiving GPU to take in ``n_bytes`` of new weights over one link.

    ``bytes / (link bandwidth x efficiency)``. NCCL's pipelined ring broadcast or a point-to-point
    copy moves a buffer at about the bandwidth of the slowest hop whatever the number
    of receivers, so this is the time of the whole broadcast as well. ``efficiency`` (0, 1] is the
    share of the line rate the collective reaches; 1 gives the lower bound. Excludes rendezvous,
    the trainer-side gather of sharded parameters, and the engine's post-load processing
    (re-quantization, re-packing).
    """
    chk.non_negative("n_bytes", n_bytes)
    chk.positive("link_bytes_per_s", link_bytes_per_s)
    chk.positive("efficiency", efficiency)
    if efficiency > 1:
        raise ValueError(f"efficiency is a share of the line rate, at most 1, got {efficiency!r}")
    return n_bytes / (link_bytes_per_s * efficiency)


@dataclass(frozen=True)
class RolloutBatch:
    """A synchronous rollout batch: every sequence starts together, the batch ends with the longest."""

    sequences: int
    steps: int            # decode steps until the last sequence finishes = the longest output
    mean_tokens: float    # mean output length
    total_tokens: int     # output tokens generated in the batch
    occupancy: float      # total tokens / (sequences x steps): share of sequence slots doing work
    tail_steps: int       # steps after the second-longest sequence finished: one sequence running

    @property
    def stretch(self) -> float:
        """How much longer the batch runs than if every output had the mean length: steps / mean."""
        return self.steps / self.mean_tokens

    @property
    def idle_share(self) -> float:
        """Share of sequence slots that sit empty while the batch waits for its longest output."""
        return 1 - self.occupancy


def rollout_batch(lengths: Sequence[int]) -> RolloutBatch:
    """Occupancy of a synchronous rollout batch from its output lengths (tokens per sequence).

    One decode step adds one token to every unfinished sequence, so the batch needs ``max(L)``
    steps; ``sum(L)`` tokens fill ``len(L) x max(L)`` slots. Prefill and speculative decoding
    (several tokens per step) are left out.
    """
    if len(lengths) < 2:
        raise ValueError(f"a rollout batch needs at least two output lengths, got {len(lengths)}")
    for i, n in enumerate(lengths):
        chk.positive_int(f"lengths[{i}]", n)
    ordered = sorted(lengths)
    steps = ordered[-1]
    total = sum(ordered)
    n = len(ordered)
    return RolloutBatch(sequences=n, steps=steps, mean_tokens=total / n, total_tokens=total,
                        occupancy=total / (n * steps), tail_steps=steps - ordered[-2])


@dataclass(frozen=True)
class Slowdown:
    baseline_s: float
    run_s: float

    @property
    def ratio(self) -> float:
        """run time / baseline time."""
        return self.run_s / self.baseline_s

    @property
    def overhead(self) -> float:
        """Extra time as a share of the baseline: ``ratio - 1``."""
        return self.ratio - 1

    @property
    def throughput_share(self) -> float:
        """Throughput kept, as a share of the baseline's: ``baseline / run``."""
        return self.baseline_s / self.run_s


def slowdown(baseline_s: float, run_s: float) -> Slowdown:
    """Compare two timings of the same work: ratio, overhead and the share of throughput kept."""
    chk.positive("baseline_s", baseline_s)
    chk.positive("run_s", run_s)
    return Slowdown(baseline_s, run_s)
