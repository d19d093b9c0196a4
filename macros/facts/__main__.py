"""``./scripts/extract-facts``: write, check or compare the engine facts snapshots.

    ./scripts/extract-facts                      write the snapshot of every engine with facts
    ./scripts/extract-facts vllm                 one engine
    ./scripts/extract-facts --check              regenerate and compare with the committed snapshots
    ./scripts/extract-facts --compare vllm==0.34.0   facts that changed, with the pages that use them
    ./scripts/extract-facts --compare newest     every engine against its newest release on PyPI

Wheels are downloaded with pip into ``--wheel-dir`` (default ``build/wheels``) and read statically;
nothing is imported. ``--source DIR`` reads an unpacked tree instead (``DIR/vllm/...``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from . import FACTS_DIR, fact_engines, load_snapshot, release
from .drift import compare, file_issue, newest_version, report, usage
from .extract.astkit import ExtractError
from .snapshot import dumps, extract_release

ROOT = Path(__file__).resolve().parents[2]


def _engines(names: list[str]) -> list[str]:
    known = fact_engines()
    bad = [n for n in names if n not in known]
    if bad:
        raise SystemExit(f"extract-facts: unknown engine(s) {bad}; engines with facts: {', '.join(known)}")
    return names or known


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="extract-facts", description=__doc__.split("\n\n")[0])
    ap.add_argument("engines", nargs="*", help="engine keys from macros/catalog/releases.yaml (default: all)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="regenerate and compare; exit 1 on a difference")
    mode.add_argument("--compare", metavar="ENGINE==VERSION|newest", action="append",
                      help="report the facts that changed in a newer release (repeatable)")
    ap.add_argument("--wheel-dir", type=Path, default=ROOT / "build" / "wheels")
    ap.add_argument("--source", type=Path, help="an unpacked source tree to read instead of the wheel")
    ap.add_argument("--out-dir", type=Path, default=FACTS_DIR, help="where snapshots are written (and read)")
    ap.add_argument("--docs", type=Path, default=ROOT / "docs", help="the pages, for the drift report")
    ap.add_argument("--index", default="https://pypi.org/simple", help="PEP 691 index for 'newest'")
    ap.add_argument("--report", type=Path, help="also write the drift report (Markdown) to this file")
    ap.add_argument("--github-issue", metavar="OWNER/REPO",
                    help="open or update the drift issue (token in $GITHUB_TOKEN)")
    args = ap.parse_args(argv)
    try:
        if args.compare:
            return _compare(args)
        return _write(args)
    except (ExtractError, ValueError, OSError) as exc:
        print(f"extract-facts: {exc}", file=sys.stderr)
        return 2


def _write(args) -> int:
    differ = []
    for key in _engines(args.engines):
        rel = release(key)
        text = dumps(extract_release(rel, wheel_dir=args.wheel_dir, source=args.source))
        path = args.out_dir / rel.snapshot.name
        if args.check:
            same = path.is_file() and path.read_text(encoding="utf-8") == text
            print(f"{rel.label}: {'matches' if same else 'DIFFERS from'} {path.relative_to(args.out_dir.parent)}")
            if not same:
                differ.append(key)
            continue
        args.out_dir.mkdir(parents=True, exist_ok=True)
        for old in args.out_dir.glob(f"{key}-*.json"):
            if old != path:
                old.unlink()
        path.write_text(text, encoding="utf-8")
        data = load_snapshot(path)
        print(f"{rel.label}: wrote {path.name} ({len(data['flags'])} flags, {len(data['env'])} environment "
              f"variables, {len(data['metrics'])} metrics, {len(data['log_lines'])} log lines)")
    return 1 if differ else 0


def _compare(args) -> int:
    targets: list[tuple[str, str]] = []
    for spec in args.compare:
        if spec == "newest":
            targets += [(k, newest_version(release(k).package, args.index)) for k in _engines(args.engines)]
        elif "==" in spec:
            key, version = spec.split("==", 1)
            _engines([key])
            targets.append((key, version))
        else:
            raise ValueError(f"--compare {spec!r}: expected ENGINE==VERSION or newest")
    used = usage(args.docs)
    parts = []
    for key, version in targets:
        rel = release(key)
        if version == rel.version:
            parts.append(f"## {rel.label}\n\n{rel.label} is the newest release; nothing to compare.\n")
            continue
        old = load_snapshot(args.out_dir / rel.snapshot.name)
        new = extract_release(rel, version=version, wheel_dir=args.wheel_dir, source=args.source)
        parts.append(report(rel.label, f"{rel.name} {version}", compare(old, new), used))
    text = "\n".join(parts)
    print(text, end="")
    if args.report:
        args.report.write_text(text, encoding="utf-8")
    if args.github_issue:
        token = os.environ.get("GITHUB_TOKEN")
        if not token:
            raise ValueError("--github-issue needs $GITHUB_TOKEN")
        action, number = file_issue(text, args.github_issue, token, os.environ.get("GITHUB_API_URL",
                                                                                     "https://api.github.com"))
        print(f"extract-facts: {action} issue #{number}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
