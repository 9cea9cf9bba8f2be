"""kube-scheduler's tables for the claim DynamicResources makes for a pod's DRA-backed extended resources.

``upstream_tables/extended/`` transcribes ``extendeddynamicresources_test.go``: per case the pod, the extended
resources the node does not provide (``resources``) and the DeviceClass each maps to (``classes``), and the
requests of the claim (``wantRequests``: name, class, count) or the container-to-request mappings
(``wantMappings``) upstream expects, both sorted as upstream's test sorts them. The runner calls the function
DynamicResources' Filter builds that claim with.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from upstream_table_support import assert_tables_name_their_sources, load_table

from dralloc.api import codec
from dralloc.api.core_v1 import Pod
from dralloc.scheduler.plugins.dynamic_resources.extended_resources import requests_and_mappings

TABLES = Path(__file__).parent / "upstream_tables" / "extended"
CASES = [(path.name, raw) for path in sorted(TABLES.glob("*.yaml")) for raw in load_table(path)["cases"]]


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[f"{src}:{c['test']}/{c['name']}" for src, c in CASES])
def test_upstream_case(case: dict[str, Any]) -> None:
    pod = codec.decode({"apiVersion": "v1", "kind": "Pod", **case["pod"]}, where="Pod")
    assert isinstance(pod, Pod)
    requests, mappings = requests_and_mappings(pod, list(case["resources"]), dict(case["classes"]))
    if "wantRequests" in case:
        got = sorted(({"name": r.name, "class": r.exactly.device_class_name if r.exactly else "",
                       "count": r.exactly.count if r.exactly else 0} for r in requests), key=lambda r: str(r["name"]))
        assert got == case["wantRequests"]
    if "wantMappings" in case:
        got_maps = sorted(({"container": m.container_name, "resource": m.resource_name, "request": m.request_name}
                           for m in mappings), key=lambda m: (m["request"], m["container"]))
        assert got_maps == case["wantMappings"]


def test_every_table_names_its_source() -> None:
    assert_tables_name_their_sources(TABLES)
