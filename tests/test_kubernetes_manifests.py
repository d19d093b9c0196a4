"""The Kubernetes manifests on the Module 5 pages are real files, valid for a named Kubernetes release.

Every ``examples/kubernetes/**/*.yaml`` is validated offline (tests/k8skit.py): core kinds against the
Kubernetes OpenAPI schema bundled by kubernetes-validate, custom resources against their vendored CRD.
Every such file is shown on a Module 5 page, and a page shows Kubernetes YAML only by including a file.
"""

from __future__ import annotations

import gzip
import re
import shutil

import importlib_resources
import pytest

import k8skit
from k8skit import EXAMPLES, K8S_VERSION, ROOT, ManifestError, manifest_files, validate_file
from macros.facts import release

FIXTURES = ROOT / "tests" / "kubernetes_fixtures"
PAGES = ROOT / "docs" / "deployment" / "kubernetes"
INCLUDE = re.compile(r'--8<--\s+"(examples/kubernetes/[^"]+?)(?::[\w-]+)?"')


def test_there_are_manifests():
    assert len(manifest_files()) >= 2, manifest_files()


@pytest.mark.parametrize("path", manifest_files(), ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_manifest_is_valid(path):
    lines = validate_file(path)
    assert lines and all("valid against" in line for line in lines)


def test_schema_is_bundled_locally():
    # The validation needs no network: the schema of K8S_VERSION ships inside the installed package.
    base = importlib_resources.files("kubernetes_validate") / "kubernetes-json-schema"
    strict = base / f"v{K8S_VERSION}-local-strict"
    assert (strict / "deployment-apps-v1.json").is_file()
    assert (strict / "_definitions.json").is_file()


def test_misspelled_field_names_file_and_field():
    with pytest.raises(ManifestError) as exc:
        validate_file(FIXTURES / "misspelled-probe.yaml")
    msg = str(exc.value)
    assert msg.startswith("tests/kubernetes_fixtures/misspelled-probe.yaml: document 1 (Pod misspelled-probe): ")
    assert "spec.containers[0].livenessProbe.periodSecond: unknown field" in msg
    assert f"(Kubernetes {release('kubernetes').version} schema)" in msg


def test_misspelled_field_in_custom_resource_names_file_and_field():
    with pytest.raises(ManifestError) as exc:
        validate_file(FIXTURES / "misspelled-lws.yaml")
    msg = str(exc.value)
    assert "misspelled-lws.yaml: document 1 (LeaderWorkerSet misspelled-lws)" in msg
    assert "spec.leaderWorkerTemplate.sizee: unknown field" in msg
    assert "LeaderWorkerSet CRD" in msg


def test_wrong_type_is_named():
    with pytest.raises(ManifestError, match=r"wrong-type\.yaml: document 1 \(Deployment wrong-type\): "
                                            r"spec\.replicas: 'two' is not of type 'integer'"):
        validate_file(FIXTURES / "wrong-type.yaml")


def test_unknown_kind_is_an_error_not_a_pass():
    with pytest.raises(ManifestError, match=r"no schema for ModelThing example\.com/v1 in Kubernetes 1\.37 "
                                            r"and no vendored CRD"):
        validate_file(FIXTURES / "unknown-kind.yaml")


def test_api_version_removed_in_release_fails(tmp_path):
    # A manifest written for an old cluster: extensions/v1beta1 Deployments were removed in 1.16.
    old = tmp_path / "old.yaml"
    old.write_text("apiVersion: extensions/v1beta1\nkind: Deployment\nmetadata: {name: old}\nspec: {}\n")
    with pytest.raises(ManifestError, match="no schema for Deployment extensions/v1beta1"):
        validate_file(old)


def test_custom_resource_metadata_is_checked(tmp_path):
    bad = tmp_path / "bad-meta.yaml"
    bad.write_text((FIXTURES / "misspelled-lws.yaml").read_text()
                   .replace("sizee", "size").replace("  name: misspelled-lws", "  nmae: misspelled-lws"))
    with pytest.raises(ManifestError, match=r"metadata\.nmae: unknown field"):
        validate_file(bad)


def test_tampered_crd_is_rejected(tmp_path, monkeypatch):
    for f in k8skit.CRD_DIR.iterdir():
        shutil.copy(f, tmp_path / f.name)
    victim = tmp_path / "leaderworkerset.x-k8s.io_leaderworkersets.yaml.gz"
    victim.write_bytes(gzip.compress(gzip.decompress(victim.read_bytes()) + b"\n# edited\n"))
    monkeypatch.setattr(k8skit, "CRD_DIR", tmp_path)
    k8skit.crd_schemas.cache_clear()
    try:
        with pytest.raises(ManifestError, match="leaderworkerset.*does not match SOURCE.txt"):
            k8skit.crd_schemas()
    finally:
        k8skit.crd_schemas.cache_clear()


def test_every_vendored_crd_has_a_recorded_checksum():
    names = {p.name for p in k8skit.CRD_DIR.glob("*.yaml.gz")}
    assert names and names == set(k8skit.crd_sources())


def _page_includes() -> dict[str, set[str]]:
    shown: dict[str, set[str]] = {}
    for page in sorted(ROOT.glob("docs/**/*.md")):
        for path in INCLUDE.findall(page.read_text()):
            shown.setdefault(path, set()).add(str(page.relative_to(ROOT)))
    return shown


def test_every_manifest_is_shown_on_a_page_and_every_include_exists():
    shown = _page_includes()
    files = {str(p.relative_to(ROOT)) for p in manifest_files()}
    assert files - set(shown) == set(), "manifests no page includes"
    assert set(shown) - files == set(), "pages include manifests that do not exist"


_FENCE = re.compile(r"^```ya?ml[^\n]*\n(.*?)^```", re.M | re.S)


def test_module5_pages_show_yaml_only_by_including_a_file():
    # A YAML block typed into a page would escape validation: every ```yaml block on a Module 5 page
    # must consist of snippet includes only.
    for page in sorted(PAGES.glob("*.md")):
        for body in _FENCE.findall(page.read_text()):
            lines = [ln for ln in body.splitlines() if ln.strip()]
            typed = [ln for ln in lines if not INCLUDE.search(ln)]
            assert not typed, f"{page.relative_to(ROOT)}: a yaml block types manifest text: {typed[:3]}"


def _container(path: str) -> dict:
    import yaml
    doc = next(yaml.safe_load_all((ROOT / path).read_text()))
    return doc["spec"]["template"]["spec"]["containers"][0]


def test_probe_manifest_matches_the_worked_example():
    # The page's example computes the startup budget from a measured 420 s load with margin 1.5; the manifest
    # it shows must carry the same numbers.
    from macros.formulas import startup_failure_threshold
    page = (PAGES / "probes.md").read_text()
    assert "probe_timings(load_s=420, margin=1.5)" in page
    probe = _container("examples/kubernetes/probes/vllm-deployment.yaml")["startupProbe"]
    assert probe["failureThreshold"] == startup_failure_threshold(420, probe["periodSeconds"], margin=1.5)


def test_resources_manifest_matches_the_worked_example():
    from macros.formulas import resource_plan
    page = (PAGES / "requests-limits.md").read_text()
    assert "resource_requests(cpu_p95_cores=3.2, memory_peak_gib=37, headroom=0.2, gpu_count=4" in page
    plan = resource_plan(3.2, 37 * 2**30, 0.2, 4)
    res = _container("examples/kubernetes/requests-limits/vllm-resources.yaml")["resources"]
    assert res["requests"]["cpu"] == f"{round(plan.cpu_request_cores * 1000)}m"
    assert res["requests"]["memory"] == res["limits"]["memory"] == f"{plan.memory_bytes // 2**30}Gi"
    assert res["limits"]["nvidia.com/gpu"] == plan.gpus
    assert "cpu" not in res["limits"]


def test_termination_manifest_matches_the_worked_example():
    # The page computes vLLM's shutdown timeout from a 2048-token stream at 45 ms per token (92.16 s) plus a
    # 10 s engine teardown (102.16 s, so 103 whole seconds), and the grace period from a 15 s preStop sleep
    # + that timeout + a 5 s API-server exit (123 s -> 130 s); the manifest must carry the same sleep, the
    # timeout as vLLM's --shutdown-timeout, and the grace period.
    import yaml
    from macros.formulas import drain_timeout_s, termination_grace_s
    page = (PAGES / "pod-lifecycle.md").read_text()
    assert "termination_grace(prestop_s=15, max_tokens=2048, tpot_ms=45, teardown_s=10, exit_s=5)" in page
    doc = next(yaml.safe_load_all((ROOT / "examples/kubernetes/pod-lifecycle/graceful-shutdown.yaml").read_text()))
    spec = doc["spec"]["template"]["spec"]
    container = spec["containers"][0]
    sleep = container["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert sleep == 15
    args = container["args"]
    assert "--shutdown-timeout" in args, "without --shutdown-timeout vLLM aborts in-flight streams at SIGTERM"
    timeout = int(args[args.index("--shutdown-timeout") + 1])
    assert timeout == drain_timeout_s(2048 * 0.045, 10) == 103
    assert spec["terminationGracePeriodSeconds"] == termination_grace_s(sleep, timeout, 5) == 130


def test_gateway_api_route_is_checked_against_its_vendored_crd(tmp_path):
    # The HTTPRoute on the traffic-path page validates against Gateway API v1.4.1's CRD; a misspelled
    # backendRefs key and a weight of the wrong type must both be named.
    route = ROOT / "examples/kubernetes/traffic/gateway-canary.yaml"
    good = route.read_text()
    assert "valid against HTTPRoute CRD" in " ".join(validate_file(route))
    bad = tmp_path / "bad-route.yaml"
    bad.write_text(good.replace("backendRefs:", "backendRef:"))
    with pytest.raises(ManifestError, match=r"document 4 \(HTTPRoute llama-8b\): spec\.rules\[0\]\.backendRef: "
                                            r"unknown field .*HTTPRoute CRD"):
        validate_file(bad)
    bad.write_text(good.replace("weight: 95", "weight: ninety-five"))
    with pytest.raises(ManifestError, match=r"weight: 'ninety-five' is not of type 'integer'"):
        validate_file(bad)


VLLM_IMAGE = re.compile(r"^\s*image:\s*vllm/vllm-openai:(?P<tag>[^\s@]+)", re.M)
# Every file that runs the vLLM image on a page, the Q133 pinned fixture included (its unpinned twin
# follows `latest` on purpose, and is the one file left out).
VLLM_IMAGE_FILES = sorted({*manifest_files(), ROOT / "examples/operations/fixtures/pins/pinned.yaml"})


def _vllm_tags(path):
    return [m["tag"] for m in VLLM_IMAGE.finditer(path.read_text())]


def test_vllm_images_are_tagged_with_the_reference_release():
    # The tag follows macros/catalog/releases.yaml, so a re-pin that forgets a manifest fails here.
    want = release("vllm").tag
    tagged = {p: _vllm_tags(p) for p in VLLM_IMAGE_FILES if _vllm_tags(p)}
    assert len(tagged) >= 10, sorted(map(str, tagged))
    stale = {str(p.relative_to(ROOT)): tags for p, tags in tagged.items() if set(tags) != {want}}
    assert not stale, f"vllm/vllm-openai tags other than {want} (macros/catalog/releases.yaml): {stale}"


def test_vllm_servers_take_the_model_as_the_positional_argument():
    # The image's entrypoint is `vllm serve`; the reference release deprecates `--model` there
    # (utils/argparse_utils.py, FlexibleArgumentParser.parse_args), so args start with the model.
    import yaml
    checked = 0
    for path in VLLM_IMAGE_FILES:
        for doc in yaml.safe_load_all(path.read_text()):
            for c in _containers(doc):
                if not str(c.get("image", "")).startswith("vllm/vllm-openai:") or "command" in c:
                    continue
                args = [str(a) for a in c.get("args", [])]
                assert "--model" not in args and not any(a.startswith("--model=") for a in args), (path, c["name"])
                assert args and not args[0].startswith("-"), f"{path}: {c['name']}: args must start with the model"
                checked += 1
    assert checked >= 8, checked


def _containers(node):
    # Every container spec in a document, however deeply its Pod template is nested.
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                yield from (c for c in value if isinstance(c, dict))
            else:
                yield from _containers(value)
    elif isinstance(node, list):
        for item in node:
            yield from _containers(item)
