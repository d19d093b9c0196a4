"""Drift between two releases' facts, offline: the comparison, the pages that use a changed fact, the
newest version on a package index and the one issue the weekly workflow keeps, against local servers
standing in for PyPI and the GitHub API; and the extract-facts command on fixture trees."""

from __future__ import annotations

import json
import shutil
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from macros.facts import load_snapshot
from macros.facts.__main__ import main as extract_facts
from macros.facts.drift import ISSUE_MARKER, Change, compare, file_issue, newest_version, report, usage
from macros.facts.extract import vllm as vllm_x

FIXTURES = Path(__file__).parent / "facts_fixtures"


@pytest.fixture(scope="module")
def old():
    return vllm_x.extract(FIXTURES / "vllm_mini")


@pytest.fixture
def newer(tmp_path):
    """The fixture tree one 'release' later: a default changed, a flag removed, an env var added."""
    root = tmp_path / "new"
    shutil.copytree(FIXTURES / "vllm_mini", root)
    cache = root / "vllm" / "config" / "cache.py"
    cache.write_text(cache.read_text().replace("default=0.92", "default=0.95"))
    args = root / "vllm" / "engine" / "arg_utils.py"
    args.write_text(args.read_text().replace(
        '        parser.add_argument("--shutdown-timeout", type=int, default=0, help="0 = abort")\n', ""))
    envs = root / "vllm" / "envs.py"
    envs.write_text(envs.read_text().replace('    "VLLM_HOST_IP"', '    "VLLM_NEW_KNOB": lambda: os.getenv('
                                             '"VLLM_NEW_KNOB", "1"),\n    "VLLM_HOST_IP"'))
    return root


def test_compare_finds_changed_removed_and_added_facts(old, newer):
    changes = compare(old, vllm_x.extract(newer))
    by = {(c.kind, c.name): c for c in changes}
    gmu = by[("flags", "--gpu-memory-utilization")]
    assert gmu.what == "changed" and gmu.before == {"default": "0.92"} and gmu.after == {"default": "0.95"}
    assert by[("flags", "--shutdown-timeout")].what == "removed"
    assert by[("env", "VLLM_NEW_KNOB")].what == "added"
    assert by[("config", "CacheConfig.gpu_memory_utilization")].what == "changed"
    # nothing else moved: lines shift between releases, and that is not drift
    assert {(c.kind, c.name) for c in changes} == {("flags", "--gpu-memory-utilization"),
                                                   ("flags", "--shutdown-timeout"), ("env", "VLLM_NEW_KNOB"),
                                                   ("config", "CacheConfig.gpu_memory_utilization")}


def test_compare_of_a_release_with_itself_is_empty(old):
    assert compare(old, old) == []


def test_report_lists_pages_that_use_each_change(tmp_path):
    docs = tmp_path / "docs" / "a"
    docs.mkdir(parents=True)
    (docs / "p.md").write_text('Start with `--shutdown-timeout 30`.\n{{ flag("vllm", "--gpu-memory-utilization") }}\n')
    (docs / "q.md").write_text("Nothing here.\n")
    used = usage(tmp_path / "docs")
    changes = [Change("flags", "--gpu-memory-utilization", "changed", {"default": "0.92"}, {"default": "0.95"}),
               Change("flags", "--shutdown-timeout", "removed", {"default": "0"}, None),
               Change("env", "VLLM_NEW_KNOB", "added", None, {"default": "'1'"}),
               Change("log_lines", "Some new line nobody quotes", "added", None, {})]
    text = report("vLLM 0.33.0", "vLLM 0.34.0", changes, used)
    assert "## vLLM 0.33.0 → vLLM 0.34.0" in text
    assert "4 facts changed; 2 of them are used on pages." in text
    assert ('- `--gpu-memory-utilization`: `{"default": "0.92"}` → `{"default": "0.95"}` — used on docs/a/p.md'
            in text)
    assert '- `--shutdown-timeout`: removed (was `{"default": "0"}`) — used on docs/a/p.md' in text
    assert "- `VLLM_NEW_KNOB`: added" in text and "VLLM_NEW_KNOB`: added: `{\"default\": \"'1'\"}`\n" in text + "\n"
    assert "1 log-line templates added or removed that no page quotes." in text
    assert text.index("--gpu-memory-utilization") < text.index("VLLM_NEW_KNOB")  # used ones first
    assert report("a", "b", [], used) == "No fact changed between a and b.\n"


class _Fake(ThreadingHTTPServer):
    daemon_threads = True


def _serve(handler):
    srv = _Fake(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, f"http://127.0.0.1:{srv.server_address[1]}"


def test_newest_version_reads_a_pep691_index_and_skips_prereleases():
    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            assert self.headers["Accept"] == "application/vnd.pypi.simple.v1+json"
            body = json.dumps({"versions": ["0.9.2", "0.33.0", "0.34.0rc1", "0.33.0.post1", "0.10.0"]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    srv, url = _serve(H)
    try:
        assert newest_version("vllm", url + "/simple") == "0.33.0.post1"
    finally:
        srv.shutdown()


def test_file_issue_opens_once_then_updates_the_same_issue():
    issues: list[dict] = [{"number": 7, "body": "unrelated", "title": "x"},
                          {"number": 8, "body": ISSUE_MARKER, "pull_request": {}, "title": "a PR"}]
    calls = []

    class H(BaseHTTPRequestHandler):
        def _reply(self, obj, code=200):
            data = json.dumps(obj).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(data)

        def _body(self):
            return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

        def do_GET(self):
            calls.append(("GET", self.path, self.headers["Authorization"]))
            self._reply(issues)

        def do_POST(self):
            body = self._body()
            calls.append(("POST", self.path, body["title"]))
            issues.append({"number": 9, **body})
            self._reply({"number": 9}, 201)

        def do_PATCH(self):
            body = self._body()
            calls.append(("PATCH", self.path, body["body"]))
            next(i for i in issues if i["number"] == 9)["body"] = body["body"]
            self._reply({"number": 9})

        def log_message(self, *a):
            pass

    srv, url = _serve(H)
    try:
        assert file_issue("first report", "o/r", "tok", api=url) == ("opened", 9)
        assert file_issue("second report", "o/r", "tok", api=url) == ("updated", 9)
    finally:
        srv.shutdown()
    assert calls[0] == ("GET", "/repos/o/r/issues?state=open&per_page=100&page=1", "Bearer tok")
    assert [c[0] for c in calls] == ["GET", "POST", "GET", "PATCH"]
    assert calls[3] == ("PATCH", "/repos/o/r/issues/9", f"{ISSUE_MARKER}\nsecond report")


def test_extract_facts_write_check_and_compare(tmp_path, newer, capsys):
    out = tmp_path / "facts"
    src = FIXTURES / "vllm_mini"
    assert extract_facts(["vllm", "--source", str(src), "--out-dir", str(out)]) == 0
    snap = out / "vllm-0.33.0.json"
    assert load_snapshot(snap)["flags"]["--gpu-memory-utilization"][0]["default"] == "0.92"
    assert extract_facts(["vllm", "--check", "--source", str(src), "--out-dir", str(out)]) == 0
    assert "matches" in capsys.readouterr().out
    assert extract_facts(["vllm", "--check", "--source", str(newer), "--out-dir", str(out)]) == 1
    assert "DIFFERS" in capsys.readouterr().out
    docs = tmp_path / "docs" / "x"
    docs.mkdir(parents=True)
    (docs / "p.md").write_text("vLLM: `--shutdown-timeout 30`.\n")
    report_file = tmp_path / "drift.md"
    assert extract_facts(["vllm", "--compare", "vllm==0.34.0", "--source", str(newer), "--out-dir", str(out),
                          "--docs", str(tmp_path / "docs"), "--report", str(report_file)]) == 0
    text = report_file.read_text()
    assert "vLLM 0.33.0 → vLLM 0.34.0" in text and "`--shutdown-timeout`: removed" in text
    assert "docs/x/p.md" in text


def test_extract_facts_errors_are_one_line_with_status_2(capsys):
    assert extract_facts(["vllm", "--compare", "vllm"]) == 2
    assert "expected ENGINE==VERSION or newest" in capsys.readouterr().err
    with pytest.raises(SystemExit, match="unknown engine"):
        extract_facts(["vllmm"])
