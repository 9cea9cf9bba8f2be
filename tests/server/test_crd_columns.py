"""A custom resource's printer columns: JSONPath cells typed as their column says."""

from __future__ import annotations

from dralloc.server.crds.columns import cells, column_definitions, find

CERTIFICATE = {"metadata": {"name": "web", "creationTimestamp": "2020-01-01T00:00:00Z"},
               "spec": {"secretName": "web-tls", "replicas": 2.0, "ports": [{"port": 80}, {"port": 443}]},
               "status": {"conditions": [{"type": "Issuing", "status": "False"},
                                         {"type": "Ready", "status": "True", "observed": 3}]}}


def test_json_paths_as_kubectl_reads_them() -> None:
    assert find(CERTIFICATE, '.status.conditions[?(@.type=="Ready")].status') == ["True"]
    assert find(CERTIFICATE, ".status.conditions[?(@.observed==3)].type") == ["Ready"]
    assert find(CERTIFICATE, ".spec.ports[1].port") == [443]
    assert find(CERTIFICATE, ".spec.ports[*].port") == [80, 443]
    assert find(CERTIFICATE, "{.spec['secretName']}") == ["web-tls"]
    assert find(CERTIFICATE, ".spec.missing") == [] and find(CERTIFICATE, ".spec.ports[7]") == []


def test_cells_are_typed_by_their_column() -> None:
    columns = [{"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
               {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
               {"name": "Ports", "type": "string", "jsonPath": ".spec.ports"},
               {"name": "Secret", "type": "string", "jsonPath": ".spec.nothing"},
               {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
               {"name": "Bad", "type": "date", "jsonPath": ".spec.secretName"}]
    row = cells(CERTIFICATE, columns)
    assert row[:5] == ["web", "True", 2, '[{"port":80},{"port":443}]', None]
    assert row[5].endswith(("y", "d")) and row[6] == "<invalid>"
    definitions = column_definitions(columns)
    assert [c["name"] for c in definitions] == ["Name", "Ready", "Replicas", "Ports", "Secret", "Age", "Bad"]
    assert definitions[2]["description"] == "Custom resource definition column (in JSONPath format): .spec.replicas"
