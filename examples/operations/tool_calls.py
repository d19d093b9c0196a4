"""Q126: bisect a broken tool call through its four layers, from artifacts captured for one request.

Layers: (1) the request carries ``tools`` and a ``tool_choice`` that allows them; (2) the chat template
renders the tool definitions into the prompt; (3) the model writes a call in its trained format (Hermes
style here: ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``); (4) the server's tool parser
turns that text into ``tool_calls`` in the response. Each check needs only text: the request body, the
prompt from vLLM's ``/tokenize`` (or a render), the raw completion generated with
``skip_special_tokens: false``, and the response.

Template selection mirrors transformers' ``get_chat_template`` (a dict of named templates: ``tool_use``
when tools are passed, else ``default``); parsing mirrors vLLM 0.11's ``hermes`` tool parser (the same
regular expression; a call whose JSON does not load is returned as plain content).
"""

from __future__ import annotations

import json
import re

from jinja2.sandbox import ImmutableSandboxedEnvironment

_JINJA = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
_JINJA.filters["tojson"] = lambda x, indent=None: json.dumps(x, indent=indent)  # plain JSON, no HTML escaping
HERMES = re.compile(r"<tool_call>(.*?)</tool_call>|<tool_call>(.*)", re.DOTALL)   # vLLM 0.11 hermes parser


def select_template(chat_template: str | dict[str, str], tools: list | None) -> str:
    if isinstance(chat_template, str):
        return chat_template
    if tools is not None and "tool_use" in chat_template:
        return chat_template["tool_use"]
    if "default" in chat_template:
        return chat_template["default"]
    raise ValueError(f"named chat templates {sorted(chat_template)} have no 'default'")


def render(chat_template: str | dict[str, str], messages: list[dict], tools: list | None) -> str:
    return _JINJA.from_string(select_template(chat_template, tools)).render(
        messages=messages, tools=tools, add_generation_prompt=True)


def parse_hermes(text: str) -> tuple[list[dict], str | None]:
    """(calls, error): calls as {"name", "arguments"}; error set when a tagged call is not valid JSON."""
    if "<tool_call>" not in text:
        return [], None
    try:
        calls = [json.loads(a or b) for a, b in HERMES.findall(text)]
        return [{"name": c["name"], "arguments": c["arguments"]} for c in calls], None
    except (json.JSONDecodeError, KeyError, TypeError) as e:
        return [], f"{type(e).__name__}: {e}"


# --8<-- [start:bisect]
def bisect_tool_call(request: dict, prompt: str, raw_output: str, response: dict) -> tuple[int, str]:
    """First broken layer (1-4) and why; (0, ...) when every layer did its part."""
    tools = [t["function"]["name"] for t in request.get("tools") or []]
    if not tools or request.get("tool_choice", "auto") == "none":
        return 1, f"request: tools={tools}, tool_choice={request.get('tool_choice')!r}: no call was allowed"
    missing = [name for name in tools if name not in prompt]
    if missing:
        return 2, f"template: tools {missing} are not in the rendered prompt; the model never saw them"
    calls, error = parse_hermes(raw_output)
    if error:
        return 3, f"model: a tagged call that is not valid JSON ({error}); vLLM logs the parse failure"
    if not calls:
        return 3, "model: no call in the raw output; it answered in prose"
    unknown = [c["name"] for c in calls if c["name"] not in tools]
    if unknown:
        return 3, f"model: called {unknown}, which the request did not offer"
    message = (response.get("choices") or [{}])[0].get("message", {})
    if not message.get("tool_calls"):
        return 4, "parser: the raw output holds a call but the response has no tool_calls " \
                  "(is --tool-call-parser the parser for this model's format?)"
    return 0, f"all four layers worked: {[c['name'] for c in calls]}"
# --8<-- [end:bisect]
