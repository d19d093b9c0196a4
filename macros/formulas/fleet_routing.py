"""Fleet routing and scaling: where to send a request among replicas of one model (Q135), how much
headroom and what weight distribution an autoscaled fleet needs (Q136), and how multi-node groups pack
into NVLink domains (Q146); the last two at the end of the module.

Routing, two models:

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
    "Headroom", "ramp_headroom", "Distribution", "weight_distribution", "DomainPacking", "pack_groups",
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


# --- autoscaling a fleet (Q136): headroom for the cold start, and spreading weights to many nodes ------

@dataclass(frozen=True)
class Headroom:
    window: float             # seconds from the load starting to rise to a new replica serving
    extra_load: float         # requests/s the load gains in that window
    spare_replicas: int       # ceil(extra_load / replica_capacity)
    max_target: float         # highest utilisation target that still absorbs the ramp at base_load


def ramp_headroom(ramp: float, detect_s: float, cold_start_s: float, replica_capacity: float,
                  base_load: float) -> Headroom:
    """Spare capacity an autoscaler must keep while a new replica starts.

    The load grows by ``ramp`` requests/s every second. A new replica serves only after the autoscaler
    has noticed (``detect_s``: scrape, averaging, sync period) and the replica has cold-started
    (``cold_start_s``), so the running replicas absorb ``extra = ramp × (detect + cold start)`` on their
    own: ``spare = ceil(extra / replica_capacity)`` replicas' worth. As a utilisation target at
    ``base_load``: replicas sized to ``base / (target × capacity)`` must carry ``base + extra`` at full
    capacity, so ``target ≤ base / (base + extra)``.
    """
    chk.non_negative("ramp", ramp)
    chk.non_negative("detect_s", detect_s)
    chk.non_negative("cold_start_s", cold_start_s)
    chk.positive("replica_capacity", replica_capacity)
    chk.positive("base_load", base_load)
    window = detect_s + cold_start_s
    extra = ramp * window
    spare = -int(-extra // replica_capacity)  # ceil without float surprises at exact multiples
    return Headroom(window, extra, spare, base_load / (base_load + extra))


@dataclass(frozen=True)
class Distribution:
    nodes: int
    naive: float              # seconds: every node reads the store at once
    tree: float               # seconds: one copy from the store, then copies double per round
    pipelined: float          # seconds: chunks flow down a chain of nodes as they arrive


def weight_distribution(nodes: int, node_bytes: float, node_bytes_per_s: float, store_bytes_per_s: float,
                        chunk_bytes: float) -> Distribution:
    """Time to put ``node_bytes`` of weights on each of ``nodes`` new nodes.

    - naive: all nodes read the shared store at once; each gets ``min(node link, store / nodes)``, so
      ``node_bytes × max(1 / node link, nodes / store)``;
    - tree: the first node reads the store, ``node_bytes / min(node link, store)``; then every node that
      holds a copy sends one to a node without, ``ceil(log2(nodes))`` rounds of ``node_bytes / node link``;
    - pipelined: the first node streams from the store and forwards each chunk of ``chunk_bytes`` to the
      next node as it arrives, and so on down a chain: ``node_bytes / min(node link, store) +
      (nodes − 1) × chunk / node link``.

    Bandwidths in bytes/s, each node's link taken as both its receive and send rate; ignores per-copy
    set-up latency, and the disk or GPU write behind the link.
    """
    nodes = chk.positive_int("nodes", nodes)
    chk.positive("node_bytes", node_bytes)
    chk.positive("node_bytes_per_s", node_bytes_per_s)
    chk.positive("store_bytes_per_s", store_bytes_per_s)
    chk.positive("chunk_bytes", chunk_bytes)
    if chunk_bytes > node_bytes:
        raise ValueError(f"chunk_bytes ({chunk_bytes:g}) cannot exceed node_bytes ({node_bytes:g})")
    naive = node_bytes * max(1.0 / node_bytes_per_s, nodes / store_bytes_per_s)
    first = node_bytes / min(node_bytes_per_s, store_bytes_per_s)
    rounds = (nodes - 1).bit_length()  # ceil(log2(nodes)) for nodes >= 1
    tree = first + rounds * node_bytes / node_bytes_per_s
    pipelined = first + (nodes - 1) * chunk_bytes / node_bytes_per_s
    return Distribution(nodes, naive, tree, pipelined)


# --- multi-node groups in NVLink domains (Q146) ---------------------------------------------------------

@dataclass(frozen=True)
class DomainPacking:
    group_gpus: int
    nodes_per_group: int      # ceil(group GPUs / GPUs per node): a group takes whole nodes
    groups: int               # groups that fit in one NVLink domain without spanning it
    used_gpus: int            # groups × group GPUs
    stranded_gpus: int        # domain GPUs the groups leave idle
    groups_one_node_down: int  # groups that still fit with one node of the domain failed
    stranded_exclusive: int   # stranded GPUs when a domain may hold only one group (exclusive placement)


def pack_groups(domain_nodes: int, gpus_per_node: int, group_gpus: int) -> DomainPacking:
    """How many serving groups of ``group_gpus`` GPUs fit in one NVLink domain of ``domain_nodes`` nodes.

    A group larger than a node (one replica spanning several pods, as a LeaderWorkerSet group) takes whole
    nodes, one pod per node: ``nodes_per_group = ceil(group_gpus / gpus_per_node)``; ``groups =
    floor(domain_nodes / nodes_per_group)``. A group that fits in a node shares it: ``floor(gpus_per_node /
    group_gpus)`` per node. Stranded GPUs = domain GPUs − groups × group GPUs: the nodes no group can use plus
    the unused GPUs of partly used nodes. A group larger than the domain fits zero times (it must span
    domains over the scale-out network). With exclusive placement (LeaderWorkerSet's
    ``exclusive-topology`` annotation: one group per topology domain) the domain strands all but ``G``.
    """
    domain_nodes = chk.positive_int("domain_nodes", domain_nodes)
    gpus_per_node = chk.positive_int("gpus_per_node", gpus_per_node)
    group_gpus = chk.positive_int("group_gpus", group_gpus)
    if group_gpus <= gpus_per_node:  # single-node replicas: several may share a node
        per_node = gpus_per_node // group_gpus
        groups, per_group, down = domain_nodes * per_node, 1, (domain_nodes - 1) * per_node
    else:
        per_group = -(-group_gpus // gpus_per_node)
        groups, down = domain_nodes // per_group, (domain_nodes - 1) // per_group
    used = groups * group_gpus
    total = domain_nodes * gpus_per_node
    exclusive = total - group_gpus if groups else total
    return DomainPacking(group_gpus, per_group, groups, used, total - used, down, exclusive)
