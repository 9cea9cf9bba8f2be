"""LimitRanges: written with decoding's defaults and validated as kube-apiserver does, and the LimitRanger
admission of pods (default requests and limits, then min/max/ratio bounds with upstream's texts)."""

from __future__ import annotations

from typing import Any

import pytest
from cluster import api_client
from starlette.testclient import TestClient

LIMITS = "/api/v1/namespaces/default/limitranges"
PODS = "/api/v1/namespaces/default/pods"


def limit_range(name: str = "lr", *items: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(items)}}


def pod(name: str, *containers: dict[str, Any], **spec: Any) -> dict[str, Any]:
    listed = list(containers) or [{"name": "main", "image": "x:1"}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": listed, **spec}}


def container(name: str = "main", **resources: Any) -> dict[str, Any]:
    return {"name": name, "image": "x:1", "resources": resources}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def test_a_container_item_is_defaulted_as_decoding_defaults_it(client: TestClient) -> None:
    r = client.post(LIMITS, json=limit_range("lr", {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"},
                                                    "default": {"cpu": "1"}, "min": {"memory": "64Mi"}}))
    assert r.status_code == 201, r.text
    [item] = r.json()["spec"]["limits"]
    assert item["default"] == {"cpu": "1", "memory": "1Gi"}  # the max where no default is given
    assert item["defaultRequest"] == {"cpu": "1", "memory": "1Gi"}  # the default, else the min


@pytest.mark.parametrize("items,message", [
    ([{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}],
     'spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than max value 1'),
    ([{"type": "Container", "default": {"cpu": "2"}, "max": {"cpu": "1"}}],
     'spec.limits[0].default[cpu]: Invalid value: "1": default value 2 is greater than max value 1'),
    ([{"type": "Container", "defaultRequest": {"cpu": "2"}, "default": {"cpu": "1"}}],
     'spec.limits[0].defaultRequest[cpu]: Invalid value: "2": default request value 2 is greater than default limit '
     "value 1"),
    ([{"type": "Pod", "defaultRequest": {"cpu": "1"}}],
     "spec.limits[0].defaultRequest: Forbidden: may not be specified when `type` is 'Pod'"),
    ([{"type": "Container", "maxLimitRequestRatio": {"cpu": "500m"}}],
     'spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: "500m": ratio 500m is less than 1'),
    ([{"type": "Node"}], 'spec.limits[0].type: Invalid value: "Node": must be a standard limit type or fully '
                         "qualified"),
    ([{"type": "Pod"}, {"type": "Pod"}], 'spec.limits[1].type: Duplicate value: "Pod"'),
])
def test_limit_ranges_are_validated_with_upstreams_texts(client: TestClient, items: list[dict[str, Any]],
                                                         message: str) -> None:
    r = client.post(LIMITS, json=limit_range("bad", *items))
    assert r.status_code == 422 and r.json()["message"] == f'LimitRange "bad" is invalid: {message}'


def test_a_pod_gets_its_namespaces_default_requests_and_limits(client: TestClient) -> None:
    client.post(LIMITS, json=limit_range("lr", {"type": "Container", "default": {"cpu": "500m"},
                                                "defaultRequest": {"cpu": "100m", "memory": "64Mi"}}))
    created = client.post(PODS, json=pod("p", container("main"), initContainers=[container("init")])).json()
    main, init = created["spec"]["containers"][0], created["spec"]["initContainers"][0]
    assert main["resources"] == {"limits": {"cpu": "500m"}, "requests": {"cpu": "100m", "memory": "64Mi"}}
    assert init["resources"] == main["resources"]
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container main; cpu limit for container main; "
        "cpu, memory request for init container init; cpu limit for init container init")
    # a limit of its own is also its request (decoding's default), not the range's default request
    own = client.post(PODS, json=pod("own", container(limits={"cpu": "2"}))).json()
    assert own["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "2"},
                                                         "requests": {"cpu": "2", "memory": "64Mi"}}


@pytest.mark.parametrize("item,resources,why", [
    ({"type": "Container", "max": {"cpu": "1"}}, {"limits": {"cpu": "2"}},
     "maximum cpu usage per Container is 1, but limit is 2"),
    ({"type": "Container", "min": {"cpu": "200m"}, "default": {"cpu": "1"}}, {"requests": {"cpu": "100m"}},
     "minimum cpu usage per Container is 200m, but request is 100m"),
    ({"type": "Container", "maxLimitRequestRatio": {"memory": "2"}},
     {"requests": {"memory": "1Gi"}, "limits": {"memory": "4Gi"}},
     "memory max limit to request ratio per Container is 2, but provided ratio is 4.000000"),
    ({"type": "Pod", "max": {"cpu": "1"}}, {"requests": {"cpu": "500m"}},
     "maximum cpu usage per Pod is 1.  No limit is specified"),
])
def test_a_pod_outside_the_bounds_is_forbidden(client: TestClient, item: dict[str, Any], resources: dict[str, Any],
                                               why: str) -> None:
    assert client.post(LIMITS, json=limit_range("lr", item)).status_code == 201
    r = client.post(PODS, json=pod("big", container(**resources)))
    assert r.status_code == 403 and r.json()["reason"] == "Forbidden"
    assert r.json()["message"] == f'pods "big" is forbidden: {why}'


def test_pod_bounds_count_the_containers_together(client: TestClient) -> None:
    client.post(LIMITS, json=limit_range("lr", {"type": "Pod", "max": {"cpu": "1"}}))
    two = pod("two", container("a", limits={"cpu": "600m"}), container("b", limits={"cpu": "600m"}))
    r = client.post(PODS, json=two)
    assert r.status_code == 403
    assert r.json()["message"] == 'pods "two" is forbidden: maximum cpu usage per Pod is 1, but limit is 1200m'
    assert client.post(PODS, json=pod("one", container("a", limits={"cpu": "600m"}))).status_code == 201
