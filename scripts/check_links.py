"""Source-link watch: find every external http(s) link on the site's sources and report the dead and
the moved ones, each with the file and line it is written on.

Where links are looked for (default: docs/ and macros/catalog/):
- Markdown (*.md): links, autolinks, reference definitions and bare URLs, outside fenced code blocks,
  inline code and HTML comments (they are not links a reader can follow).
- YAML (*.yml, *.yaml): any URL on a line that is not a comment; the catalog's `source:` fields are
  rendered onto the pages by the macros.

How a link is checked: HEAD first, then GET when HEAD is answered with an error (some hosts reject
HEAD); redirects followed by hand, at most MAX_REDIRECTS; a per-request timeout; transient failures
(timeouts, refused or reset connections, 5xx) retried a limited number of times; a bounded number of
requests in flight overall and per host. Uses the standard library only.

Verdicts:
- dead (error, exit status 1): 4xx or 5xx after retries, timeout, DNS failure, refused connection,
  redirect loop.
- moved (warning): a permanent redirect (301 or 308) somewhere on the way to a page that answers;
  the report gives the address to write instead.
- rate-limited (warning): 429 after retries; the host did not say whether the page exists.
Temporary redirects (302, 303, 307) to a page that answers count as alive.

Run: scripts/check-links [--format text|github] [--timeout S] [PATH ...]
"""

from __future__ import annotations

import argparse
import http.client
import os
import re
import socket
import ssl
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_PATHS = ("docs", "macros/catalog")  # relative to ROOT
MAX_REDIRECTS = 10
USER_AGENT = "Mozilla/5.0 (compatible; model-serving-interview-bank link watch)"
# Names reserved for documentation and testing (RFC 2606, RFC 6761): placeholders, never real links.
RESERVED_HOST = re.compile(
    r"(^|\.)(example\.(com|org|net)|example|test|invalid|localhost)$", re.IGNORECASE
)

URL_RE = re.compile(r"https?://[^\s<>\"'`\]|{}\\]+", re.IGNORECASE)
FENCE_RE = re.compile(r"^\s*(`{3,}|~{3,})")
CODE_SPAN_RE = re.compile(r"(`+)(?:(?!\1).)+?\1")
TRAILING = ".,;:!?*_'\""


# --------------------------------------------------------------------------------------------------
# Finding links


@dataclass(frozen=True, order=True)
class Occurrence:
    path: str  # as given on the command line, e.g. docs/deployment/x.md
    line: int
    url: str


def _trim(url: str) -> str:
    """Drop punctuation that ends the sentence rather than the URL, and a closing parenthesis that
    closes the Markdown link around it (Wikipedia-style parentheses inside a URL are kept)."""
    while url:
        if url[-1] in TRAILING:
            url = url[:-1]
        elif url[-1] == ")" and url.count(")") > url.count("("):
            url = url[:-1]
        else:
            break
    return url


def _is_checked(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    return bool(host) and not RESERVED_HOST.search(host)


def links_in_markdown(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    fence: str | None = None
    in_comment = False
    for number, line in enumerate(text.splitlines(), start=1):
        m = FENCE_RE.match(line)
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            continue
        if m:
            fence = m.group(1)
            continue
        visible = ""
        rest = line
        while rest:
            if in_comment:
                end = rest.find("-->")
                if end < 0:
                    rest = ""
                else:
                    rest, in_comment = rest[end + 3:], False
            else:
                start = rest.find("<!--")
                if start < 0:
                    visible, rest = visible + rest, ""
                else:
                    visible, rest, in_comment = visible + rest[:start], rest[start + 4:], True
        visible = CODE_SPAN_RE.sub(" ", visible)
        for m in URL_RE.finditer(visible):
            url = _trim(m.group(0))
            if _is_checked(url):
                found.append((number, url))
    return found


def links_in_yaml(text: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith("#"):
            continue
        for m in URL_RE.finditer(line.split(" #", 1)[0]):
            url = _trim(m.group(0))
            if _is_checked(url):
                found.append((number, url))
    return found


def collect(paths: list[str]) -> list[Occurrence]:
    """Every external link under the given files or folders, in path and line order."""
    occurrences: list[Occurrence] = []
    for given in paths:
        root = Path(given)
        if not root.exists():
            raise FileNotFoundError(f"{given}: no such file or folder")
        files = [root] if root.is_file() else sorted(p for p in root.rglob("*") if p.is_file())
        for f in files:
            if f.suffix == ".md":
                finder = links_in_markdown
            elif f.suffix in (".yml", ".yaml"):
                finder = links_in_yaml
            else:
                continue
            for line, url in finder(f.read_text(encoding="utf-8")):
                occurrences.append(Occurrence(f.as_posix(), line, url))
    return sorted(occurrences)


# --------------------------------------------------------------------------------------------------
# Checking one URL


@dataclass(frozen=True)
class Result:
    verdict: str  # "ok", "moved", "dead", "rate-limited"
    detail: str = ""  # status and reason, or the error
    location: str = ""  # for "moved": where the link should point now


class _Transient(Exception):
    """A failure worth one more try: timeout, refused or reset connection, 5xx, 429."""


def _request(method: str, url: str, timeout: float) -> tuple[int, str, str]:
    """One request, no redirects followed. Returns (status, reason, Location header)."""
    parts = urlsplit(url)
    conn_class = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    kwargs = {"timeout": timeout}
    if parts.scheme == "https":
        kwargs["context"] = ssl.create_default_context()
    conn = conn_class(parts.hostname, parts.port, **kwargs)
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    try:
        conn.request(method, target, headers={"User-Agent": USER_AGENT, "Accept": "*/*"})
        resp = conn.getresponse()
        # Read nothing of a body: the status is all that is asked. Closing drops the connection.
        return resp.status, resp.reason, resp.getheader("Location", "")
    finally:
        conn.close()


def _describe_error(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, socket.gaierror):
        return f"DNS lookup failed ({exc.strerror or exc})"
    if isinstance(exc, (TimeoutError, socket.timeout)):
        return f"timed out after {timeout:g} s"
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ssl.SSLError):
        return f"TLS error ({exc.reason or exc})"
    return f"{type(exc).__name__}: {exc}"


def _fetch_status(url: str, timeout: float) -> tuple[int, str, str]:
    """HEAD, then GET when HEAD gets an error status. Raises _Transient on retryable failures."""
    try:
        status, reason, location = _request("HEAD", url, timeout)
        if status >= 400:
            status, reason, location = _request("GET", url, timeout)
    except socket.gaierror:
        raise  # a name that does not resolve will not resolve on the next try either
    except (OSError, http.client.HTTPException) as exc:
        raise _Transient(_describe_error(exc, timeout)) from exc
    if status >= 500 or status == 429:
        raise _Transient(f"{status} {reason}".strip())
    return status, reason, location


def check_url(url: str, timeout: float = 10.0, retries: int = 1, backoff: float = 1.0) -> Result:
    """Follow url (fragment dropped) to its end and judge it."""
    current = url.split("#", 1)[0]
    seen = {current}
    permanent_hop = False
    first_status = 0
    for _hop in range(MAX_REDIRECTS + 1):
        for attempt in range(retries + 1):
            try:
                status, reason, location = _fetch_status(current, timeout)
                break
            except socket.gaierror as exc:
                return Result("dead", _describe_error(exc, timeout))
            except _Transient as exc:
                if attempt == retries:
                    detail = str(exc)
                    if detail.startswith("429"):
                        return Result("rate-limited", detail)
                    return Result("dead", detail)
                time.sleep(backoff * (attempt + 1))
        if 300 <= status < 400 and status != 304:
            if not location:
                return Result("dead", f"{status} {reason} without a Location header")
            if status in (301, 308):
                permanent_hop = True
                first_status = first_status or status
            current = urljoin(current, location)
            if current in seen:
                return Result("dead", f"redirect loop at {current}")
            seen.add(current)
            continue
        if status >= 400:
            return Result("dead", f"{status} {reason}".strip())
        if permanent_hop:
            fragment = url.split("#", 1)[1] if "#" in url else ""
            new = current + ("#" + fragment if fragment and "#" not in current else "")
            return Result("moved", str(first_status), new)
        return Result("ok", f"{status} {reason}".strip())
    return Result("dead", f"more than {MAX_REDIRECTS} redirects")


# --------------------------------------------------------------------------------------------------
# Checking many, politely


def check_all(
    urls: list[str],
    timeout: float = 10.0,
    retries: int = 1,
    workers: int = 8,
    per_host: int = 2,
    backoff: float = 1.0,
) -> dict[str, Result]:
    """Check each distinct URL once: at most `workers` requests in flight, `per_host` per host."""
    host_gates: dict[str, threading.Semaphore] = {}
    lock = threading.Lock()

    def gate(url: str) -> threading.Semaphore:
        host = (urlsplit(url).hostname or "").lower()
        with lock:
            return host_gates.setdefault(host, threading.Semaphore(per_host))

    def one(url: str) -> tuple[str, Result]:
        with gate(url):
            return url, check_url(url, timeout=timeout, retries=retries, backoff=backoff)

    distinct = sorted(set(urls))
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return dict(pool.map(one, distinct))


def report_lines(occurrences: list[Occurrence], results: dict[str, Result], fmt: str = "text") -> list[str]:
    """One line per occurrence of a link that is not ok, in file and line order."""
    lines = []
    for occ in occurrences:
        res = results[occ.url]
        if res.verdict == "ok":
            continue
        if res.verdict == "moved":
            message = f"moved ({res.detail}): {occ.url} -> {res.location}"
        else:
            message = f"{res.verdict} ({res.detail}): {occ.url}"
        if fmt == "github":
            level = "error" if res.verdict == "dead" else "warning"
            lines.append(f"::{level} file={occ.path},line={occ.line}::{message}")
        else:
            lines.append(f"{occ.path}:{occ.line}: {message}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="check-links",
        description="Report dead and moved external links in the site's sources, with file and line.",
    )
    parser.add_argument("paths", nargs="*",
                        help=f"files or folders to scan (default: {' '.join(DEFAULT_PATHS)} of the repository)")
    parser.add_argument("--timeout", type=float, default=15.0, help="seconds per request (default 15)")
    parser.add_argument("--retries", type=int, default=2, help="extra tries on transient failures (default 2)")
    parser.add_argument("--workers", type=int, default=8, help="requests in flight overall (default 8)")
    parser.add_argument("--per-host", type=int, default=2, help="requests in flight per host (default 2)")
    parser.add_argument("--backoff", type=float, default=2.0, help="seconds before a retry, times the try number")
    parser.add_argument("--format", choices=("text", "github"), default="text",
                        help="github: workflow annotations on the file and line")
    args = parser.parse_args(argv)
    if args.timeout <= 0 or args.retries < 0 or args.workers < 1 or args.per_host < 1:
        parser.error("--timeout must be positive, --retries at least 0, --workers and --per-host at least 1")

    if not args.paths:
        os.chdir(ROOT)  # report paths as docs/..., wherever the command was started
        args.paths = list(DEFAULT_PATHS)
    try:
        occurrences = collect(args.paths)
    except (FileNotFoundError, UnicodeDecodeError) as exc:
        print(f"check-links: {exc}", file=sys.stderr)
        return 2
    results = check_all([o.url for o in occurrences], timeout=args.timeout, retries=args.retries,
                        workers=args.workers, per_host=args.per_host, backoff=args.backoff)
    for line in report_lines(occurrences, results, args.format):
        print(line)
    counts = {v: sum(1 for r in results.values() if r.verdict == v) for v in ("ok", "moved", "rate-limited", "dead")}
    print(
        f"check-links: {len(results)} distinct links in {len(occurrences)} places: "
        f"{counts['ok']} ok, {counts['moved']} moved, {counts['rate-limited']} rate-limited, {counts['dead']} dead",
        file=sys.stderr,
    )
    if results and all(r.detail.startswith("DNS lookup failed") for r in results.values()):
        print("check-links: no host name resolved at all: is this machine offline?", file=sys.stderr)
    return 1 if counts["dead"] else 0


if __name__ == "__main__":
    sys.exit(main())
