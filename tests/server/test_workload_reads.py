"""What the workload controllers read of a stored object without decoding all of it agrees with the typed decode
of the whole object: a controller's selector (what it adopts and releases), a Deployment's pod template (what its
pod-template-hash is taken over), and EqualIgnoreHash of a Deployment's template and a ReplicaSet's."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api.codec import decode
from dralloc.api.meta import LabelSelector
from dralloc.controllers.names import pod_template_hash
from dralloc.controllers.workloads import POD_TEMPLATE_HASH
from dralloc.errors import DecodeError
from dralloc.server.controllers.adoption import selector_of
from dralloc.server.controllers.deployments import TemplateMatch, _without_hash, typed_template

KINDS = {"deployments": ("apps/v1", "Deployment"), "replicasets": ("apps/v1", "ReplicaSet"),
         "statefulsets": ("apps/v1", "StatefulSet"), "daemonsets": ("apps/v1", "DaemonSet"),
         "jobs": ("batch/v1", "Job"), "replicationcontrollers": ("v1", "ReplicationController")}
TEMPLATE = {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "main", "image": "nginx:1"}], "restartPolicy": "Never"}}


def whole_decode_selector(resource: str, obj: dict[str, Any]) -> LabelSelector | None:
    """The selector as read before: the whole object decoded, its spec.selector taken."""
    try:
        typed = decode(obj)
    except DecodeError:
        return None
    selector = getattr(getattr(typed, "spec", None), "selector", None)
    if isinstance(selector, dict) and selector:
        return LabelSelector(match_labels=selector)
    return selector if isinstance(selector, LabelSelector) else None


def stored(resource: str, spec: dict[str, Any]) -> dict[str, Any]:
    api_version, kind = KINDS[resource]
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": "w", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
            "spec": {"template": TEMPLATE, **spec}}


SCALARS = st.one_of(st.text(max_size=3), st.integers(-2, 2), st.none(), st.booleans())
LABELS = st.dictionaries(st.sampled_from(["app", "tier", "a/b", ""]), SCALARS | st.sampled_from(["web", "x"]),
                         max_size=3)
REQUIREMENT = st.fixed_dictionaries({}, optional={
    "key": st.sampled_from(["app", "tier"]) | SCALARS,
    "operator": st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt"]) | SCALARS,
    "values": st.none() | st.lists(st.sampled_from(["web", "x"]) | SCALARS, max_size=2),
    "extra": SCALARS})
SELECTORS = st.one_of(
    st.none(), SCALARS, LABELS,
    st.fixed_dictionaries({}, optional={"matchLabels": st.none() | LABELS | SCALARS,
                                        "matchExpressions": st.none() | st.lists(REQUIREMENT, max_size=2) | SCALARS}))


@settings(max_examples=300)
@given(st.sampled_from(sorted(KINDS)), SELECTORS)
def test_a_controllers_selector_read_from_its_json_is_the_whole_decodes(resource: str, selector: Any) -> None:
    obj = stored(resource, {} if selector == "absent" else {"selector": selector})
    assert selector_of(resource, obj) == whole_decode_selector(resource, obj)


def test_the_selector_read_from_the_json_follows_each_version() -> None:
    obj = stored("deployments", {"selector": {"matchLabels": {"app": "web"}}})
    assert selector_of("deployments", obj) == LabelSelector(match_labels={"app": "web"})
    changed = {**obj, "spec": {**obj["spec"], "selector": {"matchLabels": {"app": "db"}}}}
    assert selector_of("deployments", changed) == LabelSelector(match_labels={"app": "db"})
    assert selector_of("replicationcontrollers", stored("replicationcontrollers", {"selector": {"app": "web"}})) == \
        LabelSelector(match_labels={"app": "web"})
    assert selector_of("replicationcontrollers", stored("replicationcontrollers", {"selector": {}})) is None


TEMPLATES = [
    TEMPLATE,
    {"metadata": {"labels": {"app": "web"}, "creationTimestamp": None},
     "spec": {"containers": [{"name": "main", "image": "nginx:1", "resources": {
         "limits": {"cpu": "500m", "memory": 1073741824}, "requests": {"memory": " 1Gi "}}}],
              "nodeSelector": {"zone": "a"}, "terminationGracePeriodSeconds": 0}},
    {"metadata": {}, "spec": {"containers": [{"name": "main", "image": "x", "env": [{"name": "A", "value": "1"}],
                                              "ports": [{"containerPort": 80}]}]}},
]


def test_a_deployments_template_decoded_alone_is_the_whole_decodes_and_hashes_the_same() -> None:
    for template in TEMPLATES:
        deploy = stored("deployments", {"selector": {"matchLabels": {"app": "web"}}, "template": template})
        whole = decode(deploy).spec.template
        assert typed_template(deploy) == whole
        assert pod_template_hash(typed_template(deploy), 3) == pod_template_hash(whole, 3)
    without = stored("deployments", {"selector": {"matchLabels": {"app": "web"}}})
    del without["spec"]["template"]
    assert typed_template(without) == decode(without).spec.template


JSON_LEAVES = st.one_of(st.none(), st.booleans(), st.integers(-1, 1), st.sampled_from(["", "a", "web"]))
JSON = st.recursive(JSON_LEAVES, lambda inner: st.lists(inner, max_size=2) |
                    st.dictionaries(st.sampled_from(["a", "b", "labels"]), inner, max_size=2), max_leaves=6)
HASH_LABEL = st.fixed_dictionaries({}, optional={POD_TEMPLATE_HASH: st.sampled_from(["abc", ""]) | st.none()})
TEMPLATE_JSON = st.fixed_dictionaries({}, optional={
    "metadata": st.fixed_dictionaries({}, optional={
        "labels": st.builds(lambda a, b: {**a, **b}, HASH_LABEL,
                            st.dictionaries(st.sampled_from(["app", "x"]), JSON, max_size=2)) | JSON,
        "creationTimestamp": JSON}) | JSON,
    "spec": JSON}) | JSON


@settings(max_examples=500)
@given(TEMPLATE_JSON, TEMPLATE_JSON)
def test_template_equality_ignoring_the_hash_is_the_semantic_forms(a: Any, b: Any) -> None:
    """The fast comparison of the parsed JSON says what comparing both semantic forms said."""
    try:
        expected = _without_hash(a) == _without_hash(b)
    except AttributeError:  # (metadata that is not an object: never stored, as validation refuses it)
        return
    assert TemplateMatch(a)(b) == expected
    copied = {**b, "metadata": {**b["metadata"], "labels": {**b["metadata"]["labels"], POD_TEMPLATE_HASH: "h"}}} \
        if isinstance(b, dict) and isinstance(b.get("metadata"), dict) and isinstance(b["metadata"].get("labels"),
                                                                                   dict) else None
    if copied is not None:
        assert TemplateMatch(b)(copied)  # a ReplicaSet made from the template matches it
