"""The typed-number check, alone and on the real pages."""

from __future__ import annotations

import pytest

from sitebuild.typed_numbers import find_typed_numbers


@pytest.mark.parametrize("text, expected", [
    ("The weights take 140 GB in BF16.", ["140 GB"]),
    ("About 3.35TB/s of bandwidth.", ["3.35TB/s"]),
    ("It reaches 1,200 tokens/s per GPU.", ["1,200 tokens/s"]),
    ("Peak is 989 TFLOPS dense.", ["989 TFLOPS"]),
    ("An H100 costs $2.50 an hour.", ["$2.50"]),
    ("A 24GiB card.", ["24GiB"]),
    ("It streams at 25 Gbps.", ["25 Gbps"]),
    ("line one\n\nThe cache is 40 tok/s slower.", ["40 tok/s"]),
])
def test_flags_typed_sizing_figures(text, expected):
    assert [t.text for t in find_typed_numbers(text)] == expected


@pytest.mark.parametrize("text", [
    "The KV cache is {{ kv_cache('llama-3.1-70b', batch=1, context=8192) }} per sequence.",
    "```yaml\nresources:\n  limits:\n    memory: 16Gi\n```",
    "<!-- 80 GB would go here -->",
    "Serve on an A100 80GB or an H100 80GB.",
    "Block size is 16 tokens; TP must divide 64 heads; HTTP 429.",
    "{% raw %}`{{ 80 GB }}`{% endraw %}",
])
def test_leaves_macros_code_comments_and_plain_facts_alone(text):
    assert find_typed_numbers(text) == []


def test_reports_the_line_number():
    hits = find_typed_numbers("a\nb\nc 7 GB\n")
    assert [(h.line, h.text) for h in hits] == [(3, "7 GB")]


def test_a_page_with_a_typed_number_fails_the_build(tmp_path):
    from sitekit import build, make_fixture_site
    from test_bad_input import BODY, page
    body = BODY.replace("The answer.", "The answer needs 140 GB.")
    site = make_fixture_site(tmp_path / "src", {"deployment/inference-fundamentals/t.md": page(1, body=body)})
    proc = build(site, tmp_path / "out")
    log = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "docs/deployment/inference-fundamentals/t.md:" in log and "typed number '140 GB'" in log
