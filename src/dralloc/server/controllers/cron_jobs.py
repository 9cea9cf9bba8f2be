"""The CronJob controller of ``dralloc serve``, as kube-controller-manager's (``pkg/controller/cronjob``, v2),
on the workload controllers' clock:

* Its Jobs (controlled by it): a finished one leaves ``status.active`` (event SawCompletedJob), a succeeded one
  moves ``lastSuccessfulTime``, an active one gone from the store leaves it (MissingJob), an unfinished one it
  did not start is reported (UnexpectedJob: ``kubectl create job --from=cronjob/NAME`` makes those).
* Unless it is being deleted, suspended, or its time zone or schedule is bad (UnknownTimeZone,
  UnparseableSchedule, InvalidSchedule), the most recent unmet schedule time since the last one (or its
  creation) not older than ``startingDeadlineSeconds`` (else MissSchedule) gets a Job
  ``<cronjob>-<scheduled minutes since the epoch>`` from the job template, annotated with the scheduled time
  in the CronJob's time zone (SuccessfulCreate ``Created job NAME``); with ``concurrencyPolicy: Forbid`` not
  while one is active (JobAlreadyActive), with ``Replace`` the active ones are deleted first.
* Finished Jobs beyond ``successfulJobsHistoryLimit`` and ``failedJobsHistoryLimit`` are deleted, the oldest
  first (SuccessfulDelete ``Deleted job NAME``).

It is synced again at the next schedule time (and 100 ms), as upstream requeues it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any

from dralloc.api.cron_schedule import Schedule, ScheduleError, load_location, parse
from dralloc.server.clock import timestamp
from dralloc.server.controllers.workload_pods import Obj, PodControl, controller_ref, meta, spec_of, status_of
from dralloc.server.json_copy import json_copy
from dralloc.server.registry.workloads import generate_job_selector, job_defaults
from dralloc.store import Conflict, NotFound

COMPONENT = "cronjob-controller"
SCHEDULED_AT = "batch.kubernetes.io/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA = 0.1  # nextScheduleDelta: a little after the time, for clock skew
TOO_MANY_MISSED = 100


def _parse_time(value: Any) -> datetime | None:
    try:
        return datetime.strptime(str(value), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def finished_condition(job: Obj) -> str | None:
    """FinishedCondition: Complete or Failed, when true."""
    for c in status_of(job).get("conditions") or []:
        if isinstance(c, dict) and c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            return str(c["type"])
    return None


def job_name(cron: Obj, scheduled: datetime) -> str:
    """getJobName: the scheduled time in minutes since the epoch names the Job (a time's Job is made once)."""
    return f"{meta(cron).get('name')}-{int(scheduled.timestamp()) // 60}"


def _reference(job: Obj) -> Obj:
    """getRef: an ObjectReference to the Job."""
    m = meta(job)
    return {"kind": "Job", "namespace": m.get("namespace"), "name": m.get("name"), "uid": m.get("uid"),
            "apiVersion": "batch/v1", "resourceVersion": m.get("resourceVersion")}


def most_recent_schedule_time(cron: Obj, now: datetime, schedule: Schedule,
                              with_deadline: bool) -> tuple[datetime, datetime | None, int]:
    """mostRecentScheduleTime: the time counted from (the last schedule time, or the creation, or the
    starting deadline), the latest schedule time not after ``now`` (None: none), and how many were missed
    (roughly). ScheduleError when the schedule fires less than a second apart (a day that never comes)."""
    earliest = _parse_time(status_of(cron).get("lastScheduleTime")) or \
        _parse_time(meta(cron).get("creationTimestamp")) or now
    deadline = spec_of(cron).get("startingDeadlineSeconds")
    if with_deadline and isinstance(deadline, int):
        earliest = max(earliest, now - timedelta(seconds=deadline))
    first = schedule.next(earliest)
    if first is None or now < first:
        return earliest, None, 0
    second = schedule.next(first)
    if second is None or now < second:
        return earliest, first, 1
    between = round((second - first).total_seconds())
    if between < 1:
        raise ScheduleError("time difference between two schedules is less than 1 second")
    missed = int((now - first).total_seconds()) // between + 1
    latest: datetime | None = None
    t: datetime | None = first + (second - first) * (missed - 1)
    while t is not None and t <= now:
        latest = t
        t = schedule.next(t)
    return earliest, latest, missed


def next_sync(cron: Obj, now: datetime, schedule: Schedule) -> float:
    """nextScheduleTimeDuration: when to look again (the next schedule time and 100 ms), as a clock time."""
    try:
        earliest, latest, _ = most_recent_schedule_time(cron, now, schedule, False)
        after = latest or earliest
    except ScheduleError:
        after = now
    upcoming = schedule.next(after)
    if upcoming is None:  # (never again within five years: look again in a day)
        return now.timestamp() + 86400
    return upcoming.timestamp() + NEXT_SCHEDULE_DELTA


def job_from_template(cron: Obj, scheduled: datetime, location: Any) -> Obj:
    """getJobFromTemplate2: the template's labels and annotations, the scheduled time annotated (RFC 3339 in
    the CronJob's time zone), a controller reference, the template's spec."""
    template = spec_of(cron).get("jobTemplate") or {}
    template_meta = template.get("metadata") or {}
    annotations = dict(template_meta.get("annotations") or {})
    local = scheduled.astimezone(location)
    annotations[SCHEDULED_AT] = local.isoformat().replace("+00:00", "Z")
    job_meta: Obj = {"name": job_name(cron, scheduled), "namespace": meta(cron).get("namespace")}
    if template_meta.get("labels"):
        job_meta["labels"] = dict(template_meta["labels"])
    job_meta["annotations"] = annotations
    job_meta["ownerReferences"] = [controller_ref(cron)]
    job_meta["generation"] = 1
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta,
           "spec": json_copy(template.get("spec") or {}), "status": {}}
    job_defaults(job)
    return job


class CronSync:
    """One sync of one CronJob: what it writes, and its status as it goes."""

    def __init__(self, control: PodControl, cron: Obj, jobs: list[Obj], now: float) -> None:
        self.control = control
        self.cron = cron
        self.jobs = jobs
        self.now = datetime.fromtimestamp(now, UTC)
        self.status: Obj = json_copy(status_of(cron))
        self.changed = False

    def event(self, reason: str, message: str, type_: str = "Normal") -> None:
        self.control.event(self.cron, reason, message, COMPONENT, type_)

    def _active_uids(self) -> set[str]:
        return {str(r.get("uid")) for r in self.status.get("active") or [] if isinstance(r, dict)}

    def _drop_active(self, uid: Any) -> None:
        kept = [r for r in self.status.get("active") or [] if not (isinstance(r, dict) and r.get("uid") == uid)]
        if kept:
            self.status["active"] = kept
        else:
            self.status.pop("active", None)

    def reconcile_jobs(self) -> None:
        """The status's view of the Jobs: finished ones out of ``active``, lastSuccessfulTime, missing ones."""
        active = self._active_uids()
        for job in self.jobs:
            uid = meta(job).get("uid")
            finished = finished_condition(job)
            if str(uid) not in active and finished is None:
                self.event("UnexpectedJob", f"Saw a job that the controller did not create or forgot: "
                                            f"{meta(job).get('name')}", "Warning")
            elif str(uid) in active and finished is not None:
                self._drop_active(uid)
                self.event("SawCompletedJob", f"Saw completed job: {meta(job).get('name')}, condition: {finished}")
            elif finished == "Complete":
                done = _parse_time(status_of(job).get("completionTime"))
                last = _parse_time(self.status.get("lastSuccessfulTime"))
                if done is not None and (last is None or done > last):
                    self.status["lastSuccessfulTime"] = status_of(job)["completionTime"]
        children = {str(meta(j).get("uid")) for j in self.jobs}
        for ref in list(self.status.get("active") or []):
            if not isinstance(ref, dict) or str(ref.get("uid")) in children:
                continue
            try:  # (read from the store: the mirror may be behind)
                self.control.writer.store.get("jobs", str(ref.get("namespace") or ""), str(ref.get("name")))
            except NotFound:
                self.event("MissingJob", f"Active job went missing: {ref.get('name')}")
                self._drop_active(ref.get("uid"))

    def schedule(self) -> float | None:
        """The Job of the most recent unmet schedule time, if it is due; when to look again."""
        spec = spec_of(self.cron)
        if meta(self.cron).get("deletionTimestamp"):
            return None
        zone = spec.get("timeZone")
        try:
            location = load_location(zone) if isinstance(zone, str) else load_location("")
        except ScheduleError as exc:
            self.event("UnknownTimeZone", f'invalid timeZone: "{zone}": {exc}', "Warning")
            return None
        if spec.get("suspend") is True:
            return None
        text = str(spec.get("schedule") or "")
        if "TZ" in text:
            self.event("UnsupportedSchedule", f'CRON_TZ or TZ used in schedule "{text}" is not officially '
                                              "supported, see https://kubernetes.io/docs/concepts/workloads/"
                                              "controllers/cron-jobs/ for more details", "Warning")
        elif isinstance(zone, str):
            text = f"TZ={zone} {text}"
        try:
            schedule = parse(text)
        except ScheduleError as exc:
            self.event("UnparseableSchedule", f'unparseable schedule: "{spec.get("schedule")}" : {exc}', "Warning")
            return None
        try:
            _, scheduled, missed = most_recent_schedule_time(self.cron, self.now, schedule, True)
        except ScheduleError as exc:
            self.event("InvalidSchedule", f"invalid schedule: {spec.get('schedule')} : {exc}", "Warning")
            return None
        if missed > TOO_MANY_MISSED:
            self.event("TooManyMissedTimes", f"too many missed start times: {missed}. Set or decrease "
                                             ".spec.startingDeadlineSeconds or check clock skew", "Warning")
        if scheduled is None:
            return next_sync(self.cron, self.now, schedule)
        deadline = spec.get("startingDeadlineSeconds")
        if isinstance(deadline, int) and scheduled + timedelta(seconds=deadline) < self.now:
            self.event("MissSchedule", f"Missed scheduled time to start a job: {format_datetime(scheduled)}",
                       "Warning")
            return next_sync(self.cron, self.now, schedule)
        name = job_name(self.cron, scheduled)
        already = any(isinstance(r, dict) and r.get("name") == name for r in self.status.get("active") or [])
        if already or _parse_time(self.status.get("lastScheduleTime")) == scheduled:
            return next_sync(self.cron, self.now, schedule)
        policy = spec.get("concurrencyPolicy") or "Allow"
        if policy == "Forbid" and self.status.get("active"):
            self.event("JobAlreadyActive",
                       "Not starting job because prior execution is running and concurrency policy is Forbid")
            return next_sync(self.cron, self.now, schedule)
        if policy == "Replace":
            for ref in list(self.status.get("active") or []):
                self.delete_job(ref)
        made = self.create_job(scheduled, location)
        if made is None:
            return None
        self.status["active"] = [*(self.status.get("active") or []), _reference(made)]
        self.status["lastScheduleTime"] = timestamp(scheduled)
        return next_sync({**self.cron, "status": self.status}, self.now, schedule)

    def create_job(self, scheduled: datetime, location: Any) -> Obj | None:
        """The Job, or the one of that name this CronJob made before (None: another's)."""
        job = job_from_template(self.cron, scheduled, location)
        namespace = str(meta(self.cron).get("namespace") or "default")
        writer = self.control.writer
        try:
            made = writer.create("jobs", namespace, job, finish=generate_job_selector)
        except Conflict:
            existing = writer.store.get("jobs", namespace, job["metadata"]["name"])
            refs = meta(existing).get("ownerReferences") or []
            ours = any(isinstance(r, dict) and r.get("controller") is True and r.get("uid") == meta(self.cron).get("uid")
                       for r in refs)
            if not ours or str(meta(existing).get("uid")) in self._active_uids():
                return None
            return existing
        self.changed = True
        self.event("SuccessfulCreate", f"Created job {meta(made).get('name')}")
        return made

    def delete_job(self, job: Obj) -> None:
        """deleteJob: the Job (its pods follow, in the background) and its place in ``active``."""
        name = str(job.get("name") or meta(job).get("name"))
        namespace = str(job.get("namespace") or meta(job).get("namespace") or "")
        self.control.writer.delete("jobs", namespace, name)
        self._drop_active(job.get("uid") or meta(job).get("uid"))
        self.changed = True
        self.event("SuccessfulDelete", f"Deleted job {name}")

    def clean_up_finished_jobs(self) -> None:
        """cleanupFinishedJobs: beyond the history limits, the finished Jobs that started first go."""
        spec = spec_of(self.cron)
        for kind, limit in (("Complete", spec.get("successfulJobsHistoryLimit")),
                            ("Failed", spec.get("failedJobsHistoryLimit"))):
            if not isinstance(limit, int):
                continue
            done = [j for j in self.jobs if finished_condition(j) == kind]
            if len(done) <= limit:
                continue
            # byJobStartTime: started ones first, oldest first, then by name
            done.sort(key=lambda j: (status_of(j).get("startTime") is None, str(status_of(j).get("startTime") or ""),
                                     str(meta(j).get("name"))))
            for job in done[:len(done) - limit]:
                self.delete_job({"name": meta(job).get("name"), "namespace": meta(job).get("namespace"),
                                 "uid": meta(job).get("uid")})


def sync_cron_job(control: PodControl, cron: Obj, jobs: list[Obj], now: float) -> tuple[bool, float | None]:
    """One sync of a CronJob over its Jobs at ``now``: whether it wrote, and when to sync it again."""
    run = CronSync(control, cron, jobs, now)
    run.reconcile_jobs()
    wake = run.schedule()
    run.clean_up_finished_jobs()
    if run.status != status_of(cron):
        status = run.status

        def mutate(current: Obj) -> Obj | None:
            if current.get("status") == status:
                return None
            current["status"] = status
            return current

        control.writer.update("cronjobs", str(meta(cron).get("namespace") or ""), str(meta(cron).get("name")), mutate,
                              uid=str(meta(cron).get("uid")))
        run.changed = True
    return run.changed, wake
