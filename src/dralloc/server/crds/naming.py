"""kube-apiserver's naming and establishing controllers for the CustomResourceDefinitions of one group.

The naming controller accepts the names a CRD asks for (``spec.names``) unless another CRD of its group already
has them accepted: plurals, singulars and short names share one namespace, kinds and list kinds another. A name
the CRD already has accepted stays its own. A name in use is not accepted (``status.acceptedNames`` keeps what
it had, empty for a new CRD) and ``NamesAccepted`` is False with the reason of the last name that conflicted
(``PluralConflict``, ``SingularConflict``, ``ShortNamesConflict``, ``KindConflict``, ``ListKindConflict``) and
``"x" is already in use``. A CRD never established is then ``Established`` False (``NotAccepted``) and not
served; once all its names are accepted the establishing controller makes it ``Established`` True. An
established CRD stays established (served under the names it had accepted) whatever its later names.

Every CRD write re-runs the controller for the CRD written; a CRD whose accepted names changed, or that is gone,
makes the controller look again at the other CRDs of its group (a name freed may now be accepted).
"""

from __future__ import annotations

import logging
from typing import Any

from dralloc.server.clock import now
from dralloc.server.types import Obj
from dralloc.store import NotFound, SQLStore

RESOURCE = "customresourcedefinitions"
_RESOURCE_NAMES = ("plural", "singular")
_KIND_NAMES = ("kind", "listKind")
_FIELD_ORDER = ("plural", "singular", "shortNames", "kind", "listKind", "categories")
# Each CRD's names are looked at again at most this many times in one pass (names only ever get accepted, so
# a pass settles well before)
_MAX_SYNCS_PER_CRD = 4

log = logging.getLogger(__name__)


def _names(crd: Obj, where: str) -> dict[str, Any]:
    part = (crd.get(where) or {}).get("names" if where == "spec" else "acceptedNames")
    return part if isinstance(part, dict) else {}


def group_of(crd: Obj) -> str:
    return str((crd.get("spec") or {}).get("group") or "")


def names_in_use(crds: list[Obj]) -> tuple[set[str], set[str]]:
    """The resource names (plurals, singulars, short names) and kinds (kinds, list kinds) the CRDs have
    accepted."""
    resources: set[str] = set()
    kinds: set[str] = set()
    for crd in crds:
        accepted = _names(crd, "status")
        resources.update(str(accepted.get(n) or "") for n in _RESOURCE_NAMES)
        resources.update(str(s) for s in accepted.get("shortNames") or ())
        kinds.update(str(accepted.get(n) or "") for n in _KIND_NAMES)
    return resources, kinds


def _in_use(wanted: str, accepted: str, used: set[str]) -> str | None:
    """Why ``wanted`` cannot be accepted (None: it is the CRD's already, or nobody's)."""
    if wanted == accepted or wanted not in used:
        return None
    return f'"{wanted}" is already in use'


def _same(a: Any, b: Any) -> bool:
    """Names compared as Go's semantic equality does: an empty list is no list, an empty name no name."""
    def norm(names: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in names.items() if v not in (None, "", [])}
    return norm(a) == norm(b)


def accepted_names(crd: Obj, resources: set[str], kinds: set[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """The names the CRD gets accepted and its NamesAccepted condition (status, reason, message)."""
    wanted = _names(crd, "spec")
    accepted = _names(crd, "status")
    out = {"plural": "", "kind": "", **accepted}
    problem: tuple[str, str] | None = None

    def check(name: str, used: set[str], reason: str) -> None:
        nonlocal problem
        why = _in_use(str(wanted.get(name) or ""), str(accepted.get(name) or ""), used)
        if why is not None:
            problem = (reason, why)
        else:
            out[name] = wanted.get(name) or ""

    check("plural", resources, "PluralConflict")
    check("singular", resources, "SingularConflict")
    short_wanted = [str(s) for s in wanted.get("shortNames") or ()]
    short_accepted = [str(s) for s in accepted.get("shortNames") or ()]
    if short_wanted != short_accepted:
        # a short name already its own is fine; so is one equal to its own accepted plural or singular (they
        # are among the names in use, being its own)
        own = {*short_accepted, str(accepted.get("plural") or ""), str(accepted.get("singular") or "")}
        errors = list(dict.fromkeys(why for s in short_wanted if s not in own
                                    and (why := _in_use(s, "", resources)) is not None))
        if errors:
            problem = ("ShortNamesConflict", errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
        else:
            out["shortNames"] = short_wanted
    check("kind", kinds, "KindConflict")
    check("listKind", kinds, "ListKindConflict")
    out["categories"] = list(wanted.get("categories") or ())
    # (as Go writes them: in its field order, plural and kind always, the other names when set)
    out = {k: out[k] for k in _FIELD_ORDER if k in ("plural", "kind") or out.get(k)}
    if problem is None:
        return out, {"status": "True", "reason": "NoConflicts", "message": "no conflicts found"}
    return out, {"status": "False", "reason": problem[0], "message": problem[1]}


def condition(crd: Obj, kind: str) -> dict[str, Any] | None:
    for c in (crd.get("status") or {}).get("conditions") or ():
        if isinstance(c, dict) and c.get("type") == kind:
            return c
    return None


def set_condition(status: dict[str, Any], kind: str, value: str, reason: str, message: str) -> None:
    """Set a condition as kube-apiserver's helper does: its time moves only when its status does; a new one goes
    last."""
    conditions = [dict(c) for c in status.get("conditions") or () if isinstance(c, dict)]  # (copies: others' stay)
    for c in conditions:
        if c.get("type") == kind:
            if c.get("status") != value:
                c.update(status=value, lastTransitionTime=now())
            c.update(reason=reason, message=message)
            status["conditions"] = conditions
            return
    conditions.append({"type": kind, "status": value, "lastTransitionTime": now(), "reason": reason,
                       "message": message})
    status["conditions"] = conditions


def _named(crd: Obj, crds: list[Obj]) -> Obj | None:
    """The naming controller's status of ``crd`` among the CRDs of its group (None: nothing to change)."""
    if _same(_names(crd, "spec"), _names(crd, "status")):
        return None
    names, accepted = accepted_names(crd, *names_in_use(crds))
    old = condition(crd, "NamesAccepted")
    if names == _names(crd, "status") and old is not None and \
            (old.get("status"), old.get("reason"), old.get("message")) == \
            (accepted["status"], accepted["reason"], accepted["message"]):
        return None
    status = {**(crd.get("status") or {}), "acceptedNames": names}
    set_condition(status, "NamesAccepted", accepted["status"], accepted["reason"], accepted["message"])
    established = condition(crd, "Established")
    if established is None or established.get("status") != "True":
        if accepted["status"] == "True":
            set_condition(status, "Established", "False", "Installing", "the initial names have been accepted")
        elif established is None:
            set_condition(status, "Established", "False", "NotAccepted", "not all names are accepted")
    return {**crd, "status": status}


def _established(crd: Obj) -> Obj | None:
    """The establishing controller's status of ``crd`` (None: nothing to change): Established once every name
    it asked for is accepted."""
    names = condition(crd, "NamesAccepted")
    established = condition(crd, "Established")
    if names is None or names.get("status") != "True" or (established or {}).get("status") == "True":
        return None
    status = {**(crd.get("status") or {})}
    set_condition(status, "Established", "True", "InitialNamesAccepted", "the initial names have been accepted")
    return {**crd, "status": status}


def _write_status(store: SQLStore, name: str, expected_rv: str, change: Obj) -> Obj | None:
    """Write ``change``'s status over the stored CRD as the controllers' status update (None: the CRD changed
    or went meanwhile; it is looked at again)."""
    def build(old: Obj, rv: str) -> Obj:
        if (old.get("metadata") or {}).get("resourceVersion") != expected_rv:
            raise _Stale()
        return {**old, "status": change["status"], "metadata": {**old["metadata"], "resourceVersion": rv}}

    try:
        return store.update(RESOURCE, "", name, build)
    except (NotFound, _Stale):
        return None


class _Stale(Exception):
    pass


def reconcile(store: SQLStore, group: str, first: str) -> None:
    """Run the naming and establishing controllers for the CRD ``first`` of ``group`` (written, or gone), and
    for every other CRD of the group its changes may concern, until nothing changes."""
    queue = [first]
    syncs: dict[str, int] = {}
    while queue:
        name = queue.pop(0)
        syncs[name] = syncs.get(name, 0) + 1
        if syncs[name] > _MAX_SYNCS_PER_CRD:
            log.warning("the names of CustomResourceDefinition %s did not settle", name)
            continue
        crds = [c for c in store.list(RESOURCE)[0] if group_of(c) == group]
        crd = next((c for c in crds if (c.get("metadata") or {}).get("name") == name), None)
        others = sorted(str((c.get("metadata") or {}).get("name")) for c in crds
                        if (c.get("metadata") or {}).get("name") != name)
        if crd is None:  # gone: its names are free
            queue += [n for n in others if n not in queue]
            continue
        named = _named(crd, crds)
        if named is not None:
            written = _write_status(store, name, str(crd["metadata"].get("resourceVersion")), named)
            if written is None:
                queue.append(name)
                continue
            crd = written
            queue += [n for n in others if n not in queue]
        established = _established(crd)
        if established is not None and \
                _write_status(store, name, str(crd["metadata"].get("resourceVersion")), established) is None:
            queue.append(name)


def unsettled_groups(crds: list[Obj]) -> list[str]:
    """The groups with a CRD the controllers have yet to look at (on startup: a server stopped in between)."""
    out = {group_of(c) for c in crds
           if not _same(_names(c, "spec"), _names(c, "status")) or condition(c, "NamesAccepted") is None
           or (condition(c, "NamesAccepted") or {}).get("status") == "True"
           and (condition(c, "Established") or {}).get("status") != "True"}
    return sorted(out)
