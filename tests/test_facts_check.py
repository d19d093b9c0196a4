"""The facts check on page text: flags, environment variables and metrics a page's code names are
checked against the reference release of the engine its sentence names; history is exempt. And the
bank as a whole: every page outside the pending list passes, and the pending list only shrinks."""

from __future__ import annotations

from pathlib import Path

import pytest

from sitebuild.factcheck import PENDING_FILE, check, pending_paths
from sitebuild.registry import split_front_matter

DOCS = Path(__file__).resolve().parent.parent / "docs"


def names(text: str) -> list[str]:
    return [f.name for f in check(text)]


def test_removed_and_misspelt_vllm_flags_fail():
    # --swap-space and --preemption-mode were removed before vLLM 0.33 (no CPU swap space, recompute only)
    found = check("Start vLLM with `--swap-space 16` and `--preemption-mode swap`.\n")
    assert [f.name for f in found] == ["--preemption-mode", "--swap-space"]
    assert "vLLM 0.33.0 has no flag --swap-space" in found[1].message
    (typo,) = check("In vLLM raise `--gpu-memory-utilisation` to 0.95.\n")
    assert "did you mean --gpu-memory-utilization" in typo.message


def test_current_flags_aliases_and_no_forms_pass():
    text = ("vLLM takes `--tensor-parallel-size 8` (or `-tp`), `--max_model_len` and "
            "`--no-enable-prefix-caching`.\n")
    assert names(text) == []
    # vLLM's parser pairs --enable-x with --disable-x (EnableDisableAction, vllm/utils/argparse_utils.py)
    assert names("vLLM logs each request unless you pass `--disable-log-requests`.\n") == []
    # argparse takes a unique prefix: SGLang's `--tp` is `--tp-size`; an ambiguous or unknown one is not
    assert names("SGLang runs with `--tp 8`.\n") == []
    assert names("SGLang runs with `--tp-sizes 8`.\n") == ["--tp-sizes"]
    assert names("SGLang's `--speculative-accept-threshold-*` settings trade accuracy.\n") == []
    assert names("SGLang's `--speculative-reject-*` settings.\n") == ["--speculative-reject"]


def test_a_sentence_that_names_an_older_release_is_history():
    assert names("vLLM 0.11 still had `--swap-space`; it was removed later.\n") == []
    assert names("In vLLM, `--swap-space` was removed in 0.12.\n") == []
    assert names("Until 0.12 vLLM took `--swap-space`.\n") == []
    assert names("vLLM 0.33.0 has no `--swap-space`.\n") == ["--swap-space", "vLLM 0.33.0"]  # not history
    assert names("In vLLM raise `--gpu-memory-utilisation` to 0.95.\n") == ["--gpu-memory-utilisation"]


def test_flags_are_checked_against_the_engine_the_sentence_names():
    assert names("SGLang sizes its pool with `--mem-fraction-static`.\n") == []
    assert names("vLLM sizes its pool with `--mem-fraction-static`.\n") == ["--mem-fraction-static"]
    assert names("Both vLLM and SGLang accept `--mem-fraction-static`.\n") == []  # one of them has it
    assert names("Pass `--mem-fraction-statik` to SGLang.\n") == ["--mem-fraction-statik"]


def test_flags_of_other_tools_and_of_no_engine_are_not_checked():
    assert names("Run `kubectl rollout status --timeout=5m`.\n") == []
    assert names("vLLM and trtllm-serve both read `--max_batch_size`.\n") == []
    assert names("Set `--foo-bar` on the load balancer.\n") == []


def test_the_paragraph_supplies_the_engine_when_the_sentence_names_none():
    text = "vLLM reserves memory up front. Lower `--gpu-mem-util` when it fails.\n"
    assert names(text) == ["--gpu-mem-util"]


def test_environment_variables_and_metrics_are_always_checked():
    found = check("Set `VLLM_ATTENTION_BACKEND=FLASHINFER` and watch `vllm:gpu_cache_usage_perc`.\n")
    assert [f.name for f in found] == ["VLLM_ATTENTION_BACKEND", "vllm:gpu_cache_usage_perc"]
    assert names("Alert on `vllm:kv_cache_usage_perc` and `vllm:prompt_tokens_total`.\n") == []
    assert names("`VLLM_HOST_IP` and `SGLANG_ENABLE_TORCH_COMPILE` are read at start-up.\n") == []
    assert names("Until vLLM 0.11, `VLLM_ATTENTION_BACKEND` chose the backend.\n") == []


def test_fenced_blocks_are_checked_against_the_command_they_run():
    page = "Text.\n\n```bash\nvllm serve meta-llama/Llama-3.1-8B --max-num-seqs 64 --swap-space-gb 4\n```\n"
    (f,) = check(page)
    assert f.name == "--swap-space-gb" and f.line == 4
    sg = "```bash\npython -m sglang.launch_server --model-path m --tp 2 --chunked-prefil-size 4096\n```\n"
    assert names(sg) == ["--chunked-prefil-size"]
    other = "```bash\ntrtllm-serve model --max_batch_size 8 --kv_cache_free_gpu_memory_fraction 0.9\n```\n"
    assert names(other) == []


def test_macro_calls_and_comments_are_not_scanned():
    text = ('vLLM: {{ flag("vllm", "--gpu-memory-utilization") }}. '
            "<!-- `--old-flag` in vLLM, kept for the record -->\n")
    assert names(text) == []


def test_a_typed_reference_release_is_reported_but_history_links_and_sources_are_not():
    (f,) = check("vLLM 0.33 caches the latent.\n")
    assert f.name == "vLLM 0.33" and '{{ release("vllm") }}' in f.message
    assert names("On Kubernetes 1.37 the field is GA.\n") == ["Kubernetes 1.37"]
    assert names("Until vLLM 0.11 it did; SGLang 0.5.3 too.\n") == []
    assert names("See [vLLM 0.33.0 source](https://github.com/vllm-project/vllm/tree/v0.33.0).\n") == []
    assert names("Text.\n\n## Sources\n\n- vLLM 0.33.0 release notes, <https://example.org/n>.\n") == []


def test_line_numbers_point_at_the_sentence():
    text = "Intro line.\n\nvLLM reads flags.\nSo `--bogus-flag` fails.\n"
    (f,) = check(text)
    assert f.line == 4


# --- the bank -----------------------------------------------------------------------------------------

def _question_pages():
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(DOCS).as_posix()
        meta, body = split_front_matter(path.read_text(encoding="utf-8"))
        if "id" in meta and rel.split("/")[0] != "q":
            yield rel, body


def test_every_page_outside_the_pending_list_passes_the_facts_check():
    pending = pending_paths()
    failures = []
    for rel, body in _question_pages():
        if rel in pending:
            continue
        failures += [f"docs/{rel}: {f.name}: {f.message}" for f in check(body)]
    assert failures == [], "\n".join(failures)


def test_pending_pages_exist_and_still_have_findings():
    """The list only shrinks: a listed page that is now clean must leave it (strict from then on)."""
    pages = dict(_question_pages())
    stale = [p for p in pending_paths() if p not in pages]
    assert stale == [], f"{PENDING_FILE.name} lists pages that do not exist: {stale}"
    clean = [p for p in pending_paths() if not check(pages[p])]
    assert clean == [], f"these pages pass the facts check now; remove them from {PENDING_FILE.name}: {clean}"


def test_pending_list_errors_name_the_line(tmp_path):
    bad = tmp_path / "pending.txt"
    bad.write_text("# comment\ndocs/x.md\n")
    with pytest.raises(ValueError, match=r"pending.txt:2: expected a page path"):
        pending_paths(bad)
    good = tmp_path / "ok.txt"
    good.write_text("# pages\ndeployment/serving/a.md  # why\n\n")
    assert pending_paths(good) == {"deployment/serving/a.md"}
