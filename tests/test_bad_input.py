"""Bad input fails the build with a clear message that names the file and what is wrong.

Each case is a small fixture site (tests/conftest.py: make_fixture_site) holding one good page and one
page with a single defect; the build must exit non-zero, print the expected diagnosis, and leave no
page with error text in it.
"""

from __future__ import annotations

import datetime

import pytest
import yaml

from sitekit import build, make_fixture_site

SEC = "deployment/inference-fundamentals"
GOOD = f"{SEC}/good.md"
BAD = f"{SEC}/bad.md"

BODY = """Probe sentence.

/// answer | Reference answer

The answer.

///

## Follow-ups

/// followup | First follow-up?
    attrs: {id: fu-first}

First answer.

///

/// followup | Second follow-up?
    attrs: {id: fu-second}

Second answer.

///

## Sources

- [A primary source](https://example.org/spec), section 1.
- [Another primary source](https://example.org/paper), table 2.
"""

KEY_POINTS = ["The first checkable point.", "The second checkable point.", "The third checkable point."]


def page(qid: int, body: str = BODY, drop: tuple[str, ...] = (), **fields) -> str:
    meta = {"id": qid, "title": f"Question {qid}?", "description": "A test page.", "module": 1,
            "difficulty": "foundational", "tags": ["fundamentals", "latency"], "related": [],
            "key_points": KEY_POINTS, "verified": datetime.date(2026, 11, 30)}
    meta.update(fields)
    for name in drop:
        meta.pop(name)
    return "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n\n" + body


CASES = {
    "missing field": (page(2, drop=("difficulty",)), ["docs/" + BAD, "difficulty", "required field is missing"]),
    "missing section field": (page(2, drop=("module",)), ["docs/" + BAD, "module", "required field is missing"]),
    "unknown tag": (page(2, tags=["fundamentals", "gpu-magic"]), ["docs/" + BAD, "tags", "unknown tag 'gpu-magic'"]),
    "duplicate id": (page(1), ["docs/" + BAD, "id", "duplicate id 1", "docs/" + GOOD]),
    "dangling related id": (page(2, related=[1, 999]), ["docs/" + BAD, "related", "id 999 does not exist"]),
    "description too long": (page(2, description="x" * 161), ["docs/" + BAD, "description", "161 characters"]),
    "id not an integer": (page("two"), ["docs/" + BAD, "id", "must be a positive integer"]),
    "unknown difficulty": (page(2, difficulty="easy"), ["docs/" + BAD, "difficulty", "unknown difficulty 'easy'"]),
    "module does not match folder": (page(2, module=3), ["docs/" + BAD, "module", "does not match"]),
    "failing site macro": (page(2, body=BODY + "\nSee {{ question_link(999) }}.\n"),
                           ["docs/" + BAD, "question_link", "999"]),
    "unknown model in a sizing macro": (
        page(2, body=BODY + '\n{{ kv_cache("llama-9b", batch=1, context=4096) }}\n'),
        ["docs/" + BAD, "kv_cache", "unknown model 'llama-9b'", "valid models:", "llama-3.1-8b"]),
    "unknown GPU in a sizing macro": (
        page(2, body=BODY + '\n{{ memory_budget("llama-3.1-8b", "h100-sxxm") }}\n'),
        ["docs/" + BAD, "memory_budget", "unknown GPU 'h100-sxxm'", "valid GPUs:", "h100-sxm"]),
    "format the model cannot use for KV": (
        page(2, body=BODY + '\n{{ kv_cache("llama-3.1-8b", kv_dtype="nf4") }}\n'),
        ["docs/" + BAD, "cannot be used as a KV-cache dtype", "valid KV dtypes:"]),
    "negative size in a sizing macro": (
        page(2, body=BODY + '\n{{ kv_cache("llama-3.1-8b", batch=-2) }}\n'),
        ["docs/" + BAD, "batch must be a whole number >= 1, got -2"]),
    "one follow-up only": (page(2, body=BODY.split("/// followup | Second")[0] + "## Sources"
                                + BODY.split("## Sources")[1]),
                           ["docs/" + BAD, "1 follow-ups", "at least 2"]),
    "follow-up without id": (page(2, body=BODY.replace("    attrs: {id: fu-second}\n", "")),
                             ["docs/" + BAD, "'Second follow-up?' has no id"]),
    "empty follow-up answer": (page(2, body=BODY.replace("Second answer.", "")),
                               ["docs/" + BAD, "'Second follow-up?' has an empty answer"]),
    "an H1 of its own": (page(2, body="# My own heading\n\n" + BODY), ["docs/" + BAD, "title: do not write an H1"]),
    "missing verified date": (page(2, drop=("verified",)), ["docs/" + BAD, "verified", "required field is missing"]),
    "verified not a date": (page(2, verified="last week"),
                            ["docs/" + BAD, "verified", "must be a date written YYYY-MM-DD, got 'last week'"]),
    "verified in the future": (page(2, verified=datetime.date(2999, 1, 1)),
                               ["docs/" + BAD, "verified", "2999-01-01 is not between 2025-01-01 and today"]),
    "missing key points": (page(2, drop=("key_points",)), ["docs/" + BAD, "key_points", "required field is missing"]),
    "too few key points": (page(2, key_points=KEY_POINTS[:2]),
                           ["docs/" + BAD, "key_points", "2 key points; a question carries 3 to 6"]),
    "key point too long": (page(2, key_points=KEY_POINTS[:2] + ["word " * 30]),
                           ["docs/" + BAD, "key_points", "point 3 has 30 words; at most 25"]),
    "key points not a list": (page(2, key_points="Just one sentence."),
                              ["docs/" + BAD, "key_points", "must be a list of strings"]),
    "no Sources section": (page(2, body=BODY.split("## Sources")[0]),
                           ["docs/" + BAD, "Sources", "no '## Sources' section"]),
    "one source only": (page(2, body=BODY.replace("- [Another primary source](https://example.org/paper), table 2.\n",
                                                  "")),
                        ["docs/" + BAD, "Sources", "1 linked sources; at least 2"]),
    "a source without a link": (page(2, body=BODY + "- A book I remember\n"),
                                ["docs/" + BAD, "Sources", "a source without an http(s) link: 'A book I remember'"]),
    "removed vLLM flag in a code span": (
        page(2, body=BODY.replace("The answer.", "The answer. Start vLLM with `--swap-space 16` for preemption.")),
        ["docs/" + BAD + ":", "--swap-space", "vLLM 0.33.0 has no flag --swap-space",
         "or name the older release the sentence holds for"]),
    "misspelt vLLM flag in a command": (
        page(2, body=BODY.replace("The answer.",
                                  "The answer.\n\n```bash\nvllm serve m --max-num-batch-tokens 8192\n```\n")),
        ["docs/" + BAD + ":", "--max-num-batch-tokens", "vLLM 0.33.0 has no flag --max-num-batch-tokens",
         "did you mean --max-num-batched-tokens"]),
    "removed vLLM environment variable": (
        page(2, body=BODY.replace("The answer.", "The answer. Set `VLLM_ATTENTION_BACKEND=FLASHINFER`.")),
        ["docs/" + BAD + ":", "vLLM 0.33.0 has no environment variable VLLM_ATTENTION_BACKEND"]),
    "misspelt flag in a facts macro": (
        page(2, body=BODY + '\nThe fraction: {{ flag("vllm", "--gpu-memory-utilisation") }}.\n'),
        ["docs/" + BAD, "flag(", "vLLM 0.33.0 has no flag '--gpu-memory-utilisation'",
         "did you mean --gpu-memory-utilization"]),
    "name said to be gone that the release has": (
        page(2, body=BODY + '\nNo longer read: {{ gone("vllm", "VLLM_HOST_IP") }}.\n'),
        ["docs/" + BAD, "VLLM_HOST_IP is still in vLLM 0.33.0"]),
    "two reference answers": (page(2, body=BODY + "\n/// answer | Reference answer\n\nAgain.\n\n///\n"),
                              ["docs/" + BAD, "2 reference answers"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_fails_with_clear_error(case, tmp_path):
    bad_text, expected = CASES[case]
    site = make_fixture_site(tmp_path / "src", {GOOD: page(1), BAD: bad_text})
    out = tmp_path / "out"
    proc = build(site, out)
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0, f"build passed despite: {case}\n{log}"
    for fragment in expected:
        assert fragment in log, f"{case}: expected {fragment!r} in the build output:\n{log}"
    # Never a half-built page with the error text in it.
    for html in out.rglob("*.html") if out.exists() else []:
        text = html.read_text(encoding="utf-8")
        assert "Traceback" not in text and "MacroFailure" not in text and "Macro Syntax Error" not in text


def test_fixture_site_with_good_pages_builds(tmp_path):
    """The control: the same fixture site without the defect builds, so each failure above is the defect's."""
    site = make_fixture_site(tmp_path / "src", {GOOD: page(1, related=[2]), BAD: page(2, related=[1])})
    proc = build(site, tmp_path / "out")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    html = (tmp_path / "out" / SEC / "good" / "index.html").read_text(encoding="utf-8")
    # Contract v2: the key points open the reference answer as "In short"; Sources come last.
    answer = html[html.index('<details class="answer"'):]
    assert answer.index("In short") < answer.index("The answer.")
    assert all(point in answer[:answer.index("The answer.")] for point in KEY_POINTS)
    assert html.index('id="related-questions"') < html.index('id="sources"')
