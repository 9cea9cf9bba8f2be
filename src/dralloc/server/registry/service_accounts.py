"""ServiceAccount admission of pods, as kube-apiserver's plugin: a pod runs as a service account of its
namespace (``default`` unless it names one, 403 when it does not exist), mounts that account's API token
unless the pod or the account opts out (the projected ``kube-api-access-xxxxx`` volume at
``/var/run/secrets/kubernetes.io/serviceaccount`` in every container), and takes the account's image pull
secrets when it has none. Nothing here issues tokens: the volume is what a kubelet would fill.

The ServiceAccount strategy: stored as sent, its metadata validated."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from dralloc.server.clock import now
from dralloc.server.http.errors import ApiError
from dralloc.server.registry.strategy import CoreStrategy
from dralloc.server.types import Obj
from dralloc.server.uids import new_uid
from dralloc.store import Conflict, NotFound, SQLStore
from dralloc.store.cache import cached
from dralloc.validation.field import FieldError
from dralloc.validation.meta import name_is_dns_subdomain, validate_object_meta

DEFAULT = "default"
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"  # DefaultAPITokenMountPath
VOLUME_PREFIX = "kube-api-access-"
MIRROR = "kubernetes.io/config.mirror"


def default_account_object(namespace: str) -> Obj:
    """A namespace's default service account, as kube-controller-manager makes it."""
    return {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": DEFAULT, "namespace": namespace}}


def default_account(namespace: str) -> Callable[[Any, str], Obj]:
    """The store's ``build`` of :func:`default_account_object` (a new uid, the time, the resourceVersion)."""
    def build(_old: Any, rv: str) -> Obj:
        obj = default_account_object(namespace)
        obj["metadata"].update(uid=new_uid(), resourceVersion=rv, creationTimestamp=now())
        return obj
    return build


def ensure_default_account(store: SQLStore, namespace: str) -> None:
    """Make the namespace's default service account if it is missing (the system namespaces at start)."""
    try:
        store.get("serviceaccounts", namespace, DEFAULT)
    except NotFound:
        try:
            store.create("serviceaccounts", namespace, DEFAULT, default_account(namespace))
        except Conflict:
            pass  # made meanwhile (another replica)


def token_volume(name: str) -> Obj:
    """The projected volume of a bound token, the cluster's CA and the namespace (TokenVolumeSource)."""
    return {"name": name, "projected": {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}


def admit_pod(store: SQLStore, pod: Obj, namespace: str, new_name: Callable[[str], str]) -> Obj:
    """The pod as the ServiceAccount admission plugin leaves it on create (a new dict)."""
    spec, meta = pod.get("spec"), pod.get("metadata")
    if not isinstance(spec, dict) or not isinstance(meta, dict):
        return pod  # not a pod the decoder takes: its 400 comes next
    annotations = meta.get("annotations")
    if annotations and MIRROR in annotations:
        if spec.get("serviceAccountName"):
            raise _forbidden(_pod_name(meta), "a mirror pod may not reference service accounts")
        return pod
    spec = dict(spec)  # (copies of what changes: the request's own data stays as sent)
    pod = {**pod, "spec": spec}
    account_name = spec.get("serviceAccountName") or spec.get("serviceAccount") or DEFAULT
    if not isinstance(account_name, str):
        return pod  # the decoder's 400
    account = _account(store, namespace, account_name)
    if account is None:
        raise _forbidden(_pod_name(meta), f"service account {namespace}/{account_name} was not found, retry after the "
                               f"service account is created")
    spec["serviceAccountName"] = spec["serviceAccount"] = account_name  # (the v1 form carries both)
    automount = spec.get("automountServiceAccountToken")
    if automount is None:
        automount = account.get("automountServiceAccountToken")
    if automount is not False:
        _mount_token(spec, new_name)
    if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
        spec["imagePullSecrets"] = copy.deepcopy(account["imagePullSecrets"])
    return pod


def _pod_name(meta: Obj) -> str:
    """The pod's name in a refusal (its generateName when it has no name yet)."""
    return str(meta.get("name") or meta.get("generateName") or "")


def _account(store: SQLStore, namespace: str, name: str) -> Obj | None:
    """The service account, as kube-apiserver's plugin finds it: in the informer's cache, else (made a moment
    ago by another replica) in the store."""
    account = cached(store, "serviceaccounts").get(namespace, name)
    if account is not None:
        return account
    try:
        return store.get("serviceaccounts", namespace, name)
    except NotFound:
        return None


def _mount_token(spec: Obj, new_name: Callable[[str], str]) -> None:
    listed = spec.get("volumes")
    existing = None  # the name of the first volume named as a token volume is
    if isinstance(listed, list):  # (else the decoder's 400)
        for volume in listed:
            if isinstance(volume, dict) and str(volume.get("name") or "").startswith(VOLUME_PREFIX):
                existing = volume.get("name")
                break
    volume_name = existing or new_name(VOLUME_PREFIX)
    needed = False
    for kind in ("initContainers", "containers"):
        containers = spec.get(kind)
        if not isinstance(containers, list):
            continue
        spec[kind] = containers = list(containers)
        for i, container in enumerate(containers):
            if not isinstance(container, dict):
                continue
            mounts = container.get("volumeMounts")
            if mounts is not None and not isinstance(mounts, list):
                continue  # the decoder's 400
            if mounts and any(isinstance(m, dict) and m.get("mountPath") == TOKEN_PATH for m in mounts):
                continue  # a mount of its own at the token's path wins
            mount = {"name": volume_name, "readOnly": True, "mountPath": TOKEN_PATH}
            containers[i] = {**container, "volumeMounts": [*mounts, mount] if mounts else [mount]}
            needed = True
    if needed and existing is None and (isinstance(listed, list) or "volumes" not in spec):  # (not a null)
        spec["volumes"] = [*listed, token_volume(volume_name)] if listed else [token_volume(volume_name)]


def _forbidden(pod_name: str, why: str) -> ApiError:
    return ApiError(403, f'pods "{pod_name}" is forbidden: {why}', details={"name": pod_name, "kind": "pods"})


class ServiceAccountStrategy(CoreStrategy):
    def create_errors(self, typed: Any, stored: Obj | None, namespaced: bool) -> list[FieldError]:
        return validate_object_meta(typed.metadata, True, name_is_dns_subdomain, require_namespace=True)


STRATEGY = ServiceAccountStrategy()
