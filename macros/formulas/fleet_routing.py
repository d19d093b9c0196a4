"""Fleet routing: where to send a request among replicas of one model (Q135).

Two models:

- **Estimated TTFT per candidate replica.** A request of ``P`` prompt tokens, ``C_i`` of them already in
  replica ``i``'s prefix cache, waits behind ``Q_i`` prompt tokens queued there, and then prefills the
  rest: ``ttft_i ≈ (Q_i + P − C_i) / prefill_rate``. The router that minimises it trades cache hits against
  queue depth. Next to it, the score that the Gateway API Inference Extension's default endpoint-picker
  profile (v1.5.0) gives the same candidates: queue 2, KV-cache utilisation 2, prefix 3, summed and the
  maximum picked.
- **Token hit rate of a multi-turn session under round-robin vs affinity.** Turn ``k`` of a session sends
  the system prompt, the whole history and a new user message. The replica that served turn ``j`` holds
  the prefix up to the end of turn ``j``'s output; with prefix affinity turn ``k`` always finds turn
  ``k − 1``'s, and with round-robin (or random) placement across ``N`` replicas it finds whatever its
  replica last served of this session, which is turn ``k − m`` with probability ``(1/N)(1 − 1/N)^(m−1)``.

Units: tokens, tokens per second, seconds. Nothing here models eviction: the hit rates are upper bounds
that hold while the replicas' caches keep the prefixes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from . import _checks as chk

__all__ = [
    "GAIE_DEFAULT_WEIGHTS", "GAIE_MAX_PREFIX_BLOCKS", "Candidate", "CandidateScore", "candidate_ttft",
    "gaie_default_scores", "cached_full_blocks", "session_hit_rate", "SessionHitRate", "turn_prompt_tokens",
]

#: Default scheduling profile of the endpoint picker in gateway-api-inference-extension v1.5.0
#: (pkg/epp/config/loader/defaults.go): scorer type -> weight.
GAIE_DEFAULT_WEIGHTS = {"queue-scorer": 2.0, "kv-cache-utilization-scorer": 2.0, "prefix-cache-scorer": 3.0}
#: defaultMaxPrefixBlocks in the approximate prefix producer (v1.5.0): prompts are hashed up to this many blocks.
GAIE_MAX_PREFIX_BLOCKS = 256


def cached_full_blocks(tokens: float, block_size: int) -> int:
    """Tokens held in full blocks: ``floor(tokens / block_size) × block_size``. Prefix caches of vLLM
    (hashed full blocks) share nothing of a partial block."""
    chk.non_negative("tokens", tokens)
    block_size = chk.positive_int("block_size", block_size)
    return int(tokens // block_size) * block_size


@dataclass(frozen=True)
class Candidate:
    name: str
    waiting_requests: int     # vllm:num_requests_waiting
    queued_tokens: float      # prompt tokens queued ahead of this request (not yet prefilled)
    kv_usage: float           # vllm:kv_cache_usage_perc, 0..1
    cached_tokens: float      # prefix of this prompt already in this replica's cache


@dataclass(frozen=True)
class CandidateScore:
    candidate: Candidate
    ttft: float               # seconds, (queued + prompt − cached) / prefill rate
    queue_score: float        # GAIE queue-scorer, 0..1
    kv_score: float           # GAIE kv-cache-utilization-scorer, 1 − usage
    prefix_score: float       # GAIE prefix-cache-scorer, matched blocks / hashed blocks
    total: float              # weighted sum with GAIE_DEFAULT_WEIGHTS


def candidate_ttft(prompt_tokens: float, cached_tokens: float, queued_tokens: float, prefill_rate: float) -> float:
    """Estimated time to first token on one replica: ``(queued + prompt − cached) / prefill_rate`` seconds.

    ``prefill_rate`` is the replica's prefill throughput in tokens/s at its current batch. Ignores the
    decode step that emits the first token and decode work interleaved with prefill (chunked prefill):
    on a busy replica the effective rate is lower, so this is a lower bound to compare candidates by.
    """
    chk.positive("prompt_tokens", prompt_tokens)
    chk.non_negative("cached_tokens", cached_tokens)
    chk.non_negative("queued_tokens", queued_tokens)
    chk.positive("prefill_rate", prefill_rate)
    if cached_tokens > prompt_tokens:
        raise ValueError(f"cached_tokens ({cached_tokens}) cannot exceed prompt_tokens ({prompt_tokens})")
    return (queued_tokens + prompt_tokens - cached_tokens) / prefill_rate


def _check_candidate(c: Candidate) -> None:
    chk.non_negative_int(f"{c.name}: waiting_requests", c.waiting_requests)
    chk.non_negative(f"{c.name}: queued_tokens", c.queued_tokens)
    chk.fraction(f"{c.name}: kv_usage", c.kv_usage, allow_zero=True)
    chk.non_negative(f"{c.name}: cached_tokens", c.cached_tokens)


def gaie_default_scores(candidates: Sequence[Candidate], prompt_tokens: float, prefill_rate: float,
                        block_size: int = 16) -> list[CandidateScore]:
    """Score candidates as the default endpoint-picker profile of gateway-api-inference-extension v1.5.0
    does, with the estimated TTFT alongside.

    - queue-scorer: ``(max_q − q) / (max_q − min_q)`` over the candidates' waiting requests, 1 for all when
      they are equal;
    - kv-cache-utilization-scorer: ``1 − usage``;
    - prefix-cache-scorer: matched blocks / hashed blocks, the prompt hashed in blocks of ``block_size``
      tokens up to 256 blocks (the picker hashes characters, four per token; here tokens stand in);
    - total: ``2 × queue + 2 × kv + 3 × prefix``; the max-score picker takes the highest.
    """
    if not candidates:
        raise ValueError("candidates must not be empty")
    block_size = chk.positive_int("block_size", block_size)
    for c in candidates:
        _check_candidate(c)
    qs = [c.waiting_requests for c in candidates]
    q_min, q_max = min(qs), max(qs)
    total_blocks = min(int(prompt_tokens // block_size), GAIE_MAX_PREFIX_BLOCKS)
    w = GAIE_DEFAULT_WEIGHTS
    out = []
    for c in candidates:
        ttft = candidate_ttft(prompt_tokens, c.cached_tokens, c.queued_tokens, prefill_rate)
        queue = 1.0 if q_max == q_min else (q_max - c.waiting_requests) / (q_max - q_min)
        kv = 1.0 - c.kv_usage
        prefix = min(int(c.cached_tokens // block_size), total_blocks) / total_blocks if total_blocks else 0.0
        total = (w["queue-scorer"] * queue + w["kv-cache-utilization-scorer"] * kv
                 + w["prefix-cache-scorer"] * prefix)
        out.append(CandidateScore(c, ttft, queue, kv, prefix, total))
    return out


def turn_prompt_tokens(turn: int, system_tokens: float, user_tokens: float, output_tokens: float) -> float:
    """Prompt of turn ``turn`` (1-based): system prompt + ``turn − 1`` earlier exchanges + the new message."""
    turn = chk.positive_int("turn", turn)
    chk.non_negative("system_tokens", system_tokens)
    chk.positive("user_tokens", user_tokens)
    chk.non_negative("output_tokens", output_tokens)
    return system_tokens + (turn - 1) * (user_tokens + output_tokens) + user_tokens


@dataclass(frozen=True)
class SessionHitRate:
    replicas: int
    affinity: float           # share of the session's prompt tokens found cached, prefix affinity
    spread: float             # the same under round-robin / random placement
    prompt_tokens: float      # sum over the session's turns
    cached_affinity: float    # tokens
    cached_spread: float      # expected tokens


def session_hit_rate(turns: int, system_tokens: float, user_tokens: float, output_tokens: float,
                     replicas: int, block_size: int = 16) -> SessionHitRate:
    """Share of a session's prompt tokens served from the prefix cache, with and without affinity.

    After serving turn ``j`` a replica holds ``c(j) = full blocks of (S + j × (u + o))``: the system
    prompt, ``j`` user messages and ``j`` answers. Every replica holds ``c(0)``, the shared system
    prompt (warm everywhere). Turn ``k`` with affinity finds ``c(k − 1)``. Spread over ``N`` replicas
    uniformly (round-robin with many sessions interleaved acts so), the replica turn ``k`` lands on last
    served turn ``k − m`` with probability ``(1/N)(1 − 1/N)^(m − 1)``, and none of this session's
    turns with probability ``(1 − 1/N)^(k − 1)``. Hit rate = Σ cached / Σ prompt over turns 1..T.
    Assumes the re-sent history tokenizes as it was generated and nothing is evicted.
    """
    turns = chk.positive_int("turns", turns)
    replicas = chk.positive_int("replicas", replicas)
    block_size = chk.positive_int("block_size", block_size)
    s, u, o = system_tokens, user_tokens, output_tokens
    total = sum(turn_prompt_tokens(k, s, u, o) for k in range(1, turns + 1))

    def c(j: int) -> int:
        return cached_full_blocks(s + j * (u + o), block_size)

    p_same = 1.0 / replicas
    aff = spread = 0.0
    for k in range(1, turns + 1):
        aff += c(k - 1)
        e = (1.0 - p_same) ** (k - 1) * c(0)
        for m in range(1, k):
            e += p_same * (1.0 - p_same) ** (m - 1) * c(k - m)
        spread += e
    return SessionHitRate(replicas, aff / total, spread / total, total, aff, spread)
