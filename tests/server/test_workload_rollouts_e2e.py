"""End to end with the real kubectl against `dralloc serve --fake-kubelet`: `kubectl rollout pause|resume`, a
progress deadline that `kubectl rollout status` reports, a pod labelled out of its ReplicaSet (released,
replaced) and back in (adopted)."""

from __future__ import annotations

import pytest
import test_workloads_e2e
from test_workloads_e2e import Kubectl, _eventually

kubectl = test_workloads_e2e.kubectl  # (the fixture: a server with --fake-kubelet and two nodes)

pytestmark = pytest.mark.e2e


def _replica_sets(kubectl: Kubectl) -> list[list[str]]:
    return [line.split() for line in kubectl("get", "rs", "--no-headers").stdout.splitlines() if line.strip()]


def test_rollout_pause_holds_a_new_template_back_until_resume(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    assert kubectl("rollout", "pause", "deployment/web").stdout.strip() == "deployment.apps/web paused"
    kubectl("set", "image", "deployment/web", "nginx=nginx:2")
    kubectl("scale", "deployment/web", "--replicas=3")
    _eventually(lambda: [r[1:4] for r in _replica_sets(kubectl)] == [["3", "3", "3"]])
    reason = kubectl("get", "deploy", "web", "-o",
                     "jsonpath={.status.conditions[?(@.type=='Progressing')].reason}").stdout
    assert reason == "DeploymentPaused"
    assert kubectl("rollout", "resume", "deployment/web").stdout.strip() == "deployment.apps/web resumed"
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    _eventually(lambda: kubectl("get", "pods", "-l", "app=web", "-o",
                                "jsonpath={.items[*].spec.containers[0].image}").stdout.split() == ["nginx:2"] * 3)
    assert len(_replica_sets(kubectl)) == 2


def test_rollout_status_fails_once_the_progress_deadline_passes(kubectl: Kubectl) -> None:
    stuck = """apiVersion: apps/v1
kind: Deployment
metadata: {name: stuck}
spec:
  replicas: 1
  progressDeadlineSeconds: 2
  selector: {matchLabels: {app: stuck}}
  template:
    metadata: {labels: {app: stuck}}
    spec:
      nodeSelector: {disk: none-has-it}
      containers: [{name: main, image: "nginx:1"}]
"""
    kubectl("apply", "-f", "-", stdin=stuck)
    _eventually(lambda: kubectl("get", "deploy", "stuck", "-o",
                                "jsonpath={.status.conditions[?(@.type=='Progressing')].reason}").stdout
                == "ProgressDeadlineExceeded")
    failed = kubectl("rollout", "status", "deployment/stuck", "--timeout=10s", check=False)
    assert failed.returncode == 1
    assert failed.stderr.strip() == 'error: deployment "stuck" exceeded its progress deadline'


def test_a_pod_labelled_out_of_its_replicaset_is_released_and_replaced(kubectl: Kubectl) -> None:
    kubectl("create", "deployment", "web", "--image=nginx:1", "--replicas=2")
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    name = kubectl("get", "pods", "-l", "app=web", "-o", "jsonpath={.items[0].metadata.name}").stdout
    assert kubectl("label", "pod", name, "app-").stdout.strip() == f"pod/{name} unlabeled"
    _eventually(lambda: len(kubectl("get", "pods", "-l", "app=web", "--no-headers").stdout.splitlines()) == 2)
    owners = kubectl("get", "pod", name, "-o", "jsonpath={.metadata.ownerReferences}").stdout
    assert owners == ""  # released: an orphan now
    kubectl("rollout", "status", "deployment/web", "--timeout=30s")
    assert len(kubectl("get", "pods", "--no-headers").stdout.splitlines()) == 3
    # labelled back: adopted again, and one pod too many goes
    kubectl("label", "pod", name, "app=web")
    _eventually(lambda: len(kubectl("get", "pods", "--no-headers").stdout.splitlines()) == 2)


STATEFUL = """apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  replicas: 2
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 0
      containers: [{name: main, image: "postgres:1"}]
"""


def _images(kubectl: Kubectl, selector: str) -> list[str]:
    out = kubectl("get", "pods", "-l", selector, "-o", "jsonpath={.items[*].spec.containers[0].image}").stdout
    return sorted(out.split())


def test_rollout_history_and_undo_of_a_statefulset_and_a_daemonset(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=STATEFUL)
    kubectl("rollout", "status", "statefulset/db", "--timeout=30s")
    kubectl("set", "image", "statefulset/db", "main=postgres:2")
    kubectl("rollout", "status", "statefulset/db", "--timeout=30s")
    history = kubectl("rollout", "history", "statefulset/db").stdout.splitlines()
    assert history[0].strip() == "statefulset.apps/db" and history[1].split() == ["REVISION", "CHANGE-CAUSE"]
    assert [line.split() for line in history[2:] if line.strip()] == [["1", "<none>"], ["2", "<none>"]]
    shown = kubectl("rollout", "history", "statefulset/db", "--revision=1").stdout
    assert "postgres:1" in shown and "postgres:2" not in shown
    assert kubectl("rollout", "undo", "statefulset/db").stdout.strip() == "statefulset.apps/db rolled back"
    kubectl("rollout", "status", "statefulset/db", "--timeout=30s")
    _eventually(lambda: _images(kubectl, "app=db") == ["postgres:1", "postgres:1"])
    revisions = kubectl("get", "controllerrevisions", "--no-headers").stdout.splitlines()
    assert sorted(line.split()[1:3] for line in revisions) == [["statefulset.apps/db", "2"],
                                                               ["statefulset.apps/db", "3"]]
    # a DaemonSet the same way
    kubectl("create", "-f", "-", stdin=test_workloads_e2e.AGENT)
    kubectl("rollout", "status", "daemonset/agent", "--timeout=30s")
    kubectl("set", "image", "daemonset/agent", "agent=busybox:2")
    kubectl("rollout", "status", "daemonset/agent", "--timeout=30s")
    assert kubectl("rollout", "undo", "daemonset/agent").stdout.strip() == "daemonset.apps/agent rolled back"
    kubectl("rollout", "status", "daemonset/agent", "--timeout=30s")
    _eventually(lambda: _images(kubectl, "app=agent") == ["busybox:1", "busybox:1"])
    history = kubectl("rollout", "history", "daemonset/agent").stdout.splitlines()
    assert [line.split()[0] for line in history[2:] if line.strip()] == ["2", "3"]


CRON = """apiVersion: batch/v1
kind: CronJob
metadata: {name: tick}
spec:
  schedule: "@every 2s"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: tick, image: "busybox:1", command: ["true"]}]
"""


def test_a_cronjob_makes_jobs_on_schedule_and_create_job_from_it_works(kubectl: Kubectl) -> None:
    made = kubectl("apply", "-f", "-", stdin=CRON)
    assert made.stdout.strip() == "cronjob.batch/tick created"
    _eventually(lambda: any(line.startswith("tick-") for line in
                            kubectl("get", "jobs", "--no-headers").stdout.splitlines()), seconds=30)
    first = next(line.split()[0] for line in kubectl("get", "jobs", "--no-headers").stdout.splitlines())
    kubectl("wait", "--for=condition=complete", f"job/{first}", "--timeout=30s")
    _eventually(lambda: kubectl("get", "cronjob", "tick", "-o", "jsonpath={.status.lastSuccessfulTime}").stdout != "")
    row = kubectl("get", "cronjob", "tick", "--no-headers").stdout.split()
    assert row[:3] == ["tick", "@every", "2s"] and row[-2] != "<none>"  # LAST SCHEDULE is set
    created = kubectl("create", "job", "by-hand", "--from=cronjob/tick").stdout.strip()
    assert created == "job.batch/by-hand created"
    kubectl("wait", "--for=condition=complete", "job/by-hand", "--timeout=30s")
    owner = kubectl("get", "job", "by-hand", "-o", "jsonpath={.metadata.ownerReferences[0].name}").stdout
    assert owner == "tick"
    events = kubectl("get", "events", "--field-selector", "involvedObject.kind=CronJob", "-o",
                     "jsonpath={.items[*].reason}").stdout.split()
    assert "SuccessfulCreate" in events and "SawCompletedJob" in events
