"""Fleet routing (Q135): estimated TTFT and the default endpoint-picker score per candidate replica, and
the prefix-cache hit rate of multi-turn sessions under round-robin vs affinity, as a table and a figure
(formulas: :mod:`macros.formulas.fleet_routing`)."""

from __future__ import annotations

from html import escape

from .. import formulas as F
from .. import units as U
from ..errors import MacroInputError
from . import inputs
from .blocks import GIVEN, Example, _i, _n
from .linechart import ACCENT, DASHED, Series, line_chart
from .registry import COUNT, TOKENS, Arg, macro

_POS = Arg(inputs.number, "a number", "> 0")
_NONNEG_TOKENS = Arg(lambda name, v: inputs.tokens(name, v, allow_zero=True), "tokens", "integer >= 0 or '2K'")


def _pct(x: float) -> str:
    return U.fmt_pct(x)


def _candidates(rows) -> list[F.Candidate]:
    """Rows as a page writes them: [name, waiting requests, queued tokens, KV usage 0..1, cached tokens]."""
    if not isinstance(rows, (list, tuple)) or not rows:
        raise MacroInputError("candidates must be a non-empty list of [name, waiting_requests, queued_tokens, "
                              f"kv_usage, cached_tokens] rows, got {rows!r}")
    out = []
    for r in rows:
        if not isinstance(r, (list, tuple)) or len(r) != 5 or not isinstance(r[0], str):
            raise MacroInputError("each candidate must be [name, waiting_requests, queued_tokens, kv_usage, "
                                  f"cached_tokens], got {r!r}")
        for label, v in zip(("waiting_requests", "queued_tokens", "kv_usage", "cached_tokens"), r[1:]):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise MacroInputError(f"candidate {r[0]!r}: {label} must be a number, got {v!r}")
        out.append(F.Candidate(r[0], r[1], float(r[2]), float(r[3]), float(r[4])))
    return out


@macro("block", example='route_candidates(prompt_tokens=3000, prefill_rate=12000, candidates=[["A", 6, 30000, '
                        '0.85, 2900], ["B", 0, 0, 0.3, 0], ["C", 2, 6000, 0.6, 2048]])',
       args={"prompt_tokens": TOKENS, "prefill_rate": _POS, "block_size": COUNT})
def route_candidates(prompt_tokens: int, prefill_rate: float, candidates: list, block_size: int = 16) -> str:
    """Worked example: estimated TTFT per candidate replica against the default endpoint-picker score.

    TTFT ≈ (queued prompt tokens + prompt − cached) / prefill rate, and the score of the Gateway API
    Inference Extension v1.5.0 default profile (queue 2, KV-cache utilisation 2, prefix 3; max score
    wins). `candidates`: rows `[name, waiting requests, queued prompt tokens, KV usage 0..1, cached
    prefix tokens]`; `prefill_rate` in tokens/s of one replica.
    """
    cands = _candidates(candidates)
    scores = F.gaie_default_scores(cands, prompt_tokens, prefill_rate, block_size)
    hashed = min(prompt_tokens // block_size, F.GAIE_MAX_PREFIX_BLOCKS)
    ex = Example(f"one prompt of {_i(prompt_tokens)} tokens, {len(cands)} candidate replicas")
    ex.formula("estimated TTFT_i = (queued prompt tokens_i + prompt − cached_i) / prefill rate")
    ex.formula("score_i = 2 × (max_q − q_i) / (max_q − min_q) + 2 × (1 − KV usage_i) + 3 × matched blocks_i / "
               "hashed blocks")
    ex.input("prompt", f"{_i(prompt_tokens)} tokens", GIVEN)
    ex.input("prefill rate of one replica", U.fmt_rate(prefill_rate), "measured (given)")
    ex.input("block size", f"{block_size} tokens", "vLLM default on CUDA; the picker reads it from "
             "`vllm:cache_config_info`")
    ex.input("waiting requests, KV usage", "per candidate", "`vllm:num_requests_waiting`, "
             "`vllm:kv_cache_usage_perc`")
    ex.step(f"hashed blocks: min({_i(prompt_tokens)} / {block_size}, {F.GAIE_MAX_PREFIX_BLOCKS}) = {_i(hashed)}")
    for s in scores:
        c = s.candidate
        ex.step(f"{escape(c.name)}: TTFT ≈ ({_i(c.queued_tokens)} + {_i(prompt_tokens)} − {_i(c.cached_tokens)}) / "
                f"{_n(prefill_rate)} = {U.fmt_seconds(s.ttft)}; score = 2 × {U.fmt_num(s.queue_score)} + "
                f"2 × {U.fmt_num(s.kv_score)} + 3 × {U.fmt_num(s.prefix_score)} = {U.fmt_num(s.total)}")
    rows = ["| Replica | Waiting | Queued prompt tokens | KV usage | Cached prefix | Est. TTFT | Picker score |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for s in scores:
        c = s.candidate
        rows.append(f"| {escape(c.name)} | {_i(c.waiting_requests)} | {_i(c.queued_tokens)} | {_pct(c.kv_usage)} | "
                    f"{_i(c.cached_tokens)} | {U.fmt_seconds(s.ttft)} | {U.fmt_num(s.total)} |")
    ex.table("\n".join(rows))
    fastest = min(scores, key=lambda s: s.ttft)
    picked = max(scores, key=lambda s: s.total)
    ex.result(f"lowest estimated TTFT: {escape(fastest.candidate.name)} ({U.fmt_seconds(fastest.ttft)}); "
              f"highest default score: {escape(picked.candidate.name)} ({U.fmt_seconds(picked.ttft)})"
              + ("" if fastest is picked else
                 f": the default weights cost this request {U.fmt_seconds(picked.ttft - fastest.ttft)}"))
    ex.note("The queue scorer counts waiting requests, not their tokens, and is normalised across the "
            "candidates, so one long queued prompt weighs like one short one. The estimate ignores decode work "
            "sharing the steps (chunked prefill) and treats the picker's character hashing (four characters "
            "per token) as exact token blocks. Metrics are scraped, so both inputs lag by the scrape interval.")
    return ex.render()


def _spread_table(turns: int, system_tokens: int, user_tokens: int, output_tokens: int, replicas: list[int],
                  block_size: int) -> list[F.SessionHitRate]:
    return [F.session_hit_rate(turns, system_tokens, user_tokens, output_tokens, n, block_size) for n in replicas]


def hit_rate_svg(turns: int, system_tokens: int, user_tokens: int, output_tokens: int, max_replicas: int = 16,
                 block_size: int = 16) -> str:
    """The figure alone: token hit rate against replica count, affinity vs round-robin, one point per N."""
    ns = list(range(1, max_replicas + 1))
    rates = _spread_table(turns, system_tokens, user_tokens, output_tokens, ns, block_size)
    title = f"Prefix-cache hit rate of a session of {turns} turns against the number of replicas"
    desc = (f"Share of the session's prompt tokens found in cache. With prefix affinity it stays at "
            f"{_pct(rates[0].affinity)} whatever the replica count. With round-robin it falls from "
            f"{_pct(rates[0].spread)} at one replica to {_pct(rates[-1].spread)} at {max_replicas}, towards the "
            f"share of the shared system prompt alone.")
    caption = (f"{title}: system prompt {_i(system_tokens)}, {_i(user_tokens)} tokens per user message, "
               f"{_i(output_tokens)} per answer, blocks of {block_size}. Generated from the same formula as the "
               "table.")
    return line_chart(f"fig-hit-rate-{turns}-{system_tokens}-{user_tokens}-{output_tokens}", escape(title),
                      escape(desc), escape(caption), ns,
                      [Series("prefix affinity", [r.affinity for r in rates], ACCENT),
                       Series("round-robin", [r.spread for r in rates], DASHED)],
                      "replicas of the model", "prompt tokens served from cache", svg_class="hit-rate",
                      x_min=1, x_ticks=[n for n in ns if n == 1 or n % 4 == 0 or n == max_replicas],
                      y_ticks=[0, 0.25, 0.5, 0.75, 1.0], y_fmt=lambda v: f"{int(v * 100)}%", grid=True)


@macro("block", example='affinity_hit_rate(turns=8, system_tokens=1500, user_tokens=200, output_tokens=400)',
       args={"turns": COUNT, "system_tokens": _NONNEG_TOKENS, "user_tokens": TOKENS, "output_tokens": _NONNEG_TOKENS,
             "block_size": COUNT, "max_replicas": COUNT})
def affinity_hit_rate(turns: int, system_tokens: int, user_tokens: int, output_tokens: int,
                      replicas: list | None = None, block_size: int = 16, max_replicas: int = 16) -> str:
    """Worked example and figure: prefix-cache hit rate of a multi-turn session, round-robin vs affinity.

    Turn k's prompt = system + (k − 1) × (user + answer) + user. With affinity turn k finds turn k − 1's
    prefix; spread uniformly over N replicas it finds what its replica last served of the session, turn
    k − m with probability (1/N)(1 − 1/N)^(m − 1). Full blocks only; no eviction. `replicas`: the N
    values of the table (default 1, 2, 4, 8, 16); the figure plots N = 1..`max_replicas`.
    """
    ns = [1, 2, 4, 8, 16] if replicas is None else [inputs.count("replicas", n) for n in replicas]
    if not ns:
        raise MacroInputError("replicas must list at least one replica count")
    rows = _spread_table(turns, system_tokens, user_tokens, output_tokens, ns, block_size)
    last = F.turn_prompt_tokens(turns, system_tokens, user_tokens, output_tokens)
    ex = Example(f"a chat session of {turns} turns, spread over replicas")
    ex.formula("prompt of turn k = S + (k − 1) × (u + o) + u")
    ex.formula("cached with affinity = c(k − 1); cached spread over N = Σ_m (1/N)(1 − 1/N)^(m−1) × c(k − m) + "
               "(1 − 1/N)^(k−1) × c(0), with c(j) = full blocks of S + j × (u + o)")
    ex.formula("hit rate = Σ cached / Σ prompt over the session's turns")
    ex.input("turns per session", str(turns), GIVEN)
    ex.input("system prompt S (shared, warm on every replica)", f"{_i(system_tokens)} tokens", GIVEN)
    ex.input("user message u / answer o per turn", f"{_i(user_tokens)} / {_i(output_tokens)} tokens", GIVEN)
    ex.input("block size", f"{block_size} tokens", "vLLM default on CUDA")
    ex.step(f"last turn's prompt: {_i(system_tokens)} + {turns - 1} × {_i(user_tokens + output_tokens)} + "
            f"{_i(user_tokens)} = {_i(last)} tokens; the session sends {_i(rows[0].prompt_tokens)} prompt "
            "tokens in all")
    table = ["| Replicas | Same replica as last turn | Hit rate, round-robin | Hit rate, affinity | "
             "Prompt tokens prefilled, round-robin vs affinity |", "| --- | --- | --- | --- | --- |"]
    for r in rows:
        miss_rr = r.prompt_tokens - r.cached_spread
        miss_aff = r.prompt_tokens - r.cached_affinity
        table.append(f"| {r.replicas} | {_pct(1 / r.replicas)} | {_pct(r.spread)} | {_pct(r.affinity)} | "
                     f"{_i(miss_rr)} vs {_i(miss_aff)} ({U.fmt_num(miss_rr / miss_aff)}×) |")
    ex.table("\n".join(table))
    ex.table(hit_rate_svg(turns, system_tokens, user_tokens, output_tokens, max_replicas, block_size))
    big = rows[-1]
    ratio = (big.prompt_tokens - big.cached_spread) / (big.prompt_tokens - big.cached_affinity)
    ex.result(f"at {big.replicas} replicas round-robin serves {_pct(big.spread)} of the session's prompt tokens "
              f"from cache, affinity {_pct(big.affinity)}: round-robin prefills {U.fmt_num(ratio)}× as many tokens")
    ex.note("Upper bounds: nothing is evicted, the re-sent history tokenizes exactly as generated, and the "
            "system prompt is already cached on every replica. Round-robin with many sessions interleaved "
            "places a session's turns like uniform random placement.")
    return ex.render()
