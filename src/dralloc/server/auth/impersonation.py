"""User impersonation (``kubectl --as``, ``--as-group``, ``--as-uid``): the Impersonate-* headers turn the
request into one of another user, when the allow list lets the requester ``impersonate`` the users, groups,
service accounts, uids and user extras asked for, as kube-apiserver's impersonation filter does."""

from __future__ import annotations

from typing import Any

from dralloc.server.auth.users import AUTHENTICATED, Authorizer, User
from dralloc.server.http.errors import ApiError, bad_request

UNAUTHENTICATED = "system:unauthenticated"
ANONYMOUS = "system:anonymous"
SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
EXTRA_PREFIX = "impersonate-extra-"


def _forbidden(requester: User, resource: str, name: str, group: str = "", namespace: str = "") -> ApiError:
    scope = f' in the namespace "{namespace}"' if namespace else " at the cluster scope"
    return ApiError(403, f'{resource}{"." + group if group else ""} "{name}" is forbidden: User "{requester.name}" '
                         f'cannot impersonate resource "{resource}" in API group "{group}"{scope}',
                    details={"name": name, "group": group, "kind": resource})


def impersonated(requester: User, headers: Any, authorizer: Authorizer) -> User:
    """The user a request acts as: ``requester`` itself without Impersonate-* headers."""
    if not any(name.startswith(b"impersonate-") for name, _ in headers.raw):  # the common case, on every request
        return requester
    username = headers.get("impersonate-user") or ""
    groups_asked = headers.getlist("impersonate-group")
    uid = headers.get("impersonate-uid") or ""
    extras = [v for k, v in headers.items() if k.lower().startswith(EXTRA_PREFIX)]
    if not username:
        if groups_asked or uid or extras:
            # kube-apiserver answers this with a 500; a client's mistake gets a 400 here
            raise bad_request("requested uid, groups or user-extra without impersonating a user")
        return requester
    groups: list[str] = []
    if username.startswith(SERVICE_ACCOUNT_PREFIX) and username.count(":") == 3:
        namespace, name = username[len(SERVICE_ACCOUNT_PREFIX):].split(":")
        if not authorizer.allowed(requester, "impersonate", "serviceaccounts"):
            raise _forbidden(requester, "serviceaccounts", name, namespace=namespace)
        if not groups_asked:  # a service account's groups are known
            groups = ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"]
    elif not authorizer.allowed(requester, "impersonate", "users"):
        raise _forbidden(requester, "users", username)
    for group in groups_asked:
        if not authorizer.allowed(requester, "impersonate", "groups"):
            raise _forbidden(requester, "groups", group)
        groups.append(group)
    if uid and not authorizer.allowed(requester, "impersonate", "uids"):
        raise _forbidden(requester, "uids", uid, "authentication.k8s.io")
    for value in extras:
        if not authorizer.allowed(requester, "impersonate", "userextras"):
            raise _forbidden(requester, "userextras", value, "authentication.k8s.io")
    # Without groups asked for, a user other than anonymous is authenticated (unless a group says otherwise).
    if not groups_asked and username != ANONYMOUS and AUTHENTICATED not in groups and UNAUTHENTICATED not in groups:
        groups.append(AUTHENTICATED)
    return User(username, uid, tuple(groups))
