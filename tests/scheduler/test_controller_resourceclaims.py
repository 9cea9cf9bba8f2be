"""The resourceclaim controller: claims from templates, their names, and how pod claims resolve."""

from __future__ import annotations

from typing import Any

import pytest

from dralloc.api import codec
from dralloc.controllers.names import ALPHANUMS, NameGenerator
from dralloc.controllers.resourceclaims import (
    ClaimNotCreatedError,
    UnsupportedPodClaimError,
    claim_generate_name,
    claims_for_pod,
    pod_claim_names,
)
from dralloc.errors import InputError

TEMPLATE = codec.decode({
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
    "metadata": {"name": "one-gpu", "namespace": "ml"},
    "spec": {"metadata": {"labels": {"tier": "gpu"}, "annotations": {"note": "from template"}},
             "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}})


def pod(name: str = "trainer", claims: list[dict[str, Any]] | None = None, statuses: list[dict[str, Any]] | None = None) -> Any:
    data: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": name, "namespace": "ml", "uid": "pod-uid"},
                            "spec": {"containers": [{"name": "c"}], "resourceClaims": claims or []}}
    if statuses is not None:
        data["status"] = {"resourceClaimStatuses": statuses}
    return codec.decode(data)


def test_the_generate_name_is_pod_dash_claim_dash_when_short() -> None:
    assert claim_generate_name("trainer", "gpu") == "trainer-gpu-"


def test_a_base_of_exactly_57_characters_is_kept() -> None:
    name = claim_generate_name("p" * 40, "c" * 15)  # 40 + 1 + 15 + 1 = 57
    assert name == "p" * 40 + "-" + "c" * 15 + "-"


def test_a_longer_base_cuts_both_names_in_proportion_and_drops_the_trailing_hyphen() -> None:
    # base length 72: the pod name keeps 40*57//72 = 31 characters, the claim name 30*57//72 = 23
    assert claim_generate_name("p" * 40, "c" * 30) == "p" * 31 + "-" + "c" * 23
    # one character over: 41*57//58 = 40 and 15*57//58 = 14
    assert claim_generate_name("p" * 41, "c" * 15) == "p" * 40 + "-" + "c" * 14


def test_a_claim_is_made_from_the_template_with_owner_annotation_labels_and_spec() -> None:
    p = pod(claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    new_pod, [claim] = claims_for_pod(p, {"one-gpu": TEMPLATE}, NameGenerator(0))
    meta = claim.metadata
    assert meta.generate_name == "trainer-gpu-" and meta.namespace == "ml"
    suffix = meta.name[len("trainer-gpu-"):]
    assert meta.name.startswith("trainer-gpu-") and len(suffix) == 5 and set(suffix) <= set(ALPHANUMS)
    assert meta.annotations == {"note": "from template", "resource.kubernetes.io/pod-claim-name": "gpu"}
    assert meta.labels == {"tier": "gpu"}
    [ref] = meta.owner_references
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller, ref.block_owner_deletion) == \
        ("v1", "Pod", "trainer", "pod-uid", True, True)
    assert claim.spec == TEMPLATE.spec.spec
    assert [(s.name, s.resource_claim_name) for s in new_pod.status.resource_claim_statuses] == [("gpu", meta.name)]
    assert p.status is None  # the input pod is not modified


def test_a_truncated_base_gets_the_suffix_directly_without_a_hyphen() -> None:
    p = pod(name="p" * 40, claims=[{"name": "c" * 30, "resourceClaimTemplateName": "one-gpu"}])
    _, [claim] = claims_for_pod(p, {"one-gpu": TEMPLATE}, NameGenerator(0))
    assert claim.metadata.name[:55] == "p" * 31 + "-" + "c" * 23 and len(claim.metadata.name) == 60


def test_only_unresolved_template_entries_get_claims_and_statuses_follow_spec_order() -> None:
    p = pod(claims=[{"name": "a", "resourceClaimTemplateName": "one-gpu"},
                    {"name": "shared", "resourceClaimName": "big-claim"},
                    {"name": "b", "resourceClaimTemplateName": "one-gpu"}],
            statuses=[{"name": "b", "resourceClaimName": "trainer-b-xxxxx"}])
    new_pod, claims = claims_for_pod(p, {"one-gpu": TEMPLATE}, NameGenerator(0))
    assert [c.metadata.annotations["resource.kubernetes.io/pod-claim-name"] for c in claims] == ["a"]
    assert [s.name for s in new_pod.status.resource_claim_statuses] == ["a", "b"]
    assert claims_for_pod(new_pod, {"one-gpu": TEMPLATE}, NameGenerator(0)) == (new_pod, [])


def test_a_missing_template_is_an_input_error_naming_pod_and_claim() -> None:
    p = pod(claims=[{"name": "gpu", "resourceClaimTemplateName": "nope"}])
    with pytest.raises(InputError, match=r'pod ml/trainer, PodResourceClaim gpu: resource claim template "nope"'):
        claims_for_pod(p, {}, NameGenerator(0))


def test_claim_names_are_deterministic_for_a_seed() -> None:
    p = pod(claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    assert claims_for_pod(p, {"one-gpu": TEMPLATE}, NameGenerator(5)) == \
        claims_for_pod(p, {"one-gpu": TEMPLATE}, NameGenerator(5))


def test_pod_claim_names_resolve_direct_names_and_template_statuses() -> None:
    p = pod(claims=[{"name": "shared", "resourceClaimName": "big-claim"},
                    {"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                    {"name": "skipped", "resourceClaimTemplateName": "one-gpu"}],
            statuses=[{"name": "gpu", "resourceClaimName": "trainer-gpu-abcde"}, {"name": "skipped"}])
    assert pod_claim_names(p) == [("shared", "big-claim"), ("gpu", "trainer-gpu-abcde"), ("skipped", None)]


def test_a_template_entry_without_status_is_not_created_yet() -> None:
    p = pod(claims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    with pytest.raises(ClaimNotCreatedError) as err:
        pod_claim_names(p)
    assert str(err.value) == "Pod ml/trainer: ResourceClaim not created yet"


def test_an_entry_naming_neither_a_claim_nor_a_template_is_unsupported() -> None:
    p = pod(claims=[{"name": "odd"}])
    with pytest.raises(UnsupportedPodClaimError) as err:
        pod_claim_names(p)
    assert str(err.value) == "Pod ml/trainer, spec.resourceClaim odd: none of the supported fields are set"
