"""Expand the compact table cases of tests/allocator/cases/*.yaml into real objects."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dralloc.api import codec

CASES = Path(__file__).resolve().parent / "cases"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: the case files are read at collection
V1 = "resource.k8s.io/v1"


def _exact(r: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"deviceClassName": r["class"]}
    if "mode" in r:
        out["allocationMode"] = r["mode"]
    if "count" in r:
        out["count"] = r["count"]
    if "selectors" in r:
        out["selectors"] = [{"cel": {"expression": e}} for e in r["selectors"]]
    for key in ("adminAccess", "tolerations", "capacity"):
        if key in r:
            out[key] = r[key]
    return out


def _claim(c: dict[str, Any]) -> dict[str, Any]:
    requests = []
    for r in c.get("requests", []):
        if "firstAvailable" in r:
            requests.append({"name": r["name"], "firstAvailable": [
                {"name": s["name"], **_exact(s)} for s in r["firstAvailable"]]})
        else:
            requests.append({"name": r["name"], "exactly": _exact(r)})
    devices: dict[str, Any] = {"requests": requests}
    if "constraints" in c:
        devices["constraints"] = c["constraints"]
    if "config" in c:
        devices["config"] = c["config"]
    obj: dict[str, Any] = {"apiVersion": V1, "kind": "ResourceClaim",
                           "metadata": {"name": c["name"], "namespace": c.get("namespace", "default")},
                           "spec": {"devices": devices}}
    if "allocated" in c:
        results = []
        for line in c["allocated"]:
            parts = line.split()
            driver, pool, device = parts[1].split("/")
            res: dict[str, Any] = {"request": parts[0], "driver": driver, "pool": pool, "device": device}
            for extra in parts[2:]:
                if extra == "admin":
                    res["adminAccess"] = True
                elif extra.startswith("share="):
                    res["shareID"] = extra[len("share="):]
                elif extra.startswith("consumed:"):
                    name, _, q = extra[len("consumed:"):].partition("=")
                    res.setdefault("consumedCapacity", {})[name] = q
            results.append(res)
        obj["status"] = {"allocation": {"devices": {"results": results}}}
    return obj


def _slice(s: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {"driver": s["driver"], "pool": {"name": s["pool"], "generation": s.get("generation", 1),
                                                            "resourceSliceCount": s.get("count", 1)}}
    for key in ("nodeName", "allNodes", "nodeSelector", "perDeviceNodeSelection", "sharedCounters"):
        if key in s:
            spec[key] = s[key]
    if "devices" in s:
        spec["devices"] = [{"name": d} if isinstance(d, str) else d for d in s["devices"]]
    return {"apiVersion": V1, "kind": "ResourceSlice", "metadata": {"name": s["name"]}, "spec": spec}


def _class(c: dict[str, Any]) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if "driver" in c:
        spec["selectors"] = [{"cel": {"expression": f'device.driver == "{c["driver"]}"'}}]
    if "config" in c:
        spec["config"] = c["config"]
    return {"apiVersion": V1, "kind": "DeviceClass", "metadata": {"name": c["name"]}, "spec": spec}


def expand(obj: dict[str, Any]) -> dict[str, Any]:
    kind = obj["kind"]
    if "apiVersion" in obj:
        return obj
    if kind == "DeviceClass":
        return _class(obj)
    if kind == "ResourceSlice":
        return _slice(obj)
    if kind == "ResourceClaim":
        return _claim(obj)
    if kind == "Node":
        return {"apiVersion": "v1", "kind": "Node",
                "metadata": {"name": obj["name"], "labels": obj.get("labels") or {}}}
    raise ValueError(kind)


def load_cases() -> list[dict[str, Any]]:
    cases = []
    for path in sorted(CASES.glob("*.yaml")):
        for case in yaml.load(path.read_text(), Loader=_LOADER):  # noqa: S506 (a safe loader)
            case["file"] = path.name
            cases.append(case)
    return cases


def objects_of(case: dict[str, Any]) -> list[Any]:
    docs = [expand(o) for o in case["objects"]]
    if not any(d["kind"] == "Node" for d in docs):
        docs.append(expand({"kind": "Node", "name": "node-1"}))
    return [codec.decode(d) for d in docs]


def describe(result: Any) -> list[str]:
    out = []
    for r in result.devices.results or ():
        line = f"{r.request} {r.driver}/{r.pool}/{r.device}"
        if r.admin_access:
            line += " admin"
        if r.share_id:
            line += " share"
        for name, q in sorted((r.consumed_capacity or {}).items()):
            line += f" consumed:{name}={q}"
        out.append(line)
    return out
