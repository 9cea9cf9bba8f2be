"""/healthz, /livez and /readyz, and each of their checks (``/readyz/ping``), as kube-apiserver serves them.

A check passes or fails; the root path answers ``ok`` when every check passes, or with ``?verbose`` one
``[+]name ok`` line per check and ``livez check passed``; a failed check makes it a 500 that always lists the
checks, the failed ones as ``[-]name failed: reason withheld`` (these paths are public), ending with
``readyz check failed``. ``?exclude=name`` skips a check (``[+]name excluded: ok``); a name that matches no
check is warned about. dralloc's checks: ``ping``; ``store``, a read of the store's resourceVersion (the
server's etcd); and for readiness ``shutdown``, which fails once the server has begun to shut down, so a
load balancer stops sending it requests while it finishes those in flight.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.responses import PlainTextResponse, Response

from dralloc.server.context import ApiContext
from dralloc.server.http.errors import no_such_path

ROOTS = ("healthz", "livez", "readyz")
HEADERS = {"X-Content-Type-Options": "nosniff"}
Check = Callable[[ApiContext], None]  # raises when the check fails


class _ShuttingDown(Exception):
    pass


class _StoreFailing(Exception):
    pass


def _ping(api: ApiContext) -> None:
    return None


def _store(api: ApiContext) -> None:
    try:
        api.store.current_rv()
    except Exception as exc:  # noqa: BLE001 - whatever the database says, the check fails
        raise _StoreFailing(f"the store cannot be read: {exc}") from None


def _shutdown(api: ApiContext) -> None:
    if api.closing:
        raise _ShuttingDown("process is shutting down")


_LIVE: dict[str, Check] = {"ping": _ping, "store": _store}
CHECKS: dict[str, dict[str, Check]] = {"healthz": _LIVE, "livez": _LIVE, "readyz": {**_LIVE, "shutdown": _shutdown}}


def _failure(check: Check, api: ApiContext) -> str | None:
    """Why the check fails, or None when it passes."""
    try:
        check(api)
    except (_ShuttingDown, _StoreFailing) as exc:
        return str(exc)
    return None


def _text(body: str, status: int = 200) -> Response:
    return PlainTextResponse(body, status, headers=HEADERS)


def answer(api: ApiContext, parts: list[str], query: Any) -> Response:
    """The answer to ``/<root>`` or ``/<root>/<check>``; 404 for a check that does not exist."""
    root, checks = parts[0], CHECKS[parts[0]]
    if len(parts) > 1:
        check = checks.get("/".join(parts[1:]))
        if check is None:
            raise no_such_path()
        failure = _failure(check, api)
        return _text("ok") if failure is None else _text(f"internal server error: {failure}\n", 500)
    excluded = set(query.getlist("exclude"))
    lines = []
    failed = False
    for name, check in checks.items():
        if name in excluded:
            excluded.discard(name)
            lines.append(f"[+]{name} excluded: ok")
        elif _failure(check, api) is None:
            lines.append(f"[+]{name} ok")
        else:
            lines.append(f"[-]{name} failed: reason withheld")
            failed = True
    if excluded:
        unmatched = ",".join(f'"{name}"' for name in sorted(excluded))
        lines.append(f"warn: some health checks cannot be excluded: no matches for {unmatched}")
    if failed:  # always verbose on failure
        return _text("\n".join(lines) + f"\n{root} check failed\n", 500)
    if "verbose" not in query:
        return _text("ok")
    return _text("\n".join(lines) + f"\n{root} check passed\n")
