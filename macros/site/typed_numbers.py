"""The typed-number check: a question page may not type a sizing figure by hand.

Sizing, speed and cost figures come from macros (``{{ ... }}``), so they are computed by one tested
formula from one catalog entry. This check scans a page's Markdown source, outside macro calls, fenced
code and HTML comments, for a number followed by a size, bandwidth, throughput or compute unit, or a
currency amount, and reports each one with its line number.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NUM = r"(?<![\w.])\d[\d,]*(?:\.\d+)?"
_UNIT = (
    r"(?:[KMGTP]i?B(?:/s|ps)?|[KMGTP]b/s|[KMGTP]bps"                 # bytes, byte/s, bit/s
    r"|tok(?:en)?s?\s*/\s*s(?:ec)?|tokens?\s+per\s+second|tok/s"        # tokens per second
    r"|[TPGE]FLOPS|[TPG]OPS|[TPG]FLOP/s)"                               # compute
)
PATTERNS = [
    re.compile(_NUM + r"\s*" + _UNIT + r"(?![A-Za-z])"),
    re.compile(r"(?:US)?\$\s?\d[\d,]*(?:\.\d+)?"),                       # $2.50, US$ 3
    re.compile(_NUM + r"\s*(?:USD|dollars|cents)\b"),
    re.compile(r"[€£]\s?\d"),
]

# The rare typed figures that are names or facts rather than sizing results. Each entry is a regex
# that is removed before the scan, with the reason it may be typed.
ALLOWLIST: list[tuple[str, str]] = [
    # Product names that contain a memory size: the size is part of the name, not a computed figure.
    (r"\bA100[ -]?(?:40|80)\s?GB\b", "GPU product name (A100 40GB / 80GB)"),
    (r"\bH100[ -]?(?:80|94)\s?GB\b", "GPU product name"),
    (r"\bRTX\s?\d{4}\s?(?:Ti\s)?\d{1,2}\s?GB\b", "consumer GPU product name"),
    (r"\bJetson [A-Za-z ]+\d+\s?GB\b", "Jetson module product name"),
]
_ALLOW = [re.compile(rx) for rx, _ in ALLOWLIST]

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_MACRO = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)


@dataclass(frozen=True)
class TypedNumber:
    line: int
    text: str


def _blank(match: re.Match) -> str:
    # Keep newlines so line numbers stay right.
    return re.sub(r"[^\n]", " ", match.group(0))


def find_typed_numbers(markdown: str) -> list[TypedNumber]:
    """Typed sizing figures in ``markdown`` (a page body without front matter), in order."""
    text = _MACRO.sub(_blank, markdown)
    text = _COMMENT.sub(_blank, text)
    out: list[TypedNumber] = []
    fence: str | None = None
    for lineno, line in enumerate(text.splitlines(), start=1):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(2)[0] * 3
            continue
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            continue
        for rx in _ALLOW:
            line = rx.sub(lambda mm: " " * len(mm.group(0)), line)
        for rx in PATTERNS:
            for hit in rx.finditer(line):
                out.append(TypedNumber(lineno, hit.group(0).strip()))
    return sorted(out, key=lambda t: t.line)
