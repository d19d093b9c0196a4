"""Q126: examples/operations/tool_calls.py. One captured request per broken layer; the expected layer and
the rendered text are read off the fixture templates by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from examples.operations.tool_calls import bisect_tool_call, parse_hermes, render, select_template

TEMPLATES = json.loads((Path(__file__).resolve().parents[2] / "examples" / "operations" / "fixtures"
                        / "tool-templates.json").read_text(encoding="utf-8"))
WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Current weather",
                                            "parameters": {"type": "object",
                                                           "properties": {"city": {"type": "string"}}}}}
MESSAGES = [{"role": "user", "content": "Weather in Paris?"}]
REQUEST = {"messages": MESSAGES, "tools": [WEATHER], "tool_choice": "auto"}
CALL = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
WITH_CALLS = {"choices": [{"message": {"tool_calls": [{"function": {"name": "get_weather"}}]},
                           "finish_reason": "tool_calls"}]}
AS_TEXT = {"choices": [{"message": {"content": CALL, "tool_calls": []}, "finish_reason": "stop"}]}


def test_template_selection_follows_transformers() -> None:
    assert select_template(TEMPLATES, [WEATHER]) == TEMPLATES["tool_use"]
    assert select_template(TEMPLATES, None) == TEMPLATES["default"]
    with pytest.raises(ValueError, match=r"\['tool_use'\] have no 'default'"):
        select_template({"tool_use": "x"}, None)


def test_tool_use_template_renders_the_definition_as_plain_json() -> None:
    prompt = render(TEMPLATES, MESSAGES, [WEATHER])
    assert '{"type": "function", "function": {"name": "get_weather"' in prompt   # json.dumps spacing
    assert prompt.endswith("<|user|>\nWeather in Paris?<|end|>\n<|assistant|>\n")


def test_healthy_request_passes_all_layers() -> None:
    prompt = render(TEMPLATES, MESSAGES, [WEATHER])
    assert bisect_tool_call(REQUEST, prompt, CALL, WITH_CALLS) == (0, "all four layers worked: ['get_weather']")


def test_layer_1_tool_choice_none() -> None:
    layer, _ = bisect_tool_call({**REQUEST, "tool_choice": "none"}, "", "", {})
    assert layer == 1


def test_layer_2_override_template_without_a_tools_branch() -> None:
    # --chat-template pointing at the plain template: the tool definitions never reach the prompt.
    prompt = render(TEMPLATES["default"], MESSAGES, [WEATHER])
    layer, why = bisect_tool_call(REQUEST, prompt, "It is probably mild in Paris.", AS_TEXT)
    assert (layer, why) == (2, "template: tools ['get_weather'] are not in the rendered prompt; "
                               "the model never saw them")


def test_layer_3_prose_malformed_and_invented_calls() -> None:
    prompt = render(TEMPLATES, MESSAGES, [WEATHER])
    assert bisect_tool_call(REQUEST, prompt, "Let me check that for you.", AS_TEXT)[0] == 3
    broken = CALL.replace("}}</tool_call>", "}</tool_call>")      # one closing brace lost
    layer, why = bisect_tool_call(REQUEST, prompt, broken, AS_TEXT)
    assert layer == 3 and "not valid JSON (JSONDecodeError" in why
    invented = CALL.replace("get_weather", "get_forecast")
    assert bisect_tool_call(REQUEST, prompt, invented, AS_TEXT) == (
        3, "model: called ['get_forecast'], which the request did not offer")


def test_layer_4_call_in_the_text_but_not_in_tool_calls() -> None:
    prompt = render(TEMPLATES, MESSAGES, [WEATHER])
    layer, why = bisect_tool_call(REQUEST, prompt, CALL, AS_TEXT)
    assert layer == 4 and "--tool-call-parser" in why


def test_parse_hermes_matches_the_vllm_regex_cases() -> None:
    # Two tagged calls, and an unterminated one at the end of the text (the regex's second branch).
    two = CALL + CALL.replace("Paris", "Lyon")
    assert [c["arguments"]["city"] for c in parse_hermes(two)[0]] == ["Paris", "Lyon"]
    tail = '<tool_call>{"name": "get_weather", "arguments": {}}'
    assert parse_hermes(tail) == ([{"name": "get_weather", "arguments": {}}], None)
    assert parse_hermes("no call") == ([], None)
