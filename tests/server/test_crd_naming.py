"""kube-apiserver's naming and establishing controllers: a CRD asking for a name another CRD of its group has
accepted is not named nor established, nor served, until the name is free; an established CRD keeps being
served under the names it had; a CRD of a built-in group leaves the built-in resource served."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from served import eventually  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
SCHEMA = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def crd(plural: str, kind: str, group: str = "example.com", **names: Any) -> dict[str, Any]:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.{group}"},
            "spec": {"group": group, "scope": "Namespaced", "names": {"plural": plural, "kind": kind, **names},
                     "versions": [{"name": "v1", "served": True, "storage": True,
                                   "schema": {"openAPIV3Schema": SCHEMA}}]}}


def conditions(client: TestClient, name: str) -> dict[str, tuple[str, str, str]]:
    got = client.get(f"{CRDS}/{name}").json()
    return {c["type"]: (c["status"], c["reason"], c["message"]) for c in got["status"].get("conditions") or ()}


def served(client: TestClient, plural: str) -> bool:
    return client.get(f"/apis/example.com/v1/namespaces/ns/{plural}").status_code == 200


def discovered(client: TestClient) -> list[str]:
    found = client.get("/apis/example.com/v1")
    return sorted(r["name"] for r in found.json()["resources"]) if found.status_code == 200 else []


@pytest.fixture
def client() -> TestClient:
    http = api_client("ns")
    assert http.post(CRDS, json=crd("widgets", "Widget", shortNames=["wd"])).status_code == 201
    return http


def test_a_crd_is_named_and_established() -> None:
    http = api_client("ns")
    created = http.post(CRDS, json=crd("widgets", "Widget", shortNames=["wd"], categories=["all"]))
    # the create's answer is the CRD before the controllers' status (as kube-apiserver answers it)
    assert created.json()["status"] == {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]}
    got = http.get(f"{CRDS}/widgets.example.com").json()
    assert got["status"]["acceptedNames"] == {"plural": "widgets", "singular": "widget", "shortNames": ["wd"],
                                              "kind": "Widget", "listKind": "WidgetList", "categories": ["all"]}
    assert conditions(http, "widgets.example.com") == {
        "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
        "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted")}


def test_a_kind_in_use_is_not_accepted_until_it_is_free(client: TestClient) -> None:
    assert client.post(CRDS, json=crd("gadgets", "Widget")).status_code == 201
    assert conditions(client, "gadgets.example.com") == {
        "NamesAccepted": ("False", "ListKindConflict", '"WidgetList" is already in use'),
        "Established": ("False", "NotAccepted", "not all names are accepted")}
    accepted = client.get(f"{CRDS}/gadgets.example.com").json()["status"]["acceptedNames"]
    # what it could have (its singular, defaulted from its kind, is the other's too)
    assert accepted == {"plural": "gadgets", "kind": ""}
    assert not served(client, "gadgets") and discovered(client) == ["widgets"]
    assert client.delete(f"{CRDS}/widgets.example.com").status_code in (200, 202)
    eventually(lambda: conditions(client, "gadgets.example.com").get("Established", ("",))[0] == "True")
    assert conditions(client, "gadgets.example.com") == {
        "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
        "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted")}
    assert served(client, "gadgets") and discovered(client) == ["gadgets"]


def test_plurals_singulars_and_short_names_share_one_namespace(client: TestClient) -> None:
    assert client.post(CRDS, json=crd("wd", "Wd", singular="wdd")).status_code == 201  # another's short name
    assert conditions(client, "wd.example.com")["NamesAccepted"] == ("False", "PluralConflict",
                                                                      '"wd" is already in use')
    assert client.post(CRDS, json=crd("things", "Thing", singular="widget")).status_code == 201
    assert conditions(client, "things.example.com")["NamesAccepted"] == ("False", "SingularConflict",
                                                                          '"widget" is already in use')
    assert client.post(CRDS, json=crd("bits", "Bit", shortNames=["widgets", "bt", "wd"])).status_code == 201
    assert conditions(client, "bits.example.com")["NamesAccepted"] == (
        "False", "ShortNamesConflict", '["widgets" is already in use, "wd" is already in use]')
    # another group's names are its own
    assert client.post(CRDS, json=crd("widgets", "Widget", group="other.example.com")).status_code == 201
    assert conditions(client, "widgets.other.example.com")["Established"][0] == "True"


def test_an_established_crd_keeps_its_names_when_it_asks_for_one_in_use(client: TestClient) -> None:
    assert client.post(CRDS, json=crd("gizmos", "Gizmo", shortNames=["gz"])).status_code == 201
    gizmos = client.get(f"{CRDS}/gizmos.example.com").json()
    gizmos["spec"]["names"]["shortNames"] = ["gz", "wd"]
    assert client.put(f"{CRDS}/gizmos.example.com", json=gizmos).status_code == 200
    assert conditions(client, "gizmos.example.com") == {
        "NamesAccepted": ("False", "ShortNamesConflict", '"wd" is already in use'),
        "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted")}
    status = client.get(f"{CRDS}/gizmos.example.com").json()["status"]
    assert status["acceptedNames"]["shortNames"] == ["gz"] and served(client, "gizmos")
    gizmo = next(r for r in client.get("/apis/example.com/v1").json()["resources"] if r["name"] == "gizmos")
    assert gizmo["shortNames"] == ["gz"]
    gizmos = client.get(f"{CRDS}/gizmos.example.com").json()
    gizmos["spec"]["names"]["shortNames"] = ["gz", "gzm"]
    assert client.put(f"{CRDS}/gizmos.example.com", json=gizmos).status_code == 200
    assert client.get(f"{CRDS}/gizmos.example.com").json()["status"]["acceptedNames"]["shortNames"] == ["gz", "gzm"]
    assert conditions(client, "gizmos.example.com")["NamesAccepted"][0] == "True"


def test_a_crd_of_a_built_in_resource_leaves_the_built_in_served() -> None:
    http = api_client("ns")
    slices = crd("resourceslices", "ResourceSlice", group="resource.k8s.io")
    slices["spec"]["scope"] = "Cluster"
    slices["metadata"]["annotations"] = {"api-approved.kubernetes.io": "unapproved, testing"}
    built_in = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "s"},
                "spec": {"driver": "gpu.example.com", "pool": {"name": "p", "generation": 1,
                                                                "resourceSliceCount": 1},
                         "nodeName": "n", "devices": []}}
    assert http.post("/apis/resource.k8s.io/v1/resourceslices", json=built_in).status_code == 201
    assert http.post(CRDS, json=slices).status_code == 201
    # named and established (the naming controller looks at CRDs only), yet kube-apiserver's own handler
    # answers the path first
    assert conditions(http, "resourceslices.resource.k8s.io")["Established"][0] == "True"
    listed = http.get("/apis/resource.k8s.io/v1/resourceslices").json()
    assert listed["kind"] == "ResourceSliceList" and [i["metadata"]["name"] for i in listed["items"]] == ["s"]
    resources = [r for r in http.get("/apis/resource.k8s.io/v1").json()["resources"] if r["name"] == "resourceslices"]
    assert len(resources) == 1
    # deleting the CRD deletes none of the built-in resource's objects
    assert http.delete(f"{CRDS}/resourceslices.resource.k8s.io").status_code in (200, 202)
    eventually(lambda: http.get(f"{CRDS}/resourceslices.resource.k8s.io").status_code == 404)
    assert http.get("/apis/resource.k8s.io/v1/resourceslices/s").status_code == 200


# --- the controller's invariant, over any order of creates and deletes ----------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from dralloc.server.crds import naming  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

_WORDS = ["alpha", "beta", "gamma", "delta"]
_names = st.fixed_dictionaries({"plural": st.sampled_from(_WORDS), "singular": st.sampled_from(_WORDS),
                                "shortNames": st.lists(st.sampled_from(_WORDS), max_size=2, unique=True),
                                "kind": st.sampled_from(["Alpha", "Beta", "Gamma"]),
                                "listKind": st.sampled_from(["AlphaList", "BetaList", "Gamma"])})


def _create(store: SQLiteStore, names: dict[str, Any]) -> str | None:
    name = f"{names['plural']}.example.com"
    body = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "spec": {"group": "example.com", "names": names},
            "status": {"acceptedNames": {"plural": "", "kind": ""}}}
    try:
        store.create(naming.RESOURCE, "", name,
                     lambda _old, rv: {**body, "metadata": {"name": name, "resourceVersion": rv}})
    except Exception:  # (the plural's CRD exists)
        return None
    return name


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.booleans(), _names), min_size=1, max_size=8))
def test_no_two_crds_of_a_group_ever_hold_one_name(steps: list[tuple[bool, dict[str, Any]]]) -> None:
    store = SQLiteStore(":memory:")
    for delete, names in steps:
        existing = sorted(str(c["metadata"]["name"]) for c in store.list(naming.RESOURCE)[0])
        if delete and existing:
            gone = existing[len(names["plural"]) % len(existing)]
            store.delete(naming.RESOURCE, "", gone)
            naming.reconcile(store, "example.com", gone)
        elif (created := _create(store, names)) is not None:
            naming.reconcile(store, "example.com", created)
        crds = store.list(naming.RESOURCE)[0]
        resources: list[str] = []
        kinds: list[str] = []
        for crd in crds:
            accepted = crd["status"]["acceptedNames"]
            own = {accepted.get("plural"), accepted.get("singular"), *accepted.get("shortNames", ())} - {"", None}
            resources += own
            kinds += list({accepted.get("kind"), accepted.get("listKind")} - {"", None})
            conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
            # established exactly when every name it asked for was accepted (nothing here renames a CRD)
            assert (conditions["Established"] == "True") == (conditions["NamesAccepted"] == "True")
            if conditions["NamesAccepted"] == "True":
                assert naming._same(accepted, crd["spec"]["names"])
        assert len(resources) == len(set(resources)) and len(kinds) == len(set(kinds))
