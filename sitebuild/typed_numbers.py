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
    (r"\bT4 16\s?GB\b", "GPU product name (NVIDIA T4 16GB)"),
]

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


def _blank_fences(text: str) -> str:
    """Blank out fenced code blocks (``` or ~~~, three or more, closed by the same character)."""
    out, fence = [], None
    for line in text.splitlines(keepends=True):
        m = _FENCE.match(line)
        if fence is None and m:
            fence = m.group(2)[0] * 3
            out.append("\n" if line.endswith("\n") else "")
        elif fence is not None:
            if line.strip().startswith(fence):
                fence = None
            out.append("\n" if line.endswith("\n") else "")
        else:
            out.append(line)
    return "".join(out)


_SCAN = re.compile("|".join(f"(?:{rx.pattern})" for rx in PATTERNS))
_ALLOWED = re.compile("|".join(f"(?:{rx})" for rx, _ in ALLOWLIST))


def find_typed_numbers(markdown: str) -> list[TypedNumber]:
    """Typed sizing figures in ``markdown`` (a page body without front matter), in order."""
    text = _MACRO.sub(_blank, markdown)
    text = _COMMENT.sub(_blank, text)
    text = _blank_fences(text)
    text = _ALLOWED.sub(lambda m: " " * len(m.group(0)), text)
    return [TypedNumber(text.count("\n", 0, hit.start()) + 1, hit.group(0).strip())
            for hit in _SCAN.finditer(text)]
