"""Validation of the Kubernetes manifests shown on the Module 5 pages, offline.

Core kinds (Pod, Deployment, StatefulSet, Service, ConfigMap, ResourceClaimTemplate, ...) are checked by
``kubernetes-validate`` against the OpenAPI schema of :data:`K8S_VERSION` that the package bundles, in
strict mode (an unknown field is an error, as ``kubectl apply --validate=strict`` makes it). Custom
resources (LeaderWorkerSet, KServe InferenceService, Gateway API Gateway and HTTPRoute) are checked
against the ``openAPIV3Schema`` of their own CustomResourceDefinition, vendored at a tagged release
under ``tests/vendor/crds/``, made strict the same way: an object schema that lists its properties
rejects any other key unless it says ``x-kubernetes-preserve-unknown-fields``. Their ``metadata`` is
checked against the core ObjectMeta.

Every failure is a :class:`ManifestError` whose message names the file, the document, the field path and
what is wrong, for example::

    examples/kubernetes/probes/vllm-deployment.yaml: document 1 (Deployment vllm): spec.template.spec.
    containers[0].livenessProbe.periodSecond: unknown field (Kubernetes 1.37 schema)
"""

from __future__ import annotations

import gzip
import hashlib
import re
from functools import lru_cache
from pathlib import Path

import jsonschema
import kubernetes_validate
import yaml
from kubernetes_validate.utils import SchemaNotFoundError

from macros.facts import release

ROOT = Path(__file__).resolve().parents[1]
#: The Kubernetes release whose API schema every core manifest is validated against: the reference
#: release of macros/catalog/releases.yaml (its schemas ship inside kubernetes-validate).
K8S_VERSION = f"{release('kubernetes').version}.0"
EXAMPLES = ROOT / "examples" / "kubernetes"
CRD_DIR = ROOT / "tests" / "vendor" / "crds"


class ManifestError(Exception):
    """A manifest that the API server of :data:`K8S_VERSION` (or the CRD's schema) would reject."""


def _rel(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def _field_path(parts) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out or "(top level)"


def _describe(err: jsonschema.ValidationError) -> str:
    """``field.path: what is wrong``; an unknown key is named as the last element of the path."""
    path = list(err.absolute_path)
    if err.validator == "additionalProperties" and isinstance(err.instance, dict):
        known = set(err.schema.get("properties", {}))
        extra = sorted(k for k in err.instance if k not in known)
        if extra:
            return "; ".join(f"{_field_path(path + [k])}: unknown field" for k in extra)
    return f"{_field_path(path)}: {err.message}"


def _strict(schema):
    """Copy of a CRD schema where object schemas with listed properties allow no other keys."""
    if isinstance(schema, list):
        return [_strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strict(v) for k, v in schema.items()}
    if ("properties" in out and "additionalProperties" not in out
            and not out.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


def crd_sources() -> dict[str, str]:
    """Vendored CRD file name -> the SHA-256 recorded for it in SOURCE.txt."""
    text = (CRD_DIR / "SOURCE.txt").read_text()
    found = re.findall(r"^(\S+\.yaml\.gz)\n(?:  .*\n)*?  sha256:\s+([0-9a-f]{64})", text, re.M)
    return dict(found)


@lru_cache(maxsize=1)
def crd_schemas() -> dict[tuple[str, str], dict]:
    """(apiVersion, kind) -> strict openAPIV3Schema, for every served version of every vendored CRD."""
    schemas: dict[tuple[str, str], dict] = {}
    sums = crd_sources()
    for path in sorted(CRD_DIR.glob("*.yaml.gz")):
        raw = gzip.decompress(path.read_bytes())
        digest = hashlib.sha256(raw).hexdigest()
        if sums.get(path.name) != digest:
            raise ManifestError(f"{_rel(path)}: SHA-256 {digest} does not match SOURCE.txt "
                                f"({sums.get(path.name, 'no entry')})")
        crd = yaml.safe_load(raw)
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                schema = version["schema"]["openAPIV3Schema"]
                schemas[(f"{group}/{version['name']}", kind)] = _strict(schema)
    return schemas


def validate_document(doc: dict, where: str, version: str = K8S_VERSION) -> str:
    """Validate one parsed manifest; return what it was checked against. ``where`` prefixes errors."""
    if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
        raise ManifestError(f"{where}: not a Kubernetes object (apiVersion and kind are required)")
    major_minor = ".".join(version.split(".")[:2])
    key = (doc["apiVersion"], doc["kind"])
    crd = crd_schemas().get(key)
    if crd is not None:
        validator = jsonschema.Draft4Validator(crd)
        errors = sorted(validator.iter_errors({k: v for k, v in doc.items() if k != "metadata"}),
                        key=lambda e: list(e.absolute_path))
        if errors:
            raise ManifestError(f"{where}: " + "; ".join(_describe(e) for e in errors)
                                + f" (schema of the {doc['kind']} CRD)")
        # metadata is ObjectMeta for every kind: check it with the core schema.
        validate_document({"apiVersion": "v1", "kind": "ConfigMap", "metadata": doc.get("metadata", {})},
                          where, version)
        return f"{doc['kind']} CRD"
    try:
        kubernetes_validate.validate(doc, version, strict=True)
    except kubernetes_validate.ValidationError as err:
        raise ManifestError(f"{where}: {_describe(err)} (Kubernetes {major_minor} schema)") from None
    except SchemaNotFoundError:
        raise ManifestError(f"{where}: no schema for {doc['kind']} {doc['apiVersion']} in Kubernetes "
                            f"{major_minor} and no vendored CRD in {_rel(CRD_DIR)}") from None
    return f"Kubernetes {major_minor}"


def validate_file(path: Path, version: str = K8S_VERSION) -> list[str]:
    """Validate every document of a YAML file; return one line per document on success."""
    try:
        docs = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except yaml.YAMLError as err:
        raise ManifestError(f"{_rel(path)}: not valid YAML: {err}") from None
    if not docs:
        raise ManifestError(f"{_rel(path)}: no YAML document")
    checked = []
    for i, doc in enumerate(docs, 1):
        name = (doc.get("metadata") or {}).get("name", "?") if isinstance(doc, dict) else "?"
        kind = doc.get("kind", "?") if isinstance(doc, dict) else "?"
        where = f"{_rel(path)}: document {i} ({kind} {name})"
        checked.append(f"{where}: valid against {validate_document(doc, where, version)}")
    return checked


def manifest_files() -> list[Path]:
    return sorted(EXAMPLES.rglob("*.yaml"))
