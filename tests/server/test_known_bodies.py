"""A create whose body's typed decoding found no field the kind's schema lacks is not walked for such fields
again; with fieldValidation=Ignore (the decoding reports nothing then) the walk still drops them."""

from __future__ import annotations

from typing import Any

from cluster import api_client

from dralloc.server.registry import workloads

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def _deployment(name: str, **spec: Any) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}}, "template": template, **spec}}


def test_a_body_known_to_have_no_unknown_field_is_not_walked_for_them_again(monkeypatch: Any) -> None:
    client = api_client()
    walks: list[Any] = []
    real = workloads.drop_unknown_fields

    def counted(obj: Any) -> None:
        walks.append(obj)
        real(obj)

    monkeypatch.setattr(workloads, "drop_unknown_fields", counted)
    made = client.post(DEPLOYMENTS, json=_deployment("known"))
    assert made.status_code == 201 and walks == []
    assert made.json()["spec"]["replicas"] == 1  # (the defaults still)
    ignored = client.post(f"{DEPLOYMENTS}?fieldValidation=Ignore", json=_deployment("ignored", bogus=1))
    assert ignored.status_code == 201 and len(walks) == 1 and "bogus" not in ignored.json()["spec"]
    warned = client.post(DEPLOYMENTS, json=_deployment("warned", bogus=1))
    assert warned.status_code == 201 and "bogus" not in warned.json()["spec"]
    assert "spec.bogus" in warned.headers.get("warning", "")
