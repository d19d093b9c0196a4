"""The facts check: a page may not name a vLLM or SGLang flag, environment variable or metric that
the reference release does not have, unless the sentence names the older release it holds for.

It reads a page's Markdown (outside macro calls and HTML comments) and looks at what a reader would
copy: inline code spans and fenced code blocks. Environment variables and metric names carry their
engine in their prefix (``VLLM_``, ``SGLANG_``/``SGL_``, ``vllm:``, ``sglang:``) and are always
checked. A ``--flag`` is checked against the engines its sentence names (``vLLM``, ``vllm serve``,
``SGLang``, ``sglang.launch_server``; a fenced block against the command it runs); a flag in a sentence
that names neither engine, or that also names another tool whose flags these snapshots do not hold
(``trtllm-serve``, ``llama-server``, ``kubectl``...), is not checked. A sentence that names a release
of the engine other than the reference one ("removed in 0.2x", "0.11 had ...") is history, and its
names are not checked either.

Facts quoted through the facts macros (``flag(...)``, ``env_var(...)``, ``metric(...)``, ``gone(...)``)
are checked by the macros themselves when the page renders.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

PENDING_FILE = Path(__file__).with_name("facts_pending.txt")
SNAPSHOT_DIR = Path(__file__).resolve().parent.parent / "macros" / "catalog" / "facts"

_MACRO = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.S)
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_CODE_SPAN = re.compile(r"(`+)(.+?)(?<!`)\1(?!`)", re.S)
_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")
_ENV = re.compile(r"(?<![\w$])(VLLM_[A-Z0-9_]*[A-Z0-9]|SGLANG_[A-Z0-9_]*[A-Z0-9]|SGL_[A-Z0-9_]*[A-Z0-9])(?![\w])")
_METRIC = re.compile(r"(?<![\w:])(vllm|sglang):([a-z_][a-z0-9_]*)")
_ENGINE_WORDS = {
    "vllm": re.compile(r"\bvLLM\b|\bvllm:[a-z_]|\bVLLM_[A-Z]|\bvllm (?:serve|bench|run-batch)\b|\bvllm/vllm-openai\b"
                       r"|\bvllm\.entrypoints\b|\bfrom vllm\b|\bimport vllm\b|\bVllmConfig\b|\bEngineArgs\b"),
    "sglang": re.compile(r"\bSGLang\b|\bsglang:[a-z_]|\bSGLANG_[A-Z]|\bsglang\.launch_server\b|\bsglang serve\b"
                         r"|\blmsysorg/sglang\b|\bsglang\.srt\b|\bpython3? -m sglang\b"),
}
# Tools whose flags are not in the snapshots: a flag in a sentence that names one is not checked.
_OTHER_TOOLS = re.compile(
    r"TensorRT-LLM|trtllm-(?:serve|build|bench)|llama\.cpp|llama-server|llama-cli|\bOllama\b|kubectl|\bhelm\b|"
    r"\bdocker\b|\bpodman\b|\bnvidia-smi\b|\btorchrun\b|\bDynamo\b|\bdynamo\b|LMCache|lmcache|KServe|"
    r"\bTGI\b|text-generation-launcher|\bTriton\b|tritonserver|genai-perf|guidellm|\blm_eval\b|lm-eval|"
    r"promtool|\bcurl\b|\bpip\b|\buv\b|pytest|\bmkdocs\b|huggingface-cli|\bhf download\b|\bnsys\b|\bncu\b|"
    r"\bray\b|\bRay\b|\bLWS\b|kube-|\bkubelet\b|\bkube\w*|\bistio\w*|\benvoy\b|\bgit\b|\bssh\b|\baws\b|"
    r"\bgcloud\b|\bjq\b|\bperf\b|\bvegeta\b|\bwrk\b|\bk6\b|\blocust\b|\bonnxruntime\b|\btrtexec\b|"
    r"\bMooncake\b|\bNIXL\b|\bAIBrix\b|\bllm-d\b|\bSkyPilot\b|\bModal\b|\bBentoML\b|\bRay Serve\b|\bexllama|"
    r"sglang[-_]router|sgl[-_]router|\brouter\b|model gateway|ModelOpt|modelopt|hf_ptq|llm-compressor|"
    r"llmcompressor|AutoAWQ|GPTQModel|auto-round|optimum|Prometheus|prometheus|Alertmanager|Grafana|"
    r"OpenTelemetry|otel|Jaeger|Tempo",
    re.I)
# A release of an engine named in prose: "vLLM 0.11", "until 0.12", "removed in v0.10.2", "0.11 had".
_V = r"v?(0\.\d+(?:\.\d+)*(?:\.post\d+)?)(?![\w.]*\d)"
_OLDER = re.compile(
    r"(?:\b(?:vLLM|SGLang)\s+" + _V + r")"
    r"|(?:\b(?:until|before|since|in|from|through|up to|after|prior to|as of|pre|older than|newer than)\s+"
    r"(?:vLLM\s+|SGLang\s+)?" + _V + r")"
    r"|(?:(?<![\w.])" + _V + r"\s+(?:had|has|was|were|used|added|removed|made|changed|introduced|dropped|"
    r"defaulted|still|and earlier|and older|or earlier|or older)\b)",
    re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`*\[])")


@dataclass(frozen=True)
class Finding:
    line: int
    name: str
    message: str


def _blank(m: re.Match) -> str:
    return re.sub(r"[^\n]", " ", m.group(0))


@dataclass
class _Unit:
    text: str            # the sentence (prose) or the whole block (code)
    context: str         # where engine names are looked for: the sentence, else its paragraph
    line: int            # first line of the unit (1-based, in the text given)
    code: bool           # a fenced code block


def _units(markdown: str) -> list[_Unit]:
    """Sentences of prose (with their paragraph), table rows, list items, and fenced code blocks."""
    text = _COMMENT.sub(_blank, _MACRO.sub(_blank, markdown))
    units: list[_Unit] = []
    lines = text.split("\n")
    i = 0
    para: list[tuple[int, str]] = []

    def flush():
        if not para:
            return
        start = para[0][0]
        block = "\n".join(t for _, t in para)
        for piece in _split_items(block, start):
            units.extend(piece)
        para.clear()

    while i < len(lines):
        line = lines[i]
        m = _FENCE.match(line)
        if m:
            flush()
            fence, info, start = m.group(2), m.group(3), i
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence[0] * len(fence)):
                body.append(lines[i])
                i += 1
            block = "\n".join(body)
            units.append(_Unit(block, info + "\n" + block, start + 2, True))
            i += 1
            continue
        if not line.strip():
            flush()
        else:
            para.append((i + 1, line))
        i += 1
    flush()
    return units


def _split_items(block: str, start: int) -> list[list[_Unit]]:
    """A paragraph-level block split into list items / table rows, each into sentences."""
    out = []
    item_lines: list[tuple[int, str]] = []
    items: list[list[tuple[int, str]]] = []
    for k, raw in enumerate(block.split("\n")):
        stripped = raw.lstrip()
        new_item = stripped.startswith(("- ", "* ", "+ ", "|")) or re.match(r"\d+[.)] ", stripped)
        if new_item and item_lines:
            items.append(item_lines)
            item_lines = []
        item_lines.append((start + k, raw))
    if item_lines:
        items.append(item_lines)
    for item in items:
        text = " ".join(t.strip() for _, t in item)
        line0 = item[0][0]
        if text.startswith("|"):
            out.append([_Unit(text, text, line0, False)])
            continue
        pieces = _sentences(text)
        out.append([_Unit(p, text, line0 + _line_of(item, p), False) for p in pieces])
    return out


def _sentences(text: str) -> list[str]:
    """Split prose into sentences without splitting inside code spans."""
    spans = [(m.start(), m.end()) for m in _CODE_SPAN.finditer(text)]
    out, last = [], 0
    for m in _SENTENCE_END.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        out.append(text[last:m.start()])
        last = m.end()
    out.append(text[last:])
    return [s for s in out if s.strip()]


def _line_of(item: list[tuple[int, str]], piece: str) -> int:
    """Line offset (within the item) where ``piece`` starts, by its first code span or words."""
    probe = piece.strip()[:40]
    for k, (_, raw) in enumerate(item):
        if probe[:20] and probe[:20] in raw:
            return k
    return 0


def _code_parts(unit: _Unit) -> list[str]:
    if unit.code:
        return [unit.text]
    return [m.group(2) for m in _CODE_SPAN.finditer(unit.text)]


def _engines_in(text: str) -> set[str]:
    return {e for e, rx in _ENGINE_WORDS.items() if rx.search(text)}


def _names_older(unit_text: str, engine: str, ref: str) -> bool:
    """Whether the sentence names a release other than the reference one (a version of either engine:
    prose rarely names both in one sentence, and when it does the history covers both)."""
    for m in _OLDER.finditer(_strip_code(unit_text)):
        version = next(g for g in m.groups() if g)
        if not (ref == version or ref.startswith(version + ".")):
            return True
    return False


_RELEASE_BY_NAME: dict[str, str] = {}
_LINK = re.compile(r"\[[^\]]*\]\([^)]*\)")


def _sources_line(markdown: str) -> int:
    """The (1-based) line of the '## Sources' heading, or past the end."""
    for n, line in enumerate(markdown.split("\n"), 1):
        if line.strip().startswith("## Sources"):
            return n
    return markdown.count("\n") + 2


@functools.lru_cache(maxsize=1)
def _typed_reference_versions() -> re.Pattern:
    """'vLLM 0.33.0', 'vLLM 0.33', 'SGLang 0.5.23', 'Kubernetes 1.37' ...: a reference release typed in
    prose (its major.minor too), which pages write through the release() macro instead."""
    from macros.facts import releases
    alts = []
    for key, rel in releases().items():
        _RELEASE_BY_NAME[rel.name.lower()] = key
        parts = rel.version.split(".")
        versions = {rel.version} | ({".".join(parts[:2])} if len(parts) > 2 else set())
        vs = "|".join(re.escape(v) for v in sorted(versions, key=len, reverse=True))
        alts.append(rf"({re.escape(rel.name)})\s+v?(?:{vs})(?![\w.]*\d)")
    return re.compile("|".join(f"(?:{a})" for a in alts))


def _strip_code(text: str) -> str:
    """Prose without code spans (a version inside `--flag=0.5` is not a release)."""
    return _CODE_SPAN.sub(" ", text)


def check(markdown: str, fact_table: dict | None = None, history: bool = True) -> list[Finding]:
    """Every flag, environment variable and metric name the page's code names that the reference
    release of its engine lacks, outside sentences that name an older release (``history=False``
    checks those too: the list of names a page still carries from older releases)."""
    from macros.facts import facts  # here, not at import: macros' entry point imports sitebuild
    table = fact_table or {"vllm": facts("vllm"), "sglang": facts("sglang")}
    found: list[Finding] = []
    seen: set[tuple[int, str]] = set()

    def report(line: int, name: str, message: str) -> None:
        if (line, name) not in seen:
            seen.add((line, name))
            found.append(Finding(line, name, message))

    typed = _typed_reference_versions()
    sources_at = _sources_line(markdown)
    for unit in _units(markdown):
        # a link's text names the version its address pins, and Sources cite pinned documents: both stay
        if not unit.code and unit.line < sources_at:
            for m in typed.finditer(_LINK.sub(" ", _strip_code(unit.text))):
                key = _RELEASE_BY_NAME[next(g for g in m.groups() if g).lower()]
                report(unit.line, m.group(0), f"the reference release is typed; write {{{{ release(\"{key}\") }}}} "
                                              f"(or {{{{ version(\"{key}\") }}}}) so a re-pin changes it in one place")
        for code in _code_parts(unit):
            for name in _ENV.findall(code):
                engine = "vllm" if name.startswith("VLLM_") else "sglang"
                f = table[engine]
                if f.has_env(name) or (history and _names_older(unit.text, engine, f.release.version)):
                    continue
                report(unit.line, name, f"{f.release.label} has no environment variable {name}"
                                        f"{_near(name, list(f.data['env']) + list(f.data['env_unregistered']))}")
            for engine, metric in _METRIC.findall(code):
                f = table[engine]
                name = f"{engine}:{metric}"
                wildcard = re.search(re.escape(name) + r"\*", code) is not None
                if (f.metric_name(name) or (wildcard and any(m.startswith(name) for m in f.data["metrics"]))
                        or (history and _names_older(unit.text, engine, f.release.version))):
                    continue
                report(unit.line, name, f"{f.release.label} has no metric {name}{_near(name, f.data['metrics'])}")
            flags = _FLAG.findall(code)
            if not flags:
                continue
            # the engines the sentence names, and those of its paragraph ("lower `--x` (or SGLang's
            # `--y`)" in a paragraph about vLLM names both)
            engines = _engines_in(code if unit.code else unit.text) | _engines_in(unit.context)
            if not engines:
                continue
            other_tool = bool(_OTHER_TOOLS.search(code if unit.code else unit.text))
            for name in flags:
                wildcard = re.search(re.escape(name) + r"-?\*", code) is not None
                known = [e for e in engines if table[e].flag_name(name, abbreviations=True)
                         or (wildcard and table[e].has_flag_prefix(name))]
                if known:
                    continue
                if other_tool or (history and any(_names_older(unit.text, e, table[e].release.version)
                                                  for e in engines)):
                    continue
                labels = " or ".join(table[e].release.label for e in sorted(engines))
                near = "".join(_near(name, table[e].data["flags"]) for e in sorted(engines))
                report(unit.line, name, f"{labels} has no flag {name}{near}")
    return sorted(found, key=lambda f: (f.line, f.name))


def _near(name: str, names) -> str:
    import difflib
    close = difflib.get_close_matches(name, list(names), n=2, cutoff=0.8)
    return f" (did you mean {' or '.join(close)}?)" if close else ""


def pending_paths(path: Path = PENDING_FILE) -> set[str]:
    """Pages (paths under docs/) not yet re-pinned to the reference releases: their findings are
    reported by ``python -m sitebuild.factcheck``, not fatal. The list only shrinks (a test fails
    when a listed page passes), and the file goes once it is empty."""
    if not path.exists():
        return set()
    out = set()
    for n, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if not line.endswith(".md") or line.startswith(("docs/", "/")):
            raise ValueError(f"{path.name}:{n}: expected a page path under docs/ (part/section/page.md), got {line!r}")
        out.add(line)
    return out


@functools.lru_cache(maxsize=1024)
def check_page(markdown: str) -> tuple[Finding, ...]:
    """:func:`check` against the reference snapshots, remembered per page text (a rebuild re-checks
    only the pages that changed)."""
    return tuple(check(markdown))


def main(argv: list[str] | None = None) -> int:
    """``python -m sitebuild.factcheck [--history] [DOCS]``: every finding on every question page,
    pending or not (the re-pinning work list), one line each; ``--history`` also lists names in
    sentences that name an older release. Exit 1 if a page outside the pending list has a finding."""
    import argparse

    from .registry import split_front_matter
    ap = argparse.ArgumentParser(prog="python -m sitebuild.factcheck")
    ap.add_argument("docs", nargs="?", type=Path, default=Path(__file__).resolve().parent.parent / "docs")
    ap.add_argument("--history", action="store_true", help="also check sentences that name an older release")
    args = ap.parse_args(argv)
    pending = pending_paths()
    strict_failures = 0
    for path in sorted(args.docs.rglob("*.md")):
        rel = path.relative_to(args.docs).as_posix()
        text = path.read_text(encoding="utf-8")
        meta, body = split_front_matter(text)
        if "id" not in meta or rel.startswith("q/"):
            continue
        offset = text.count("\n") - body.count("\n")
        for f in check(body, history=not args.history):
            tag = "pending" if rel in pending else "STRICT"
            strict_failures += rel not in pending
            print(f"docs/{rel}:{f.line + offset}: [{tag}] {f.name}: {f.message}")
    return 1 if strict_failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
