"""GET pods/{name}/log (``kubectl logs``) as kube-apiserver answers it when no kubelet can be reached.

kube-apiserver does not keep logs: it finds the pod's container and node, then streams the kubelet's
``/containerLogs/{namespace}/{pod}/{container}``. Each step's failure is its answer, and dralloc runs no
kubelet, so the answer is where a cluster whose kubelets do not answer stops:

- no such pod: 404; a container that is not the pod's, or none named in a pod of several: 400 (upstream's
  ``validateContainer`` texts);
- a pod not bound to a node: an empty log (kube-apiserver streams nothing when there is no location);
- the node is gone: 404 ``nodes "x" not found``;
- the node has none of the address types kube-apiserver prefers (``--kubelet-preferred-address-types``):
  its ``no preferred addresses found; known addresses: [...]``;
- otherwise the connection to the kubelet fails: ``Get "https://ADDRESS:10250/containerLogs/...": dial tcp
  ADDRESS:10250: connect: connection refused``, the kubelet's port being the node's
  ``status.daemonEndpoints.kubeletEndpoint.Port`` (10250 when unset).

The last two are errors that are not API statuses upstream, which kube-apiserver answers as a 500 Status
with no reason (kubectl prints ``Error from server: ...``); dralloc answers the same, since that is what a
client of a cluster with unreachable kubelets must handle. Every other input error stays a 4xx.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response

from dralloc.api import gotime
from dralloc.server.context import ApiContext
from dralloc.server.http.errors import ApiError, bad_request, invalid, method_not_allowed, not_found
from dralloc.server.http.routing import Target
from dralloc.server.registry.kinds import CORE
from dralloc.server.views import ObjectView
from dralloc.store import NotFound
from dralloc.validation import field as f

# kube-apiserver's default --kubelet-preferred-address-types, in order, and the kubelet's default port
PREFERRED_ADDRESS_TYPES = ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP")
KUBELET_PORT = 10250
# PodLogOptions the kubelet URL carries (url.Values.Encode sorts them by name)
_FLAGS = ("follow", "previous", "timestamps")
_NUMBERS = ("limitBytes", "sinceSeconds", "tailLines")
_TRUE = ("1", "t", "T", "TRUE", "true", "True")  # what Go's strconv.ParseBool takes
_FALSE = ("", "0", "f", "F", "FALSE", "false", "False")
_LOG_OPTIONS = SimpleNamespace(kind="PodLogOptions", group="")  # what a refusal of the options names


def container_of(pod: dict[str, Any], name: str) -> str:
    """The container a log request names (upstream's validateContainer): the named one, which must be the
    pod's, or the only one."""
    spec = ObjectView(pod).spec
    pod_name = ObjectView(pod).name
    every = [c.get("name") for kind in ("initContainers", "containers", "ephemeralContainers")
             for c in spec.get(kind) or [] if isinstance(c, dict)]
    if name:
        if name not in every:
            raise bad_request(f"container {name} is not valid for pod {pod_name}")
        return name
    containers = [c for c in spec.get("containers") or [] if isinstance(c, dict)]
    if len(containers) == 1:
        return str(containers[0].get("name") or "")
    if not containers:
        raise bad_request(f"a container name must be specified for pod {pod_name}")
    raise bad_request(f"a container name must be specified for pod {pod_name}, choose one of: "
                      f"[{' '.join(str(n) for n in every)}]")


def kubelet_query(params: Any, pod_name: str = "") -> str:
    """The kubelet URL's query: the log options as kube-apiserver passes them on, keys sorted; 422 for options
    it refuses (``pod_name``: the pod the refusal names)."""
    values: dict[str, str] = {}
    for name in _FLAGS:
        raw = params.get(name)
        if raw is None or raw in _FALSE:
            continue
        if raw not in _TRUE:
            raise bad_request(f'{name}: Invalid value: "{raw}": strconv.ParseBool: parsing "{raw}": invalid syntax')
        values[name] = "true"
    for name in _NUMBERS:
        raw = params.get(name)
        if raw is None:
            continue
        try:
            values[name] = str(int(raw))
        except ValueError:
            raise bad_request(f'{name}: Invalid value: "{raw}": strconv.ParseInt: parsing "{raw}": '
                              f"invalid syntax") from None
    if params.get("sinceTime"):
        raw = params["sinceTime"]
        bad_time = gotime.parse_error(raw)  # decoded into a metav1.Time before anything else
        if bad_time is not None:
            raise bad_request(f'sinceTime: Invalid value: "{raw}": {bad_time}')
        values["sinceTime"] = raw
    errors = log_option_errors(values)
    if errors:
        raise invalid(_LOG_OPTIONS, pod_name, errors)
    return urlencode(sorted(values.items()))


def log_option_errors(values: dict[str, str]) -> list[f.FieldError]:
    """ValidatePodLogOptions over the parsed options: no negative tail, a positive byte limit, and one positive
    lower bound in time at most."""
    errors: list[f.FieldError] = []
    if "tailLines" in values and int(values["tailLines"]) < 0:
        errors.append(f.invalid("tailLines", int(values["tailLines"]), "must be greater than or equal to 0"))
    if "limitBytes" in values and int(values["limitBytes"]) < 1:
        errors.append(f.invalid("limitBytes", int(values["limitBytes"]), "must be greater than 0"))
    if "sinceSeconds" in values and "sinceTime" in values:
        errors.append(f.forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
    elif "sinceSeconds" in values and int(values["sinceSeconds"]) < 1:
        errors.append(f.invalid("sinceSeconds", int(values["sinceSeconds"]), "must be greater than 0"))
    return errors


def kubelet_address(node: dict[str, Any]) -> tuple[str, int]:
    """The node's address of the most preferred type, and its kubelet's port; ApiError when it has none."""
    status = node.get("status") or {}
    addresses = [a for a in status.get("addresses") or [] if isinstance(a, dict)]
    port = (((status.get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}).get("Port")) or 0
    for kind in PREFERRED_ADDRESS_TYPES:
        for address in addresses:
            if address.get("type") == kind:
                return str(address.get("address") or ""), int(port) if int(port) > 0 else KUBELET_PORT
    known = " ".join(f"{{{a.get('type') or ''} {a.get('address') or ''}}}" for a in addresses)
    raise ApiError(500, f"no preferred addresses found; known addresses: [{known}]", "")


def kubelet_host(api: ApiContext, node_name: str) -> str:
    """``address:port`` of the node's kubelet, as kube-apiserver would dial it (Go's JoinHostPort); 404 when
    the node is gone, 500 when it has no preferred address."""
    try:
        node = api.store.get("nodes", "", node_name)
    except NotFound:
        raise not_found(CORE["nodes"], node_name) from None
    address, port = kubelet_address(node)
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


async def get_log(api: ApiContext, request: Request, t: Target) -> Response:
    if request.method != "GET":
        raise method_not_allowed()
    query = kubelet_query(request.query_params, t.name)  # options are decoded and checked before the pod is read
    try:
        pod = api.store.get("pods", t.namespace, t.name)
    except NotFound:
        raise not_found(t.resource, t.name) from None
    container = container_of(pod, request.query_params.get("container") or "")
    node_name = ObjectView(pod).spec.get("nodeName") or ""
    if not node_name:
        return Response(b"", 200, media_type="text/plain")  # no node, no location: an empty stream
    host = kubelet_host(api, node_name)
    url = f"https://{host}/containerLogs/{t.namespace}/{t.name}/{container}" + (f"?{query}" if query else "")
    raise ApiError(500, f'Get "{url}": dial tcp {host}: connect: connection refused', "")
