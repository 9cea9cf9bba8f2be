"""End to end with the real kubectl and the Python client: a real CRD (NVIDIA's ComputeDomain) applied, waited
for, its custom resources applied, listed by plural and short name with their printer columns, explained,
refused when invalid, scaled, and deleted with their CRD."""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from served import KUBECTL, Server

pytestmark = pytest.mark.e2e

COMPUTE_DOMAIN_CRD = Path(__file__).parent / "data" / "computedomains.resource.nvidia.com.yaml"
COMPUTE_DOMAIN = """apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: imex, namespace: default}
spec:
  numNodes: 2
  channel:
    resourceClaimTemplate: {name: imex-channel}
"""

# A CRD of printer columns, a short name and the scale subresource
SHARDS = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: shards.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: shards, kind: Shard, shortNames: [sh]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources:
      status: {}
      scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}
    additionalPrinterColumns:
    - {name: Replicas, type: integer, jsonPath: .spec.replicas}
    - {name: Zone, type: string, jsonPath: .spec.zone, priority: 1}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              replicas: {type: integer, minimum: 0, maximum: 10, description: How many shards.}
              zone: {type: string}
          status:
            type: object
            properties:
              replicas: {type: integer}
"""

Kubectl = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Server, Path]]:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    server = Server(tmp_path, tmp_path / "db.sqlite")
    try:
        yield server, server.kubeconfig(tmp_path / "kubeconfig")
    finally:
        server.stop()


@pytest.fixture
def kubectl(served: tuple[Server, Path], tmp_path: Path) -> Kubectl:
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(served[1])}

    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([KUBECTL or "kubectl", *args], check=False, input=stdin, capture_output=True,
                              text=True, env=env, timeout=90)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    return run


def test_a_dra_drivers_crd_is_applied_established_and_its_resources_served(kubectl: Kubectl) -> None:
    applied = kubectl("apply", "-f", str(COMPUTE_DOMAIN_CRD))
    assert "customresourcedefinition.apiextensions.k8s.io/computedomains.resource.nvidia.com created" in applied.stdout
    kubectl("wait", "--for", "condition=established", "--timeout=20s", "crd/computedomains.resource.nvidia.com")
    crds = [line.split() for line in kubectl("get", "crd").stdout.splitlines()]
    assert crds[0] == ["NAME", "CREATED", "AT"] and crds[1][0] == "computedomains.resource.nvidia.com"
    assert "computedomain.resource.nvidia.com/imex created" in kubectl("apply", "-f", "-", stdin=COMPUTE_DOMAIN).stdout
    got = kubectl("get", "computedomains", "imex", "-o", "jsonpath={.spec.channel.allocationMode}").stdout
    assert got == "Single"  # the schema's default
    listed = kubectl("get", "computedomains").stdout.splitlines()
    assert listed[0].split() == ["NAME", "AGE"] and listed[1].split()[0] == "imex"
    resources = kubectl("api-resources", "--api-group=resource.nvidia.com").stdout
    assert "computedomains" in resources and "ComputeDomain" in resources
    explained = kubectl("explain", "computedomains.spec.channel").stdout
    assert "allocationMode" in explained and "resourceClaimTemplate" in explained
    invalid = COMPUTE_DOMAIN.replace("numNodes: 2", "numNodes: -1").replace("name: imex,", "name: bad,")
    refused = kubectl("apply", "-f", "-", stdin=invalid, check=False)
    assert refused.returncode != 0
    # (kubectl words a 422 from its causes, as against kube-apiserver)
    assert refused.stderr == ('The ComputeDomain "bad" is invalid: spec.numNodes: Invalid value: -1: spec.numNodes in '
                              'body should be greater than or equal to 0\n')
    assert kubectl("delete", "crd", "computedomains.resource.nvidia.com").returncode == 0
    gone = kubectl("get", "computedomains", check=False)
    # (what kubectl says depends on whether its discovery cache still holds the resource)
    assert gone.returncode != 0 and ("NotFound" in gone.stderr or "doesn't have a resource type" in gone.stderr)


def test_printer_columns_short_names_and_kubectl_scale(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=SHARDS)
    kubectl("wait", "--for", "condition=established", "--timeout=20s", "crd/shards.example.com")
    shard = "apiVersion: example.com/v1\nkind: Shard\nmetadata: {name: s1}\nspec: {replicas: 2, zone: a, colour: red}\n"
    applied = kubectl("apply", "-f", "-", stdin=shard, check=False)
    assert applied.returncode != 0 and 'unknown field "spec.colour"' in applied.stderr  # kubectl validates strictly
    kubectl("apply", "--validate=false", "-f", "-", stdin=shard)
    rows = [line.split() for line in kubectl("get", "sh").stdout.splitlines()]
    assert rows[0] == ["NAME", "REPLICAS", "AGE"] and rows[1][:2] == ["s1", "2"]
    wide = [line.split() for line in kubectl("get", "shards", "-o", "wide").stdout.splitlines()]
    assert wide[0] == ["NAME", "REPLICAS", "ZONE", "AGE"] and wide[1][:3] == ["s1", "2", "a"]
    assert "shard.example.com/s1 scaled" in kubectl("scale", "shard/s1", "--replicas=5").stdout
    assert kubectl("get", "shard", "s1", "-o", "jsonpath={.spec.replicas}").stdout == "5"
    too_many = kubectl("scale", "shard/s1", "--replicas=50", check=False)
    assert too_many.returncode != 0 and "should be less than or equal to 10" in too_many.stderr
    patched = kubectl("patch", "shard", "s1", "--type=merge", "-p", '{"spec":{"zone":"b"}}')
    assert "patched" in patched.stdout
    again = shard.replace("colour: red", "replicas: 3").replace("replicas: 2, ", "")
    assert "shard.example.com/s1 configured" in kubectl("apply", "-f", "-", stdin=again).stdout
    server_side = kubectl("apply", "--server-side", "-f", "-", stdin=again.replace("s1", "s2"))
    assert "shard.example.com/s2 serverside-applied" in server_side.stdout
    # a List is validated by kubectl against /openapi/v2's definitions, item by item
    listed = ("apiVersion: v1\nkind: List\nitems:\n- apiVersion: example.com/v1\n  kind: Shard\n"
              "  metadata: {name: s3}\n  spec: {replicas: 1}\n")
    assert "shard.example.com/s3 created" in kubectl("apply", "-f", "-", stdin=listed).stdout
    assert kubectl("get", "shards", "-o", "name").stdout.split() == ["shard.example.com/s1", "shard.example.com/s2",
                                                                    "shard.example.com/s3"]
    kubectl("delete", "crd", "shards.example.com")
    assert kubectl("get", "shards", check=False).returncode != 0


def test_the_python_client_creates_and_watches_a_custom_resource(served: tuple[Server, Path]) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    api_client = kubernetes.config.new_client_from_config(config_file=str(served[1]))
    extensions = kubernetes.client.ApiextensionsV1Api(api_client)
    extensions.create_custom_resource_definition(kubernetes.utils.create_from_yaml.__globals__["yaml"].safe_load(SHARDS))
    custom = kubernetes.client.CustomObjectsApi(api_client)
    seen: list[Any] = []

    def watch() -> None:
        stream = kubernetes.watch.Watch()
        for event in stream.stream(custom.list_namespaced_custom_object, "example.com", "v1", "default", "shards",
                                   timeout_seconds=10):
            seen.append((event["type"], event["object"]["metadata"]["name"]))
            if len(seen) == 2:
                stream.stop()

    watcher = threading.Thread(target=watch)
    watcher.start()
    time.sleep(0.5)
    body = {"apiVersion": "example.com/v1", "kind": "Shard", "metadata": {"name": "py"}, "spec": {"replicas": 1}}
    created = custom.create_namespaced_custom_object("example.com", "v1", "default", "shards", body)
    assert created["metadata"]["uid"]
    custom.patch_namespaced_custom_object("example.com", "v1", "default", "shards", "py", {"spec": {"replicas": 3}})
    watcher.join(15)
    assert seen == [("ADDED", "py"), ("MODIFIED", "py")]


GADGETS = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, kind: Gadget, listKind: GadgetCollection}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              ports:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
"""


def gadget(*ports: str) -> str:
    return ("apiVersion: example.com/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\nspec:\n  ports:\n"
            + "".join(f"  - {p}\n" for p in ports))


def test_list_kinds_list_maps_name_conflicts_and_rule_costs_with_kubectl(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=GADGETS)
    kubectl("wait", "--for", "condition=established", "--timeout=20s", "crd/gadgets.example.com")
    # the list kind is the CRD's
    kubectl("apply", "--server-side", "--field-manager=a", "-f", "-", stdin=gadget("{name: http, port: 80}"))
    listed = kubectl("get", "--raw", "/apis/example.com/v1/namespaces/default/gadgets").stdout
    assert '"kind":"GadgetCollection"' in listed.replace(" ", "")
    # server-side apply merges the list map item by item, and names the owner of a contested item's field
    kubectl("apply", "--server-side", "--field-manager=b", "-f", "-", stdin=gadget("{name: metrics, port: 9090}"))
    names = kubectl("get", "gadget", "g", "-o", "jsonpath={.spec.ports[*].name}").stdout
    assert names == "http metrics"
    contested = kubectl("apply", "--server-side", "--field-manager=b", "-f", "-",
                        stdin=gadget("{name: http, port: 81}"), check=False)
    assert contested.returncode != 0
    assert 'conflict with "a": .spec.ports[name="http"].port' in contested.stderr
    # a second CRD of the group asking for the same kind is neither named nor established
    other = GADGETS.replace("gadgets.example.com", "widgets.example.com").replace("plural: gadgets", "plural: widgets")
    kubectl("apply", "-f", "-", stdin=other)
    reason = kubectl("get", "crd", "widgets.example.com", "-o",
                     'jsonpath={.status.conditions[?(@.type=="NamesAccepted")].reason}').stdout
    assert reason == "ListKindConflict"
    waited = kubectl("wait", "--for", "condition=established", "--timeout=1s", "crd/widgets.example.com",
                     check=False)
    assert waited.returncode != 0
    kubectl("delete", "crd", "gadgets.example.com")
    kubectl("wait", "--for", "condition=established", "--timeout=20s", "crd/widgets.example.com")
    # a rule too dear for its schema is refused with the CRD
    dear = GADGETS.replace("gadgets", "tools").replace("Gadget", "Tool").replace(
        "            type: object\n            properties:\n              ports:",
        "            type: object\n            properties:\n              tags:\n                type: array\n"
        "                items: {type: string}\n                x-kubernetes-validations:\n"
        "                - rule: self.all(t, t.matches('^[a-z]+$'))\n              ports:")
    refused = kubectl("apply", "-f", "-", stdin=dear, check=False)
    assert refused.returncode != 0 and "estimated rule cost exceeds budget by factor of" in refused.stderr
