"""Per-kind strategies: each served kind's write rules come from its strategy (server/registry/), and the generic
verbs dispatch to it without naming any resource."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server.registry import kinds  # noqa: E402
from dralloc.server.registry.strategy import CoreStrategy, Strategy  # noqa: E402
from dralloc.server.views import ObjectView  # noqa: E402

VERBS = Path(__file__).resolve().parents[2] / "src" / "dralloc" / "server" / "verbs"
READ_ONLY = set(kinds.READ_ONLY)


def _served() -> list[kinds.Resource]:
    return [r for group in (kinds.CORE, *kinds.GROUP_RESOURCES.values()) for r in group.values()]


def test_the_generic_verbs_name_no_resource() -> None:
    """No comparison of a resource's name or group with a literal in the verbs: a kind's rules are its
    strategy's."""
    found = []
    for path in sorted(VERBS.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            names_resource = any(isinstance(s, ast.Attribute) and s.attr in ("name", "group") and
                                 isinstance(s.value, ast.Attribute) and s.value.attr == "resource" for s in sides)
            literal = any(isinstance(s, ast.Constant) and isinstance(s.value, str) or
                          isinstance(s, (ast.Tuple, ast.Set, ast.List)) for s in sides)
            if names_resource and literal:
                found.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "\n".join(found)


def test_every_writable_core_kind_is_stored_as_sent_and_every_other_kind_typed() -> None:
    for r in _served():
        if r.verbs and set(r.verbs) <= READ_ONLY:
            continue
        assert isinstance(r.strategy, Strategy), r.name
        core = r.group == "" or (r.stored_as is not None and r.stored_as.group == "")
        # the workloads too: modelled only in part (what their controllers read), stored as sent plus defaults
        workload = r.group in ("apps", "batch")
        assert isinstance(r.strategy, CoreStrategy) == (core or workload), r.group_resource


def test_a_view_is_stored_as_a_resource_of_its_own_name_and_kind() -> None:
    views = [r for r in _served() if r.stored_as is not None]
    assert [r.group_resource for r in views] == ["events.events.k8s.io"]
    assert all((v.stored_as.name, v.stored_as.kind) == (v.name, v.kind) for v in views if v.stored_as)


@pytest.fixture
def client() -> TestClient:
    return api_client("ns")


@pytest.mark.parametrize(("url", "obj", "tracked"), [
    ("/apis/resource.k8s.io/v1/deviceclasses",
     {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"}, "spec": {}}, True),
    ("/apis/coordination.k8s.io/v1/namespaces/ns/leases",
     {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "lock"},
      "spec": {"holderIdentity": "a"}}, False),
    ("/apis/scheduling.k8s.io/v1/priorityclasses",
     {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 10},
     False),
])
def test_generation_is_kept_by_the_kinds_whose_strategy_keeps_it(client: TestClient, url: str,
                                                                  obj: dict[str, object], tracked: bool) -> None:
    created = client.post(url, json=obj)
    assert created.status_code == 201, created.text
    assert ("generation" in created.json()["metadata"]) is tracked
    if not tracked:
        return
    body = created.json()
    body["spec"] = {"selectors": [{"cel": {"expression": "true"}}]}
    updated = client.put(f"{url}/gpu", json=body)
    assert updated.status_code == 200, updated.text
    assert updated.json()["metadata"]["generation"] == 2


def test_an_object_view_reads_a_field_of_the_wrong_json_type_as_absent() -> None:
    malformed = ObjectView({"metadata": ["not", "a", "map"], "spec": None, "status": "x"})
    assert (malformed.name, malformed.finalizers, malformed.spec, malformed.status) == ("", [], {}, {})
    pod = ObjectView({"metadata": {"name": "a", "namespace": "ns", "finalizers": "x", "deletionTimestamp": ""}})
    assert (pod.key, pod.finalizers, pod.deletion_timestamp) == ("ns/a", [], None)
    assert ObjectView({"metadata": {"name": "node-1"}}).key == "node-1"  # cluster-scoped: the name alone


def test_a_kind_of_a_new_version_is_discovered_and_shown_in_its_own_version_from_its_row_alone(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The path a scheduling.k8s.io/v1alpha1 kind takes: its row (with the generic strategy) is all discovery and
    routing need; it is stored in its first version, so it is shown as stored."""
    from dralloc.server.http import discovery, routing

    row = kinds.Resource("workloads", "Workload", True, group=kinds.SCHEDULING_GROUP, versions=("v1alpha1",))
    monkeypatch.setitem(kinds.SCHEDULING, "workloads", row)
    group = discovery.api_group(kinds.SCHEDULING_GROUP)
    assert group is not None and [v["version"] for v in group["versions"]] == ["v1", "v1alpha1"]
    assert group["preferredVersion"]["version"] == "v1"
    listed = discovery.resource_list("v1alpha1", kinds.SCHEDULING_GROUP)
    assert listed is not None and [r["name"] for r in listed["resources"]] == ["workloads"]
    aggregated = next(i for i in discovery.aggregated(False, "v2")["items"]
                      if i["metadata"]["name"] == kinds.SCHEDULING_GROUP)
    assert [(v["version"], [r["resource"] for r in v["resources"]]) for v in aggregated["versions"]] == [
        ("v1", ["priorityclasses"]), ("v1alpha1", ["workloads"])]
    t = routing.target(["apis", kinds.SCHEDULING_GROUP, "v1alpha1", "namespaces", "ns", "workloads", "w"])
    stored = {"apiVersion": "scheduling.k8s.io/v1alpha1", "kind": "Workload", "metadata": {"name": "w"}}
    assert t.resource is row and t.present(stored) is stored
