"""Lighthouse (npm ``lighthouse@12.2.3``, the last release that runs on Node 20) against a served site.

Installed on first use with npm into ``build/lighthouse/`` (git-ignored); nothing is committed.
Runs Debian's Chromium (``CHROME_PATH``), mobile form factor with simulated throttling (the defaults).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

VERSION = "12.2.3"
CHROMIUM = "/usr/bin/chromium"
CATEGORIES = ("performance", "accessibility", "best-practices", "seo")


def ensure_installed(root: Path) -> Path:
    prefix = root / "build" / "lighthouse"
    binary = prefix / "node_modules" / ".bin" / "lighthouse"
    pkg = prefix / "node_modules" / "lighthouse" / "package.json"
    if binary.exists() and pkg.exists() and json.loads(pkg.read_text())["version"] == VERSION:
        return binary
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is missing: Lighthouse is installed with npm (Debian: apt-get install npm)")
    prefix.mkdir(parents=True, exist_ok=True)
    subprocess.run([npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--save-exact",
                    f"lighthouse@{VERSION}"], check=True, capture_output=True, text=True)
    return binary


def run(binary: Path, url: str, out_json: Path) -> dict:
    """Scores (0-100) per category and a few metrics of one Lighthouse run."""
    env = dict(os.environ, CHROME_PATH=CHROMIUM)
    cmd = [str(binary), url, "--quiet", "--output=json", f"--output-path={out_json}",
           "--chrome-flags=--headless=new --no-sandbox --disable-gpu --disable-dev-shm-usage",
           "--only-categories=" + ",".join(CATEGORIES)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    if proc.returncode != 0 or not out_json.exists():
        raise RuntimeError(f"lighthouse failed on {url}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    report = json.loads(out_json.read_text(encoding="utf-8"))
    scores = {c: round(100 * (report["categories"][c]["score"] or 0)) for c in CATEGORIES}
    audits = report["audits"]
    metrics = {
        "FCP": audits["first-contentful-paint"]["displayValue"],
        "LCP": audits["largest-contentful-paint"]["displayValue"],
        "TBT": audits["total-blocking-time"]["displayValue"],
        "CLS": audits["cumulative-layout-shift"]["displayValue"],
        "bytes": audits["total-byte-weight"]["numericValue"],
    }
    failed = [a["id"] for a in audits.values()
              if a.get("score") is not None and a["score"] < 1 and a.get("scoreDisplayMode") == "binary"]
    return {"scores": scores, "metrics": metrics, "failed": failed}
