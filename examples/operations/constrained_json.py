"""Q128: what constrained decoding does, on a toy scale, and the check a deployment runs on its outputs.

``constrained_greedy`` is a token-masking decoder over a tiny vocabulary: at each step it keeps only the
tokens that extend the output towards some string of the allowed language, then takes the best of those.
Production backends (xgrammar, guidance in vLLM 0.11) compile a JSON schema into a grammar automaton and
compute the same mask as a bitmask over the whole vocabulary; here the language is a finite set of strings,
so a prefix test is the automaton. The point it demonstrates is the contract: the mask guarantees the
form, the step budget (``max_tokens``) can still cut the output short, and the mask costs work per step.

``check_outputs`` is the monitoring side: classify served responses against the schema with the
``jsonschema`` package, and count truncations separately, since they need a different fix.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence

import jsonschema

Scorer = Callable[[str, str], float]   # (text so far, candidate token) -> score; higher is preferred


# --8<-- [start:decode]
def constrained_greedy(score: Scorer, vocab: Sequence[str], allowed: set[str] | None, eos: str,
                       max_tokens: int) -> tuple[str, str, int]:
    """Greedy decoding; with ``allowed`` set, tokens that leave the language are masked out.
    Returns (text, finish_reason, number of mask checks made)."""
    text, checks = "", 0
    for _ in range(max_tokens):
        candidates = list(vocab) + [eos]
        if allowed is not None:                       # the mask: one check per vocabulary entry per step
            checks += len(candidates)
            candidates = [t for t in candidates
                          if (t == eos and text in allowed)
                          or (t != eos and any(s.startswith(text + t) for s in allowed))]
            if not candidates:
                raise RuntimeError(f"no token can extend {text!r}: the vocabulary cannot spell the language")
        best = max(candidates, key=lambda t: score(text, t))
        if best == eos:
            return text, "stop", checks
        text += best
    return text, "length", checks
# --8<-- [end:decode]


def enum_object_language(schema: dict) -> set[str]:
    """Every compact JSON text of an object schema whose properties are all enums or booleans, keys in
    schema order, all required, no additional properties: a finite language, so a set of strings."""
    props = schema.get("properties", {})
    if schema.get("type") != "object" or schema.get("additionalProperties", True) is not False \
            or sorted(schema.get("required", [])) != sorted(props):
        raise ValueError("schema must be an object with all properties required and additionalProperties false")
    texts = [""]
    for key, sub in props.items():
        values = sub.get("enum") or ([True, False] if sub.get("type") == "boolean" else None)
        if values is None:
            raise ValueError(f"property {key!r}: only enum and boolean properties give a finite language")
        texts = [t + ("," if t else "") + json.dumps(key) + ":" + json.dumps(v) for t in texts for v in values]
    return {"{" + t + "}" for t in texts}


# --8<-- [start:check]
def check_outputs(schema: dict, responses: Sequence[tuple[str, str]]) -> Counter:
    """Classify (text, finish_reason) pairs: valid, truncated, not_json, schema_violation."""
    validator = jsonschema.Draft202012Validator(schema)
    tally: Counter = Counter()
    for text, finish_reason in responses:
        if finish_reason == "length":
            tally["truncated"] += 1                 # cut by max_tokens: raise the budget, not the grammar
            continue
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            tally["not_json"] += 1
            continue
        tally["valid" if validator.is_valid(doc) else "schema_violation"] += 1
    return tally
# --8<-- [end:check]
