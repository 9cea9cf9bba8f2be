"""The columns ``kubectl get`` prints for the workloads (server/registry/workloads.py), as kube-apiserver's
printers compute them: a Deployment's READY, UP-TO-DATE and AVAILABLE, a ReplicaSet's DESIRED, CURRENT and
READY, a DaemonSet's counts and node selector, a Job's STATUS, COMPLETIONS and DURATION, a CronJob's schedule,
and for ``-o wide`` the containers, images and selector."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from dralloc.server.http.ages import human_age
from dralloc.server.types import Obj


def _spec(obj: Obj) -> Obj:
    spec = obj.get("spec")
    return spec if isinstance(spec, dict) else {}


def _status(obj: Obj) -> Obj:
    status = obj.get("status")
    return status if isinstance(status, dict) else {}


def _count(obj: Obj, key: str) -> int:
    value = _status(obj).get(key)
    return value if isinstance(value, int) else 0


def format_selector(selector: Any) -> str:
    """metav1.FormatLabelSelector: ``k=v`` pairs and ``k in (a,b)`` requirements, sorted as labels.Selector
    sorts them by key; ``<none>`` for no selector, ``<none>`` too for an empty one (matches everything)."""
    if not isinstance(selector, dict):
        return "<none>"
    parts: list[tuple[str, str]] = [(str(k), f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for req in selector.get("matchExpressions") or []:
        if not isinstance(req, dict):
            continue
        key, op, values = str(req.get("key")), req.get("operator"), sorted(req.get("values") or [])
        text = {"In": f"{key} in ({','.join(values)})", "NotIn": f"{key} notin ({','.join(values)})",
                "Exists": key, "DoesNotExist": f"!{key}"}.get(str(op), key)
        parts.append((key, text))
    return ",".join(text for _, text in sorted(parts)) or "<none>"


def _containers(obj: Obj, field: str, template_path: tuple[str, ...] = ("template",)) -> str:
    template: Any = _spec(obj)
    for key in template_path:
        template = template.get(key) if isinstance(template, dict) else None
    spec = template.get("spec") if isinstance(template, dict) else None
    containers = spec.get("containers") if isinstance(spec, dict) else None
    return ",".join(str(c.get(field) or "") for c in containers or [] if isinstance(c, dict))


def _replicas(obj: Obj) -> int:
    value = _spec(obj).get("replicas")
    return value if isinstance(value, int) else 1


def _parse_time(text: Any) -> datetime | None:
    try:
        return datetime.strptime(str(text), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def job_status(obj: Obj) -> str:
    """The job printer's STATUS: its finished condition (Complete, Failed), else FailureTarget/SuccessCriteriaMet
    as Failing/Completing, Suspended, Terminating (being deleted), else Running."""
    conditions = {c.get("type"): c.get("status") for c in _status(obj).get("conditions") or [] if isinstance(c, dict)}
    for kind, shown in (("Complete", "Complete"), ("Failed", "Failed"), ("FailureTarget", "Failing"),
                        ("SuccessCriteriaMet", "Completing"), ("Suspended", "Suspended")):
        if conditions.get(kind) == "True":
            return shown
    if (obj.get("metadata") or {}).get("deletionTimestamp"):
        return "Terminating"
    return "Running"


def job_completions(obj: Obj) -> str:
    """``succeeded/completions``; a Job without completions: ``succeeded/1 of parallelism``."""
    completions = _spec(obj).get("completions")
    succeeded = _count(obj, "succeeded")
    if isinstance(completions, int):
        return f"{succeeded}/{completions}"
    parallelism = _spec(obj).get("parallelism")
    parallelism = parallelism if isinstance(parallelism, int) else 0
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def job_duration(obj: Obj) -> str:
    """From start to completion (or to now, while it runs); nothing before it started."""
    start = _parse_time(_status(obj).get("startTime"))
    if start is None:
        return ""
    end = _parse_time(_status(obj).get("completionTime")) or datetime.now(UTC)
    return human_age(_stamp(datetime.now(UTC) - (end - start)))


def _stamp(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def revision_controller(obj: Obj) -> str:
    """printControllerRevision's CONTROLLER: ``<kind>.<group>/<name>`` of its controller (lower case, the
    group left out for the core group), else ``<none>``."""
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller") is True:
            api_version = str(ref.get("apiVersion") or "")
            group = api_version.split("/")[0] if "/" in api_version else ""
            kind = f"{ref.get('kind')}.{group}" if group else str(ref.get("kind"))
            return f"{kind.lower()}/{ref.get('name')}"
    return "<none>"


COLUMNS = {
    "=deploymentReady": lambda o: f"{_count(o, 'readyReplicas')}/{_replicas(o)}",
    "=statefulSetReady": lambda o: f"{_count(o, 'readyReplicas')}/{_replicas(o)}",
    "=updatedReplicas": lambda o: _count(o, "updatedReplicas"),
    "=availableReplicas": lambda o: _count(o, "availableReplicas"),
    "=desiredReplicas": _replicas,
    "=currentReplicas": lambda o: _count(o, "replicas"),
    "=readyReplicas": lambda o: _count(o, "readyReplicas"),
    "=dsDesired": lambda o: _count(o, "desiredNumberScheduled"),
    "=dsCurrent": lambda o: _count(o, "currentNumberScheduled"),
    "=dsReady": lambda o: _count(o, "numberReady"),
    "=dsUpToDate": lambda o: _count(o, "updatedNumberScheduled"),
    "=dsAvailable": lambda o: _count(o, "numberAvailable"),
    "=dsNodeSelector": lambda o: ",".join(f"{k}={v}" for k, v in sorted(
        ((((_spec(o).get("template") or {}).get("spec") or {}).get("nodeSelector")) or {}).items())) or "<none>",
    "=containers": lambda o: _containers(o, "name"),
    "=images": lambda o: _containers(o, "image"),
    "=selector": lambda o: format_selector(_spec(o).get("selector")),
    "=jobStatus": job_status,
    "=jobCompletions": job_completions,
    "=jobDuration": job_duration,
    "=cronJobContainers": lambda o: _containers(o, "name", ("jobTemplate", "spec", "template")),
    "=cronJobImages": lambda o: _containers(o, "image", ("jobTemplate", "spec", "template")),
    "=cronJobActive": lambda o: len(_status(o).get("active") or []),
    "=cronJobLastSchedule": lambda o: human_age(_status(o).get("lastScheduleTime"))
    if _status(o).get("lastScheduleTime") else "<none>",
    "=cronJobTimeZone": lambda o: _spec(o).get("timeZone") or "<none>",
    "=cronJobSuspend": lambda o: "True" if _spec(o).get("suspend") else "False",
    "=revisionController": revision_controller,
    "=revision": lambda o: o.get("revision") if isinstance(o.get("revision"), int) else 0,
}
COLUMN_TYPES = {path: "integer" for path in (
    "=updatedReplicas", "=availableReplicas", "=desiredReplicas", "=currentReplicas", "=readyReplicas",
    "=dsDesired", "=dsCurrent", "=dsReady", "=dsUpToDate", "=dsAvailable", "=cronJobActive", "=revision")}

_AGE = ("Age", "=age", 0)
_WIDE = (("Containers", "=containers", 1), ("Images", "=images", 1), ("Selector", "=selector", 1))
DEPLOYMENT_TABLE = (("Name", "metadata.name", 0), ("Ready", "=deploymentReady", 0),
                    ("Up-to-date", "=updatedReplicas", 0), ("Available", "=availableReplicas", 0), _AGE, *_WIDE)
REPLICA_SET_TABLE = (("Name", "metadata.name", 0), ("Desired", "=desiredReplicas", 0),
                     ("Current", "=currentReplicas", 0), ("Ready", "=readyReplicas", 0), _AGE, *_WIDE)
STATEFUL_SET_TABLE = (("Name", "metadata.name", 0), ("Ready", "=statefulSetReady", 0), _AGE, *_WIDE[:2])
DAEMON_SET_TABLE = (("Name", "metadata.name", 0), ("Desired", "=dsDesired", 0), ("Current", "=dsCurrent", 0),
                    ("Ready", "=dsReady", 0), ("Up-to-date", "=dsUpToDate", 0), ("Available", "=dsAvailable", 0),
                    ("Node Selector", "=dsNodeSelector", 0), _AGE, *_WIDE)
JOB_TABLE = (("Name", "metadata.name", 0), ("Status", "=jobStatus", 0), ("Completions", "=jobCompletions", 0),
             ("Duration", "=jobDuration", 0), _AGE, *_WIDE)
CRON_JOB_TABLE = (("Name", "metadata.name", 0), ("Schedule", "spec.schedule", 0),
                  ("Timezone", "=cronJobTimeZone", 0), ("Suspend", "=cronJobSuspend", 0),
                  ("Active", "=cronJobActive", 0), ("Last Schedule", "=cronJobLastSchedule", 0), _AGE,
                  ("Containers", "=cronJobContainers", 1), ("Images", "=cronJobImages", 1),
                  ("Selector", "=selector", 1))
CONTROLLER_REVISION_TABLE = (("Name", "metadata.name", 0), ("Controller", "=revisionController", 0),
                             ("Revision", "=revision", 0), _AGE)
