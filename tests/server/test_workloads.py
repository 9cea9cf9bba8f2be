"""apps/v1 and batch/v1 workloads written through the API: each kind's defaults, its validation on create and
update (upstream's messages and field paths), generation, the status subresource, the scale subresource and
the columns of ``kubectl get``."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

APPS = "/apis/apps/v1/namespaces/default"
BATCH = "/apis/batch/v1/namespaces/default"
MERGE = {"content-type": "application/merge-patch+json"}
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


@pytest.fixture
def client() -> TestClient:
    return api_client()


def template(labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": labels or {"app": "web"}},
            "spec": {"containers": [{"name": "nginx", "image": "nginx"}], **spec}}


def deployment(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), **spec}}


def job(name: str = "pi", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                                           "containers": [{"name": "pi", "image": "perl:5"}]}}, **spec}}


def test_a_deployment_gets_the_apps_v1_defaults_and_its_template_the_pod_spec_ones(client: TestClient) -> None:
    created = client.post(f"{APPS}/deployments", json=deployment(status={"replicas": 9})).json()
    spec = created["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert (spec["revisionHistoryLimit"], spec["progressDeadlineSeconds"]) == (10, 600)
    pod_spec = spec["template"]["spec"]
    assert (pod_spec["restartPolicy"], pod_spec["dnsPolicy"], pod_spec["schedulerName"]) == \
        ("Always", "ClusterFirst", "default-scheduler")
    assert pod_spec["containers"][0]["imagePullPolicy"] == "Always"
    # the pod-only defaults (SetDefaults_Pod, Priority admission) are not a template's
    assert "enableServiceLinks" not in pod_spec and "priority" not in pod_spec
    assert created["metadata"]["generation"] == 1
    assert created["status"] == {}  # PrepareForCreate: whatever status was sent


def test_the_other_kinds_defaults(client: TestClient) -> None:
    sts = client.post(f"{APPS}/statefulsets", json={
        "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}).json()["spec"]
    assert (sts["podManagementPolicy"], sts["updateStrategy"], sts["replicas"]) == \
        ("OrderedReady", {"type": "RollingUpdate", "rollingUpdate": {"partition": 0, "maxUnavailable": 1}}, 1)
    assert sts["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    ds = client.post(f"{APPS}/daemonsets", json={
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}).json()["spec"]
    assert ds["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    rs = client.post(f"{APPS}/replicasets", json={
        "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}).json()["spec"]
    assert rs["replicas"] == 1
    cron = client.post(f"{BATCH}/cronjobs", json={
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c"},
        "spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": job()["spec"]}}}).json()["spec"]
    assert (cron["concurrencyPolicy"], cron["suspend"], cron["successfulJobsHistoryLimit"],
            cron["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    assert cron["jobTemplate"]["spec"]["backoffLimit"] == 6


def test_a_job_gets_its_defaults_and_a_selector_generated_from_its_uid(client: TestClient) -> None:
    created = client.post(f"{BATCH}/jobs", json=job()).json()
    spec, uid = created["spec"], created["metadata"]["uid"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"], spec["completionMode"],
            spec["suspend"], spec["podReplacementPolicy"], spec["manualSelector"]) == \
        (1, 1, 6, "NonIndexed", False, "TerminatingOrFailed", False)
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"]["labels"] == {
        "job-name": "pi", "batch.kubernetes.io/job-name": "pi", "controller-uid": uid,
        "batch.kubernetes.io/controller-uid": uid}
    parallel = client.post(f"{BATCH}/jobs", json=job("q", parallelism=3, backoffLimitPerIndex=1,
                                                       completionMode="Indexed", completions=3)).json()["spec"]
    assert parallel["backoffLimit"] == 2**31 - 1  # a per-index limit: no global one


def test_a_workload_is_validated_on_create_with_upstreams_messages(client: TestClient) -> None:
    bad = deployment(replicas=-1)
    bad["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    r = client.post(f"{APPS}/deployments", json=bad)
    assert r.status_code == 422
    causes = {(c["field"], c["message"]) for c in r.json()["details"]["causes"]}
    assert ("spec.replicas", "Invalid value: -1: must be greater than or equal to 0") in causes
    assert ("spec.template.metadata.labels",
            'Invalid value: {"app":"other"}: `selector` does not match template `labels`') in causes
    r = client.post(f"{BATCH}/jobs", json=job(parallelism=-2))
    assert r.status_code == 422 and "spec.parallelism: Invalid value: -2" in r.json()["message"]


def test_the_selector_is_immutable_and_the_generation_counts_spec_changes(client: TestClient) -> None:
    client.post(f"{APPS}/deployments", json=deployment())
    moved = {"spec": {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": {"app": "x"}}}}}
    r = client.patch(f"{APPS}/deployments/web", json=moved, headers=MERGE)
    assert r.status_code == 422
    assert r.json()["message"] == ('Deployment.apps "web" is invalid: spec.selector: Invalid value: '
                                   '{"matchLabels":{"app":"x"}}: field is immutable')
    labelled = client.patch(f"{APPS}/deployments/web", json={"metadata": {"labels": {"a": "b"}}}, headers=MERGE)
    assert labelled.json()["metadata"]["generation"] == 1
    # a replace without the defaults is the same spec once defaulted: no new generation
    current = labelled.json()
    sent = {**deployment(), "metadata": {"name": "web", "resourceVersion": current["metadata"]["resourceVersion"]}}
    sent["spec"]["replicas"] = 1
    replaced = client.put(f"{APPS}/deployments/web", json=sent)
    assert replaced.status_code == 200 and replaced.json()["metadata"]["generation"] == 1
    scaled = client.patch(f"{APPS}/deployments/web", json={"spec": {"replicas": 4}}, headers=MERGE)
    assert scaled.json()["metadata"]["generation"] == 2


def test_a_statefulset_changes_only_what_upstream_lets_change(client: TestClient) -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template(), "serviceName": "db"}}
    client.post(f"{APPS}/statefulsets", json=sts)
    assert client.patch(f"{APPS}/statefulsets/db", json={"spec": {"replicas": 3}}, headers=MERGE).status_code == 200
    r = client.patch(f"{APPS}/statefulsets/db", json={"spec": {"serviceName": "other"}}, headers=MERGE)
    assert r.status_code == 422
    assert r.json()["details"]["causes"][0] == {
        "reason": "FieldValueForbidden", "field": "spec",
        "message": "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                   "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and "
                   "'minReadySeconds' are forbidden"}


def test_a_running_jobs_template_and_completions_are_immutable(client: TestClient) -> None:
    client.post(f"{BATCH}/jobs", json=job())
    r = client.patch(f"{BATCH}/jobs/pi", json={"spec": {"completions": 2}}, headers=MERGE)
    assert r.status_code == 422 and "spec.completions: Invalid value: 2: field is immutable" in r.json()["message"]
    r = client.patch(f"{BATCH}/jobs/pi", json={"spec": {"template": {"spec": {"containers": [
        {"name": "pi", "image": "perl:6"}]}}}}, headers=MERGE)
    assert r.status_code == 422 and "spec.template: Invalid value" in r.json()["message"]
    client.post(f"{BATCH}/jobs", json=job("later", suspend=True))
    r = client.patch(f"{BATCH}/jobs/later", json={"spec": {"template": {"spec": {"containers": [
        {"name": "pi", "image": "perl:6"}]}}}}, headers=MERGE)
    assert r.status_code == 200  # a suspended Job's template may change


def test_status_is_written_through_the_status_subresource_only(client: TestClient) -> None:
    client.post(f"{APPS}/deployments", json=deployment())
    ignored = client.patch(f"{APPS}/deployments/web", json={"status": {"replicas": 3}}, headers=MERGE).json()
    assert ignored["status"] == {}
    written = client.patch(f"{APPS}/deployments/web/status", json={"status": {"replicas": 3}}, headers=MERGE).json()
    assert written["status"] == {"replicas": 3} and written["metadata"]["generation"] == 1


def test_the_scale_subresource_reads_and_writes_the_replicas(client: TestClient) -> None:
    client.post(f"{APPS}/deployments", json=deployment(replicas=2))
    scale = client.get(f"{APPS}/deployments/web/scale").json()
    assert (scale["kind"], scale["apiVersion"], scale["spec"], scale["status"]) == \
        ("Scale", "autoscaling/v1", {"replicas": 2}, {"replicas": 0, "selector": "app=web"})
    written = client.patch(f"{APPS}/deployments/web/scale", json={"spec": {"replicas": 3}}, headers=MERGE)
    assert written.status_code == 200 and written.json()["spec"] == {"replicas": 3}
    stored = client.get(f"{APPS}/deployments/web").json()
    assert (stored["spec"]["replicas"], stored["metadata"]["generation"]) == (3, 2)
    r = client.patch(f"{APPS}/deployments/web/scale", json={"spec": {"replicas": -1}}, headers=MERGE)
    assert r.status_code == 422
    assert r.json()["message"] == ('Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: '
                                   'must be greater than or equal to 0')
    put = {**written.json(), "spec": {"replicas": 1}}
    assert client.put(f"{APPS}/deployments/web/scale", json=put).json()["spec"] == {"replicas": 1}
    stale = {**put, "spec": {"replicas": 5}}  # (the resourceVersion read before the last write)
    assert client.put(f"{APPS}/deployments/web/scale", json=stale).status_code == 409
    assert client.get(f"{BATCH}/jobs/none/scale").status_code == 404  # (jobs have no scale)


def test_kubectl_get_columns(client: TestClient) -> None:
    client.post(f"{APPS}/deployments", json=deployment(replicas=2))
    table = client.get(f"{APPS}/deployments", headers=TABLE).json()
    assert [c["name"] for c in table["columnDefinitions"]] == \
        ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]
    cells = table["rows"][0]["cells"]
    assert cells[:4] == ["web", "0/2", 0, 0] and cells[5:] == ["nginx", "nginx", "app=web"]
    client.post(f"{BATCH}/jobs", json=job())
    cells = client.get(f"{BATCH}/jobs", headers=TABLE).json()["rows"][0]["cells"]
    assert cells[:4] == ["pi", "Running", "0/1", ""]


def test_fields_the_schema_lacks_are_dropped_with_a_warning_or_refused_when_strict(client: TestClient) -> None:
    sent = deployment()
    sent["spec"]["color"] = "blue"
    sent["spec"]["template"]["spec"]["containers"][0]["colour"] = "red"
    r = client.post(f"{APPS}/deployments", json=sent)
    assert r.status_code == 201
    assert 'unknown field \\"spec.color\\"' in r.headers["warning"]
    assert "color" not in r.json()["spec"] and "colour" not in r.json()["spec"]["template"]["spec"]["containers"][0]
    assert "color" not in client.get(f"{APPS}/deployments/web").json()["spec"]
    r = client.post(f"{APPS}/deployments?fieldValidation=Strict", json={**sent, "metadata": {"name": "strict"}})
    assert r.status_code == 400 and 'unknown field "spec.color"' in r.json()["message"]


def test_a_strategic_merge_patch_merges_the_pod_templates_containers_by_name(client: TestClient) -> None:
    sent = deployment()
    sent["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    client.post(f"{APPS}/deployments", json=sent)
    patched = client.patch(f"{APPS}/deployments/web", json={"spec": {"template": {"spec": {"containers": [
        {"name": "nginx", "image": "nginx:2", "env": [{"name": "B", "value": "2"}]}]}}}},
        headers={"content-type": "application/strategic-merge-patch+json"}).json()
    [container] = patched["spec"]["template"]["spec"]["containers"]  # (kubectl set image's patch)
    assert container["image"] == "nginx:2"
    assert container["env"] == [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    assert container["terminationMessagePath"] == "/dev/termination-log"  # the rest of the container kept


def test_a_server_side_apply_merges_the_pod_templates_containers_by_name(client: TestClient) -> None:
    applied = deployment()
    applied["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "1"}]
    apply = {"content-type": "application/apply-patch+yaml"}
    r = client.patch(f"{APPS}/deployments/web?fieldManager=one", json=applied, headers=apply)
    assert r.status_code == 201, r.text
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"template": {"spec": {"containers": [{"name": "nginx", "env": [{"name": "B", "value": "2"}]}]}}}}
    r = client.patch(f"{APPS}/deployments/web?fieldManager=two", json=other, headers=apply)
    assert r.status_code == 200, r.text
    [container] = r.json()["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "nginx" and container["env"] == [{"name": "A", "value": "1"},
                                                                  {"name": "B", "value": "2"}]


def test_a_cron_job_is_validated_with_its_job_template_under_its_own_paths(client: TestClient) -> None:
    template = job()["spec"]
    template["template"]["spec"]["restartPolicy"] = "Always"
    r = client.post(f"{BATCH}/cronjobs", json={
        "apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "c" * 53},
        "spec": {"concurrencyPolicy": "Sometimes", "successfulJobsHistoryLimit": -1, "jobTemplate": {"spec": template}}})
    assert r.status_code == 422
    assert [(c["field"], c["message"]) for c in r.json()["details"]["causes"]] == [
        ("metadata.name", f'Invalid value: "{"c" * 53}": must be no more than 52 characters'),
        ("spec.schedule", "Required value"),
        ("spec.concurrencyPolicy", 'Unsupported value: "Sometimes": supported values: "Allow", "Forbid", "Replace"'),
        ("spec.jobTemplate.spec.template.spec.restartPolicy", 'Required value: valid values: "OnFailure", "Never"'),
        ("spec.successfulJobsHistoryLimit", "Invalid value: -1: must be greater than or equal to 0")]


def _cron_job(name: str, schedule: str, time_zone: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedule": schedule, "jobTemplate": {"spec": job()["spec"]}}
    if time_zone is not None:
        spec["timeZone"] = time_zone
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name}, "spec": spec}


@pytest.mark.parametrize("schedule,time_zone,causes", [
    # robfig/cron's ParseStandard, its texts
    ("bogus", None, [("spec.schedule", 'Invalid value: "bogus": expected exactly 5 fields, found 1: [bogus]')]),
    ("61 * * * *", None, [("spec.schedule", 'Invalid value: "61 * * * *": end of range (61) above maximum (59): 61')]),
    ("@fortnightly", None, [("spec.schedule", 'Invalid value: "@fortnightly": unrecognized descriptor: @fortnightly')]),
    # a time zone goes in timeZone, not in the schedule
    ("TZ=UTC 0 3 * * *", None, [("spec.schedule", 'Invalid value: "TZ=UTC 0 3 * * *": cannot use TZ or CRON_TZ in '
                                                  "schedule, use timeZone field instead")]),
    ("0 3 * * *", "Mars/Olympus", [("spec.timeZone", 'Invalid value: "Mars/Olympus": unknown time zone Mars/Olympus')]),
    ("0 3 * * *", "../etc", [("spec.timeZone", 'Invalid value: "../etc": unknown time zone ../etc')]),
    ("0 3 * * *", "", [("spec.timeZone", 'Invalid value: "": timeZone must be nil or non-empty string')]),
    ("0 3 * * *", "Local", [("spec.timeZone", 'Invalid value: "Local": timeZone must be an explicit time zone as '
                                              "defined in https://www.iana.org/time-zones")]),
    ("@every 90m", "Europe/Paris", []),
])
def test_a_cron_jobs_schedule_and_time_zone_are_checked_as_kube_apiserver_does(
        client: TestClient, schedule: str, time_zone: str | None, causes: list[tuple[str, str]]) -> None:
    r = client.post(f"{BATCH}/cronjobs", json=_cron_job("nightly", schedule, time_zone))
    if not causes:
        assert r.status_code == 201, r.text
        return
    assert r.status_code == 422
    assert [(c["field"], c["message"]) for c in r.json()["details"]["causes"]] == causes


def test_an_update_keeps_a_long_name_and_is_checked_against_the_old_schedule(client: TestClient) -> None:
    created = client.post(f"{BATCH}/cronjobs", json=_cron_job("nightly", "0 3 * * *", "Europe/Paris"))
    assert created.status_code == 201
    updated = created.json()
    updated["spec"]["schedule"] = "0 4 * * *"
    assert client.put(f"{BATCH}/cronjobs/nightly", json=updated).status_code == 200
    r = client.patch(f"{BATCH}/cronjobs/nightly", json={"spec": {"schedule": "CRON_TZ=UTC 0 5 * * *"}}, headers=MERGE)
    assert r.status_code == 422 and "use timeZone field instead" in r.text


def test_a_jobs_generated_selector_leaves_the_object_it_was_made_from_alone() -> None:
    """A create tried again under another generated name starts from the same object: the labels and the selector
    generateSelector adds (the Job's name and uid) must not stay in it."""
    import copy

    from dralloc.server.registry.workloads import JOBS

    sent = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "a", "uid": "u1"},
            "spec": {"template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}},
                     "selector": {"matchLabels": {"app": "x"}}}}
    before = copy.deepcopy(sent)
    first = JOBS.with_system_fields(sent)
    assert sent == before
    assert first["spec"]["template"]["metadata"]["labels"] == {
        "app": "x", "batch.kubernetes.io/job-name": "a", "job-name": "a", "controller-uid": "u1",
        "batch.kubernetes.io/controller-uid": "u1"}
    assert first["spec"]["selector"]["matchLabels"] == {"app": "x", "batch.kubernetes.io/controller-uid": "u1"}
    second = JOBS.with_system_fields({**sent, "metadata": {"name": "b", "uid": "u2"}})
    assert second["spec"]["template"]["metadata"]["labels"]["controller-uid"] == "u2" and sent == before
    bare = {"metadata": {"name": "c", "uid": "u3"}, "spec": {}}  # (no template, no selector: both made)
    assert JOBS.with_system_fields(bare)["spec"]["selector"] == {"matchLabels": {
        "batch.kubernetes.io/controller-uid": "u3"}} and bare == {"metadata": {"name": "c", "uid": "u3"}, "spec": {}}
