"""DRA admin access (KEP-5018): only in namespaces labelled resource.kubernetes.io/admin-access=true."""

from __future__ import annotations

import copy
import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

REFUSED = ("Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: true` label on "
           "the containing namespace")
SPEC = {"devices": {"requests": [{"name": "plain", "exactly": {"deviceClassName": "gpu"}},
                                 {"name": "watch", "exactly": {"deviceClassName": "gpu", "adminAccess": True}}]}}


@pytest.fixture
def client() -> TestClient:
    http = api_client("plain")
    ns = {"apiVersion": "v1", "kind": "Namespace",
          "metadata": {"name": "admins", "labels": {"resource.kubernetes.io/admin-access": "true"}}}
    assert http.post("/api/v1/namespaces", json=ns).status_code == 201
    return http


def claims(ns: str) -> str:
    return f"/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims"


def claim(name: str, spec: dict[str, Any] = SPEC) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name}, "spec": spec}


def test_an_admin_access_request_needs_the_namespace_label(client: TestClient) -> None:
    r = client.post(claims("plain"), json=claim("c"))
    assert r.status_code == 422
    assert r.json()["message"] == f'ResourceClaim.resource.k8s.io "c" is invalid: spec.devices.requests[1].adminAccess: ' \
                                  f"{REFUSED}"
    assert client.post(claims("plain"), params={"dryRun": "All"}, json=claim("c")).status_code == 422
    assert client.post(claims("admins"), json=claim("c")).status_code == 201
    no_admin = {"devices": {"requests": SPEC["devices"]["requests"][:1]}}
    assert client.post(claims("plain"), json=claim("c", no_admin)).status_code == 201


def test_a_template_asking_for_admin_access_needs_the_label_too(client: TestClient) -> None:
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "t"},
                "spec": {"spec": SPEC}}
    r = client.post("/apis/resource.k8s.io/v1/namespaces/plain/resourceclaimtemplates", json=template)
    assert r.status_code == 422 and "spec.devices.requests[1].adminAccess: Forbidden" in r.json()["message"]
    assert client.post("/apis/resource.k8s.io/v1/namespaces/admins/resourceclaimtemplates",
                       json=template).status_code == 201


def test_an_allocation_granting_admin_access_needs_the_label(client: TestClient) -> None:
    plain = client.post(claims("plain"), json=claim("c", {"devices": {"requests": SPEC["devices"]["requests"][:1]}}))
    body = copy.deepcopy(plain.json())
    body["status"] = {"allocation": {"devices": {"results": [
        {"request": "plain", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0", "adminAccess": True}]}}}
    r = client.put(f"{claims('plain')}/c/status", json=body)
    assert r.status_code == 422 and "status.allocation.devices.results[0].adminAccess: Forbidden" in r.json()["message"]
    admin = client.post(claims("admins"), json=claim("c")).json()
    admin["status"] = {"allocation": {"devices": {"results": [
        {"request": "plain", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0"},
        {"request": "watch", "driver": "gpu.example.com", "pool": "p", "device": "gpu-0", "adminAccess": True}]}}}
    assert client.put(f"{claims('admins')}/c/status", json=admin).status_code == 200
