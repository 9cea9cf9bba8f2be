"""A pod's pod-level ``spec.resources`` as kube-apiserver 1.36's decoding defaults it (SetDefaults_Pod with
PodLevelResources, on by default): hugepages limits from the containers', then, when the pod sets limits, the
requests it leaves out from what its containers request together (cpu, memory) or from its limits."""

from __future__ import annotations

import copy
import warnings
from typing import Any

from cluster import api_client
from hypothesis import given, settings
from hypothesis import strategies as st

from dralloc.api.codec import decode
from dralloc.api.quantity import Quantity
from dralloc.resources.fit import container_requests
from dralloc.server.registry.core_defaults import default_pod_spec
from dralloc.server.registry.pods import decode_pod_defaults

warnings.filterwarnings("ignore", message="Using `httpx`")


def container(name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None,
              **fields: Any) -> dict[str, Any]:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    return {"name": name, "image": "app:1", "resources": resources, **fields}


def pod(resources: dict[str, Any] | None, *containers: dict[str, Any], init: tuple[dict[str, Any], ...] = ()
        ) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": list(containers)}
    if init:
        spec["initContainers"] = list(init)
    if resources is not None:
        spec["resources"] = resources
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": spec}


def defaulted(obj: dict[str, Any]) -> Any:
    obj = copy.deepcopy(obj)
    decode_pod_defaults(obj)
    return obj["spec"].get("resources")


def test_with_pod_limits_the_missing_requests_come_from_the_containers_and_else_from_the_limits() -> None:
    obj = pod({"limits": {"cpu": "2", "memory": "1Gi"}},
              container("a", {"cpu": "500m"}), container("b", {"cpu": "250m"}))
    assert defaulted(obj) == {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "750m", "memory": "1Gi"}}


def test_a_request_the_pod_sets_is_kept() -> None:
    obj = pod({"limits": {"cpu": "2"}, "requests": {"cpu": "1"}}, container("a", {"cpu": "500m"}))
    assert defaulted(obj) == {"limits": {"cpu": "2"}, "requests": {"cpu": "1"}}


def test_a_container_limit_alone_counts_as_its_request() -> None:
    obj = pod({"limits": {"memory": "2Gi"}}, container("a", limits={"memory": "512Mi"}))
    assert defaulted(obj)["requests"] == {"memory": "512Mi"}


def test_init_containers_raise_the_requests_and_sidecars_add_to_them() -> None:
    sidecar = container("proxy", {"cpu": "200m"}, restartPolicy="Always")
    setup = container("setup", {"cpu": "400m"})
    obj = pod({"limits": {"cpu": "4"}}, container("app", {"cpu": "300m"}), init=(sidecar, setup))
    # app + sidecar = 500m; the setup container runs beside the sidecar started before it: 600m
    assert defaulted(obj)["requests"] == {"cpu": "600m"}
    big_first = pod({"limits": {"cpu": "4"}}, container("app", {"cpu": "300m"}),
                    init=(container("setup", {"cpu": "1"}), sidecar))
    assert defaulted(big_first)["requests"] == {"cpu": "1"}


def test_without_pod_limits_no_request_is_defaulted() -> None:
    obj = pod({"requests": {"cpu": "1"}}, container("a", {"cpu": "500m", "memory": "1Gi"}))
    assert defaulted(obj) == {"requests": {"cpu": "1"}}
    assert defaulted(pod(None, container("a", {"cpu": "500m"}))) is None
    assert defaulted(pod({}, container("a", {"cpu": "500m"}))) == {}


def test_hugepages_limits_come_from_the_containers_and_then_default_the_request() -> None:
    obj = pod({"requests": {"cpu": "1"}}, container("a", limits={"hugepages-2Mi": "4Mi"}),
              container("b", limits={"hugepages-2Mi": "2Mi", "example.com/gpu": "1"}))
    assert defaulted(obj) == {"requests": {"cpu": "1", "hugepages-2Mi": "6Mi"}, "limits": {"hugepages-2Mi": "6Mi"}}
    asked = pod({"requests": {"hugepages-2Mi": "2Mi"}}, container("a", limits={"hugepages-2Mi": "4Mi"}))
    assert defaulted(asked) == {"requests": {"hugepages-2Mi": "2Mi"}}  # a pod-level hugepages request: no limit


def test_a_template_gets_no_pod_level_defaults() -> None:
    spec = pod({"limits": {"cpu": "2"}}, container("a", {"cpu": "500m"}))["spec"]
    default_pod_spec(spec)
    assert spec["resources"] == {"limits": {"cpu": "2"}}


def test_a_value_that_is_not_a_quantity_is_left_for_validation() -> None:
    obj = pod({"limits": {"cpu": "2"}}, container("a", {"cpu": "lots"}))
    assert defaulted(obj) == {"limits": {"cpu": "2"}}


def test_the_server_stores_the_defaulted_requests_and_their_writer_owns_them() -> None:
    http = api_client("ns")
    body = pod({"limits": {"cpu": "2"}}, container("a", {"cpu": "500m"}))
    r = http.post("/api/v1/namespaces/ns/pods", json=body, headers={"user-agent": "kubectl-create/v1.36.0"})
    assert r.status_code == 201, r.text
    assert r.json()["spec"]["resources"] == {"limits": {"cpu": "2"}, "requests": {"cpu": "500m"}}
    [entry] = r.json()["metadata"]["managedFields"]
    assert entry["fieldsV1"]["f:spec"]["f:resources"] == {".": {}, "f:limits": {".": {}, "f:cpu": {}},
                                                         "f:requests": {".": {}, "f:cpu": {}}}


_millis = st.integers(min_value=1, max_value=4000).map(lambda m: f"{m}m")
_containers = st.lists(st.tuples(_millis, st.booleans()), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(_containers, st.lists(st.tuples(_millis, st.booleans()), max_size=4))
def test_the_defaulted_cpu_request_is_what_the_scheduler_counts_for_the_containers(
        apps: list[tuple[str, bool]], inits: list[tuple[str, bool]]) -> None:
    # (a value as a request or as a limit alone; an init container a sidecar or not)
    def make(i: int, value: str, flag: bool, kind: str) -> dict[str, Any]:
        if kind == "app":
            return container(f"app-{i}", None if flag else {"cpu": value}, {"cpu": value} if flag else None)
        init = container(f"init-{i}", {"cpu": value})
        if flag:
            init["restartPolicy"] = "Always"
        return init
    obj = pod({"limits": {"cpu": "100"}}, *(make(i, v, f, "app") for i, (v, f) in enumerate(apps)),
              init=tuple(make(i, v, f, "init") for i, (v, f) in enumerate(inits)))
    requested = defaulted(obj)["requests"]["cpu"]
    counted = container_requests(decode(obj))["cpu"]
    assert Quantity(requested) == counted
