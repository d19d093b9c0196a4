"""Q128: examples/operations/constrained_json.py. The toy model's preferences are a table; every expected
text, finish reason and count below is traced through that table by hand."""

from __future__ import annotations

import pytest

from examples.operations.constrained_json import check_outputs, constrained_greedy, enum_object_language

SCHEMA = {"type": "object",
          "properties": {"sentiment": {"enum": ["pos", "neg"]}, "urgent": {"type": "boolean"}},
          "required": ["sentiment", "urgent"], "additionalProperties": False}
EOS = "<eos>"
VOCAB = ["Sure", ":", " ", "{", "}", ",", '"sentiment"', '"urgent"', '"pos"', '"neg"', '"yes"', "true", "false"]
# A chatty model: next-token preferences keyed by the end of the text (longest matching key wins).
PREFS = {"": {"Sure": 3, "{": 2}, "Sure": {":": 3}, "Sure:": {" ": 3}, ": ": {"{": 3},
         "{": {'"sentiment"': 3}, '"sentiment"': {":": 3}, '"sentiment":': {'"pos"': 3, '"neg"': 1},
         '"pos"': {",": 3}, ",": {'"urgent"': 3}, '"urgent"': {":": 3},
         '"urgent":': {'"yes"': 3, "true": 2, "false": 1},
         '"yes"': {"}": 3}, "true": {"}": 3}, "false": {"}": 3}, "}": {EOS: 3}}


def score(text: str, token: str) -> float:
    key = max((k for k in PREFS if text.endswith(k)), key=len)
    return PREFS[key].get(token, 0.0)


def test_language_of_the_enum_schema_has_four_texts() -> None:
    assert enum_object_language(SCHEMA) == {'{"sentiment":"pos","urgent":true}', '{"sentiment":"pos","urgent":false}',
                                            '{"sentiment":"neg","urgent":true}', '{"sentiment":"neg","urgent":false}'}


def test_unconstrained_model_wraps_its_json_in_chatter_and_uses_a_string_for_a_boolean() -> None:
    text, reason, checks = constrained_greedy(score, VOCAB, None, EOS, max_tokens=50)
    assert (text, reason, checks) == ('Sure: {"sentiment":"pos","urgent":"yes"}', "stop", 0)
    assert check_outputs(SCHEMA, [(text, reason)]) == {"not_json": 1}


def test_mask_forces_valid_json_and_costs_one_check_per_token_per_step() -> None:
    text, reason, checks = constrained_greedy(score, VOCAB, enum_object_language(SCHEMA), EOS, max_tokens=50)
    # "{" is the only legal first token; "true" beats "false" once '"yes"' is masked out.
    assert (text, reason) == ('{"sentiment":"pos","urgent":true}', "stop")
    # Nine tokens plus EOS = 10 steps, each checking 13 tokens + EOS = 14 candidates.
    assert checks == 10 * 14
    assert check_outputs(SCHEMA, [(text, reason)]) == {"valid": 1}


def test_the_guarantee_ends_at_max_tokens() -> None:
    text, reason, _ = constrained_greedy(score, VOCAB, enum_object_language(SCHEMA), EOS, max_tokens=5)
    assert (text, reason) == ('{"sentiment":"pos",', "length")   # five tokens, then the budget ran out
    assert check_outputs(SCHEMA, [(text, reason)]) == {"truncated": 1}


def test_check_outputs_separates_the_four_classes() -> None:
    tally = check_outputs(SCHEMA, [('{"sentiment":"neg","urgent":false}', "stop"),
                                   ('{"sentiment":"pos","urgent":"yes"}', "stop"),
                                   ('{"sentiment":"pos","urgent":true,"extra":1}', "stop"),
                                   ("Sure: {}", "stop"), ('{"sentiment":', "length")])
    assert tally == {"valid": 1, "schema_violation": 2, "not_json": 1, "truncated": 1}


def test_a_vocabulary_that_cannot_spell_the_language_fails_loudly() -> None:
    with pytest.raises(RuntimeError, match="no token can extend ''"):
        constrained_greedy(score, ["Sure"], enum_object_language(SCHEMA), EOS, max_tokens=5)


def test_schemas_outside_the_toy_language_are_rejected_with_the_property_named() -> None:
    bad = {**SCHEMA, "properties": {**SCHEMA["properties"], "note": {"type": "string"}},
           "required": ["sentiment", "urgent", "note"]}
    with pytest.raises(ValueError, match="property 'note'"):
        enum_object_language(bad)
    with pytest.raises(ValueError, match="additionalProperties false"):
        enum_object_language({**SCHEMA, "additionalProperties": True})
