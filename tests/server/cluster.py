"""An in-process `dralloc serve` (its API on a SQLite store in memory) and its controllers, driven one pass at
a time, for the controller tests."""

from __future__ import annotations

import warnings
from typing import Any

warnings.filterwarnings("ignore", message="Using `httpx`")
from starlette.testclient import TestClient  # noqa: E402

from dralloc.server import create_app  # noqa: E402
from dralloc.server.controllers import ControllerManager, Options  # noqa: E402
from dralloc.store import SQLiteStore  # noqa: E402

R = "/apis/resource.k8s.io/v1"
NS = "/api/v1/namespaces/default"

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
        "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}}
CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}}
TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu", "namespace": "default"},
            "spec": {"metadata": {"labels": {"team": "ml"}},
                     "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}}


def slice_(devices: int = 1, taints: list[dict[str, Any]] | None = None, name: str = "node-1-gpu") -> dict[str, Any]:
    devs = [{"name": f"gpu-{i}", **({"taints": taints} if taints else {})} for i in range(devices)]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
                     "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1}, "devices": devs}}


def pod(name: str, claim: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    claim = claim or {"resourceClaimTemplateName": "one-gpu"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "main", "image": "x:1", "resources": {"claims": [{"name": "gpu"}]}}],
                     "resourceClaims": [{"name": "gpu", **claim}], "terminationGracePeriodSeconds": 0, **spec}}


def make_namespaces(http: TestClient, *names: str) -> TestClient:
    """Create these namespaces (a create in a namespace that does not exist is refused, as upstream)."""
    for name in names:
        r = http.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        assert r.status_code == 201, r.text
    return http


def api_client(*namespaces: str, **app_options: Any) -> TestClient:
    """An in-process API server on an in-memory store (``create_app`` options), with these namespaces made."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return make_namespaces(TestClient(create_app(SQLiteStore(":memory:"), **app_options)), *namespaces)


class Cluster:
    def __init__(self, **options: Any) -> None:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.app = create_app(SQLiteStore(":memory:"))
        self.http = TestClient(self.app)
        self.store = self.app.api.store
        self.manager = ControllerManager(self.store, Options(**options))

    def post(self, path: str, obj: dict[str, Any]) -> dict[str, Any]:
        r = self.http.post(path, json=obj)
        assert r.status_code == 201, r.text
        return r.json()

    def priority_class(self, value: int, preemption_policy: str | None = None) -> str:
        """The name of a PriorityClass of this value (and policy), made if missing: a pod's priority comes from
        its class, as kube-apiserver's Priority admission gives it."""
        name = f"priority-{value}" + (f"-{preemption_policy.lower()}" if preemption_policy else "")
        if self.http.get(f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}").status_code == 404:
            pc: dict[str, Any] = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                  "metadata": {"name": name}, "value": value}
            if preemption_policy:
                pc["preemptionPolicy"] = preemption_policy
            self.post("/apis/scheduling.k8s.io/v1/priorityclasses", pc)
        return name

    def settle(self, passes: int = 6) -> None:
        """Passes as the manager's thread runs them: again while the last one changed something."""
        dirty = self.manager.run_once(force=False)
        for _ in range(passes):
            if not dirty:
                return
            dirty = self.manager.run_once(force=True)
        raise AssertionError("the controllers did not settle")

    def get(self, resource: str, name: str, namespace: str = "default") -> dict[str, Any]:
        return self.store.get(resource, namespace, name)

    def claims(self) -> list[dict[str, Any]]:
        return self.store.list("resourceclaims")[0]

    def pods(self) -> list[dict[str, Any]]:
        return self.store.list("pods")[0]

    def events(self, reason: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.store.list("events")[0] if reason is None or e["reason"] == reason]


def gpu_cluster() -> Cluster:
    """A cluster with node-1, the ``gpu`` DeviceClass and the ``one-gpu`` claim template (no slice yet)."""
    c = Cluster()
    c.post("/api/v1/nodes", NODE)
    c.post(f"{R}/deviceclasses", CLASS)
    c.post(f"{R}/namespaces/default/resourceclaimtemplates", TEMPLATE)
    return c
