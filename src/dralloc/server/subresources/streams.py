"""pods/{name}/exec, /attach and /portforward (``kubectl exec``, ``attach``, ``cp``, ``port-forward``) as
kube-apiserver answers them when no kubelet can be reached.

kube-apiserver streams these from the kubelet of the pod's node: it checks the pod and the container, finds
the node's kubelet address and dials it, and only then upgrades the connection. dralloc runs no kubelet, so
the answer is where a cluster whose kubelets do not answer stops (the same steps as ``kubectl logs``, see
:mod:`dralloc.server.subresources.log`):

- no such pod: 404; a container that is not the pod's, or none named in a pod of several: 400 (exec and
  attach; a port-forward names no container);
- a pod not bound to a node: 400 ``pod NAME does not have a host assigned``;
- the node is gone: 404; it has none of the preferred address types: ``no preferred addresses found; ...``;
- otherwise the dial fails: ``error dialing backend: dial tcp ADDRESS:10250: connect: connection refused``,
  a 500 Status with no reason, which kubectl prints as ``Error from server: error dialing backend: ...``.

The verbs are kube-apiserver's for connect requests: a GET (a WebSocket upgrade) is ``get``, a POST (SPDY)
``create``, each on ``pods/exec``, ``pods/attach`` or ``pods/portforward``.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response

from dralloc.server.context import ApiContext
from dralloc.server.http.errors import ApiError, bad_request, not_found
from dralloc.server.http.routing import Target
from dralloc.server.subresources.log import container_of, kubelet_host
from dralloc.store import NotFound

STREAMS = ("exec", "attach", "portforward")


async def connect(api: ApiContext, request: Request, t: Target) -> Response:
    """Answer an exec, attach or port-forward request as a cluster with unreachable kubelets does."""
    try:
        pod = api.store.get("pods", t.namespace, t.name)
    except NotFound:
        raise not_found(t.resource, t.name) from None
    if t.sub != "portforward":
        container_of(pod, request.query_params.get("container") or "")
    node_name = (pod.get("spec") or {}).get("nodeName") or ""
    if not node_name:
        raise bad_request(f"pod {t.name} does not have a host assigned")
    host = kubelet_host(api, node_name)
    raise ApiError(500, f"error dialing backend: dial tcp {host}: connect: connection refused", "")
