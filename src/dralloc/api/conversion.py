"""Conversion between resource.k8s.io versions, on the JSON (dict) form.

v1 is the hub. v1beta2 has v1's shape, so only ``apiVersion`` changes. v1beta1 differs in two places:

* a device keeps its fields under ``basic`` (``{name, basic: {attributes, capacity, ...}}``);
* a request is flat (``{name, deviceClassName, selectors, allocationMode, count, adminAccess, tolerations,
  capacity, firstAvailable}``) where v1 nests the exact form under ``exactly``;
* ``spec.nodeName: ""`` and ``spec.allNodes: false`` mean unset (v1 uses nil pointers).

As upstream's conversion does, a v1beta1 request gets an ``exactly`` when *any* of its exact-form fields is set,
even alongside ``firstAvailable`` (validation then rejects the mix). Conversions work on copies of the nested
parts they change; the input dict is never mutated.
"""

from __future__ import annotations

from typing import Any

GROUP = "resource.k8s.io"
V1 = f"{GROUP}/v1"
V1BETA1 = f"{GROUP}/v1beta1"
V1BETA2 = f"{GROUP}/v1beta2"
SERVED_VERSIONS = (V1, V1BETA2, V1BETA1)

# Fields of a v1beta1 request that belong to v1's ExactDeviceRequest, in v1's field order.
_EXACT_FIELDS = (
    "deviceClassName",
    "selectors",
    "allocationMode",
    "count",
    "adminAccess",
    "tolerations",
    "capacity",
    "derivedAttributes",
)


def to_v1(obj: dict[str, Any]) -> dict[str, Any]:
    """Return the v1 form of a resource.k8s.io object of any served version (v1 itself is returned as is)."""
    version = obj.get("apiVersion")
    if version == V1 or version is None:
        return obj
    if version == V1BETA2:
        return {**obj, "apiVersion": V1}
    if version != V1BETA1:
        raise ValueError(f"unsupported apiVersion {version!r}")
    out = {**obj, "apiVersion": V1}
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return out
    if kind == "ResourceSlice":
        out["spec"] = _slice_spec_to_v1(spec)
    elif kind == "ResourceClaim":
        out["spec"] = _claim_spec_to_v1(spec)
    elif kind == "ResourceClaimTemplate":
        inner = spec.get("spec")
        if isinstance(inner, dict):
            out["spec"] = {**spec, "spec": _claim_spec_to_v1(inner)}
    return out


def from_v1(obj: dict[str, Any], version: str) -> dict[str, Any]:
    """Return the ``version`` form of a v1 object (the inverse of :func:`to_v1`)."""
    if version == V1:
        return obj
    if version == V1BETA2:
        return {**obj, "apiVersion": V1BETA2}
    if version != V1BETA1:
        raise ValueError(f"unsupported apiVersion {version!r}")
    out = {**obj, "apiVersion": V1BETA1}
    kind = obj.get("kind")
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return out
    if kind == "ResourceSlice":
        out["spec"] = _slice_spec_from_v1(spec)
    elif kind == "ResourceClaim":
        out["spec"] = _claim_spec_from_v1(spec)
    elif kind == "ResourceClaimTemplate":
        inner = spec.get("spec")
        if isinstance(inner, dict):
            out["spec"] = {**spec, "spec": _claim_spec_from_v1(inner)}
    return out


# --- ResourceSlice ----------------------------------------------------------------------------------


def _slice_spec_to_v1(spec: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    if out.get("nodeName") == "":
        del out["nodeName"]
    if out.get("allNodes") is False:
        del out["allNodes"]
    devices = spec.get("devices")
    if isinstance(devices, list):
        out["devices"] = [_device_to_v1(d) for d in devices]
    return out


def _device_to_v1(device: Any) -> Any:
    if not isinstance(device, dict) or "basic" not in device:
        return device
    basic = device["basic"]
    out = {k: v for k, v in device.items() if k != "basic"}
    if isinstance(basic, dict):
        for key, value in basic.items():
            out.setdefault(key, value)
    return out


def _slice_spec_from_v1(spec: dict[str, Any]) -> dict[str, Any]:
    out = dict(spec)
    devices = spec.get("devices")
    if isinstance(devices, list):
        out["devices"] = [_device_from_v1(d) for d in devices]
    return out


def _device_from_v1(device: Any) -> Any:
    if not isinstance(device, dict):
        return device
    # v1beta1 always carries `basic`, even when the device has nothing but a name.
    return {"name": device.get("name", ""), "basic": {k: v for k, v in device.items() if k != "name"}}


# --- ResourceClaim(Template) ------------------------------------------------------------------------


def _claim_spec_to_v1(spec: dict[str, Any]) -> dict[str, Any]:
    devices = spec.get("devices")
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return spec
    requests = [_request_to_v1(r) for r in devices["requests"]]
    return {**spec, "devices": {**devices, "requests": requests}}


def _request_to_v1(request: Any) -> Any:
    if not isinstance(request, dict):
        return request
    out = {k: v for k, v in request.items() if k not in _EXACT_FIELDS}
    exact = {k: request[k] for k in _EXACT_FIELDS if k in request and not _is_zero(request[k])}
    if exact:
        out["exactly"] = exact
    return out


def _is_zero(value: Any) -> bool:
    # Go's conversion tests each field against its zero value; nil slices are zero, empty ones are not.
    return value is None or value == "" or (value == 0 and not isinstance(value, bool))


def _claim_spec_from_v1(spec: dict[str, Any]) -> dict[str, Any]:
    devices = spec.get("devices")
    if not isinstance(devices, dict) or not isinstance(devices.get("requests"), list):
        return spec
    requests = []
    for request in devices["requests"]:
        if isinstance(request, dict) and isinstance(request.get("exactly"), dict):
            flat = {k: v for k, v in request.items() if k != "exactly"}
            flat.update(request["exactly"])
            requests.append(flat)
        else:
            requests.append(request)
    return {**spec, "devices": {**devices, "requests": requests}}
