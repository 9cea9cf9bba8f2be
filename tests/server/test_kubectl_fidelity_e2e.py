"""End to end: the everyday kubectl commands of a driver author or platform engineer against `dralloc serve`,
printing what they print against a kube-apiserver (cluster-info, services, describe namespace, ...)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from served import KUBECTL, Server

pytestmark = [pytest.mark.e2e, pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path)
    yield s
    s.stop()


@pytest.fixture
def kubectl(server: Server, tmp_path: Path):
    cfg = server.kubeconfig(tmp_path / "kubeconfig")
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}

    def run(*args: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([KUBECTL or "kubectl", *args], capture_output=True, text=True, env=env,
                              timeout=timeout)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    return run


def test_cluster_info_names_the_control_plane(kubectl, server: Server) -> None:
    out = kubectl("cluster-info").stdout
    assert out.splitlines()[0].endswith(f"Kubernetes control plane is running at {server.url}"), out
    assert "To further debug and diagnose cluster problems" in out


def test_get_services_shows_the_kubernetes_service_as_a_cluster_does(kubectl, server: Server) -> None:
    lines = kubectl("get", "svc", "-A").stdout.splitlines()
    assert lines[0].split() == ["NAMESPACE", "NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"]
    assert lines[1].split()[:6] == ["default", "kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    assert kubectl("get", "svc", "kubernetes", "-o", "jsonpath={.spec.ports[0].targetPort}").stdout == \
        str(server.port)
    assert "service/kubernetes" in kubectl("get", "all").stdout
    described = kubectl("describe", "svc", "kubernetes").stdout
    assert f"Endpoints:                127.0.0.1:{server.port}\n" in described
    assert kubectl("create", "service", "clusterip", "web", "--tcp=80:8080").stdout == "service/web created\n"
    lines = kubectl("get", "svc", "web", "-o", "wide").stdout.splitlines()
    assert lines[0].split() == ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE", "SELECTOR"]
    assert lines[1].split()[:5] == ["web", "ClusterIP", "10.96.0.2", "<none>", "80/TCP"]
    assert lines[1].split()[-1] == "app=web"
    assert kubectl("delete", "svc", "web").stdout == 'service "web" deleted\n'


def test_cluster_info_dump_dumps_the_cluster_as_it_does_a_kube_apiservers(kubectl) -> None:
    out = kubectl("cluster-info", "dump").stdout  # nodes, then per namespace events, workloads, services, pods
    for kind in ("NodeList", "EventList", "ReplicationControllerList", "ServiceList", "DaemonSetList",
                 "DeploymentList", "ReplicaSetList", "PodList"):
        assert f'"kind": "{kind}"' in out, kind
    assert "No resources found" in kubectl("get", "deploy,rs,ds,sts,rc").stderr


def test_describe_namespace_says_it_has_no_quota_and_no_limit_range(kubectl) -> None:
    out = kubectl("describe", "ns", "default").stdout
    assert out.rstrip().endswith("Status:       Active\n\nNo resource quota.\n\nNo LimitRange resource."), out


POD = """apiVersion: v1
kind: Pod
metadata: {name: web, labels: {app: web}}
spec:
  nodeName: node-1
  containers: [{name: main, image: "nginx:1"}]
"""
NODE = """apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  allocatable: {cpu: "8", memory: 32Gi, pods: "110"}
  addresses: [{type: InternalIP, address: 172.18.0.2}]
"""


def test_logs_and_top_fail_as_on_a_cluster_without_kubelets_nor_metrics(kubectl, tmp_path: Path) -> None:
    (tmp_path / "objs.yaml").write_text(NODE + "---\n" + POD)
    kubectl("apply", "-f", str(tmp_path / "objs.yaml"))
    logs = kubectl("logs", "web", "--tail=1", check=False)
    assert logs.returncode == 1
    assert logs.stderr.strip() == ('Error from server: Get "https://172.18.0.2:10250/containerLogs/default/web/main'
                                   '?tailLines=1": dial tcp 172.18.0.2:10250: connect: connection refused')
    for args in (("top", "pod"), ("top", "node")):
        top = kubectl(*args, check=False)
        assert top.returncode == 1 and top.stderr.strip() == "error: Metrics API not available"


def test_exec_cp_and_attach_fail_where_a_cluster_without_kubelets_fails(kubectl, tmp_path: Path) -> None:
    (tmp_path / "objs.yaml").write_text(NODE + "---\n" + POD)
    kubectl("apply", "-f", str(tmp_path / "objs.yaml"))
    dial = "Error from server: error dialing backend: dial tcp 172.18.0.2:10250: connect: connection refused"
    for args in (("exec", "web", "--", "ls"), ("cp", "web:/etc/hosts", str(tmp_path / "hosts"))):
        out = kubectl(*args, check=False, timeout=30)
        assert out.returncode == 1 and out.stderr.strip() == dial, out.stderr
    wrong = kubectl("exec", "web", "-c", "nope", "--", "ls", check=False)
    assert wrong.stderr.strip() == "Error from server (BadRequest): container nope is not valid for pod web"


DRA = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: node-1, generation: 1, resourceSliceCount: 1},
       devices: [{name: gpu-0}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  terminationGracePeriodSeconds: 1
  containers: [{name: main, image: "x:1", resources: {claims: [{name: gpu}]}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
"""


def test_a_foreground_delete_of_a_pod_with_a_generated_claim_waits_for_both_and_returns(kubectl,
                                                                                        tmp_path: Path) -> None:
    (tmp_path / "objs.yaml").write_text(NODE + "---\n" + DRA)
    kubectl("apply", "-f", str(tmp_path / "objs.yaml"))
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/trainer", "--timeout=30s")
    claim = kubectl("get", "pod", "trainer", "-o", "jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}")
    out = kubectl("delete", "pod", "trainer", "--cascade=foreground", "--wait", "--timeout=30s", timeout=40)
    assert out.stdout.strip() == 'pod "trainer" deleted'
    assert kubectl("get", "pods,resourceclaims", "-o", "name").stdout == ""
    gone = kubectl("get", "resourceclaim", claim.stdout, check=False)
    assert gone.returncode == 1 and "NotFound" in gone.stderr


@pytest.mark.parametrize("how", ["eviction", "delete"])
def test_drain_evicts_the_pods_of_a_node_and_their_claims_are_released(kubectl, tmp_path: Path, how: str) -> None:
    # kubectl drain evicts through pods/eviction (found in discovery) with protobuf bodies; with
    # --disable-eviction it deletes, with a protobuf DeleteOptions body.
    (tmp_path / "objs.yaml").write_text(NODE + "---\n" + DRA)
    kubectl("apply", "-f", str(tmp_path / "objs.yaml"))
    kubectl("wait", "--for=jsonpath={.spec.nodeName}=node-1", "pod/trainer", "--timeout=30s")
    claim = kubectl("get", "pod", "trainer", "-o", "jsonpath={.status.resourceClaimStatuses[0].resourceClaimName}")
    extra = ["--disable-eviction"] if how == "delete" else []
    out = kubectl("drain", "node-1", "--force", "--grace-period=1", "--timeout=30s", *extra, timeout=40)
    verb = "evicted" if how == "eviction" else "deleted"
    assert f"pod/trainer {verb}" in out.stdout and "node/node-1 drained" in out.stdout, out.stdout + out.stderr
    assert kubectl("get", "node", "node-1", "-o", "jsonpath={.spec.unschedulable}").stdout == "true"
    assert kubectl("get", "pods,resourceclaims", "-o", "name").stdout == ""
    gone = kubectl("get", "resourceclaim", claim.stdout, check=False)
    assert gone.returncode == 1 and "NotFound" in gone.stderr


def test_priority_classes_as_kubectl_creates_them_give_pods_their_priority(kubectl, tmp_path: Path) -> None:
    # kubectl create priorityclass sends protobuf; get prints kube-apiserver's columns
    kubectl("create", "priorityclass", "high", "--value=1000", "--description=important")
    kubectl("create", "priorityclass", "polite", "--value=10", "--preemption-policy=Never", "--global-default")
    second = kubectl("create", "priorityclass", "other", "--value=1", "--global-default", check=False)
    assert second.returncode == 1 and "PriorityClass polite is already marked as default" in second.stderr
    table = kubectl("get", "pc").stdout.splitlines()
    assert table[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert [row.split()[:3] for row in table[1:]] == [
        ["high", "1000", "false"], ["polite", "10", "true"], ["system-cluster-critical", "2000000000", "false"],
        ["system-node-critical", "2000001000", "false"]]
    (tmp_path / "pods.yaml").write_text(NODE + "---\n" + POD.replace(
        "  nodeName: node-1\n", "  nodeName: node-1\n  priorityClassName: high\n") + "---\n" + POD.replace(
        "name: web", "name: plain"))
    kubectl("apply", "-f", str(tmp_path / "pods.yaml"))
    got = kubectl("get", "pods", "-o", "custom-columns=N:.metadata.name,C:.spec.priorityClassName,P:.spec.priority,"
                                       "E:.spec.preemptionPolicy", "--no-headers").stdout.split("\n")
    assert [line.split() for line in got if line] == [["plain", "polite", "10", "Never"],
                                                      ["web", "high", "1000", "PreemptLowerPriority"]]
    gone = kubectl("delete", "pc", "system-node-critical", check=False)
    assert gone.returncode == 1 and "this is a system priority class and cannot be deleted" in gone.stderr


def test_leases_are_applied_listed_and_deleted_with_their_namespace(kubectl, tmp_path: Path) -> None:
    (tmp_path / "lease.yaml").write_text("""apiVersion: v1
kind: Namespace
metadata: {name: drivers}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: gpu-controller, namespace: drivers}
spec: {holderIdentity: gpu-controller-7d9f_1, leaseDurationSeconds: 15}
""")
    kubectl("apply", "-f", str(tmp_path / "lease.yaml"))
    rows = kubectl("get", "leases", "-n", "drivers").stdout.splitlines()
    assert rows[0].split() == ["NAME", "HOLDER", "AGE"] and rows[1].split()[:2] == ["gpu-controller",
                                                                                    "gpu-controller-7d9f_1"]
    kubectl("delete", "namespace", "drivers", "--timeout=30s", timeout=40)
    assert kubectl("get", "leases", "-A", "-o", "name").stdout == ""


def test_everyday_pod_commands_print_what_they_print_on_a_cluster(kubectl, tmp_path: Path) -> None:
    (tmp_path / "objs.yaml").write_text(NODE + "---\n" + POD)
    kubectl("apply", "-f", str(tmp_path / "objs.yaml"))
    assert kubectl("label", "pod", "web", "tier=front").stdout.strip() == "pod/web labeled"
    taken = kubectl("label", "pod", "web", "tier=back", check=False)
    assert taken.returncode == 1 and "'tier' already has a value (front), and --overwrite is false" in taken.stderr
    assert kubectl("label", "pod", "web", "tier=back", "--overwrite").stdout.strip() == "pod/web labeled"
    assert kubectl("label", "pod", "web", "tier-").stdout.strip() == "pod/web unlabeled"
    assert kubectl("annotate", "pod", "web", "note=x").stdout.strip() == "pod/web annotated"
    assert kubectl("annotate", "pod", "web", "note-").stdout.strip() == "pod/web annotated"
    kubectl("patch", "pod", "web", "--type=strategic", "-p", '{"spec":{"containers":[{"name":"main","image":"nginx:2"}]}}')
    kubectl("patch", "pod", "web", "--type=merge", "-p", '{"metadata":{"labels":{"m":"1"}}}')
    kubectl("patch", "pod", "web", "--type=json", "-p", '[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:3"}]')
    failed = kubectl("patch", "pod", "web", "--type=json", "-p", '[{"op":"test","path":"/metadata/name","value":"x"}]',
                     check=False)
    assert failed.stderr.strip() == ("The request is invalid: the server rejected our request due to an error in "
                                     "our request")
    columns = kubectl("get", "pods", "-o", "custom-columns=NAME:.metadata.name,NODE:.spec.nodeName,"
                                         "IMAGE:.spec.containers[*].image,LABELS:.metadata.labels.m").stdout
    assert columns.split("\n")[1].split() == ["web", "node-1", "nginx:3", "1"]
    for selector, found in (("spec.nodeName=node-1", True), ("status.phase=Pending", True),
                            ("metadata.name=web,status.phase!=Failed", True), ("spec.nodeName=node-2", False)):
        names = kubectl("get", "pods", "--field-selector", selector, "-o", "name").stdout.split()
        assert names == (["pod/web"] if found else []), selector
    bad = kubectl("get", "pods", "--field-selector", "spec.foo=bar", check=False)
    assert "field label not supported: spec.foo" in bad.stderr


def test_kubectl_debug_says_ephemeral_containers_are_not_served_instead_of_crashing(kubectl) -> None:
    # kubectl tells an unserved subresource from a missing pod by the empty details of the router's 404;
    # without them it dereferenced nil details and panicked
    kubectl("run", "web", "--image=nginx")
    out = kubectl("debug", "web", "--image=busybox", check=False)
    assert out.returncode == 1 and "panic" not in out.stderr, out.stderr
    assert "ephemeral containers are disabled for this cluster" in out.stderr, out.stderr


def test_get_sorts_by_a_field_of_the_objects_as_on_a_cluster(kubectl, tmp_path: Path) -> None:
    # --sort-by asks for the Table with includeObject=Object and sorts the rows by the objects' fields
    slices = [f"""apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {{name: {name}}}
spec: {{driver: {driver}, nodeName: node-1, pool: {{name: node-1, generation: 1, resourceSliceCount: 1}}}}
""" for name, driver in (("a-slice", "z.example.com"), ("b-slice", "m.example.com"), ("c-slice", "a.example.com"))]
    (tmp_path / "slices.yaml").write_text("---\n".join(slices))
    kubectl("apply", "-f", str(tmp_path / "slices.yaml"))
    rows = kubectl("get", "resourceslices", "--sort-by=.spec.driver").stdout.splitlines()
    assert [row.split()[0] for row in rows] == ["NAME", "c-slice", "b-slice", "a-slice"], rows
    rows = kubectl("get", "resourceslices", "--sort-by=.spec.driver", "-o", "wide", "--no-headers").stdout.splitlines()
    assert [row.split()[2] for row in rows] == ["a.example.com", "m.example.com", "z.example.com"], rows


def test_get_nodes_prints_the_status_roles_and_version_columns_of_a_cluster(kubectl, tmp_path: Path) -> None:
    ready = """apiVersion: v1
kind: Node
metadata: {name: node-2, labels: {node-role.kubernetes.io/control-plane: "", kubernetes.io/role: gpu}}
status:
  conditions: [{type: Ready, status: "True"}]
  addresses: [{type: InternalIP, address: 172.18.0.3}, {type: ExternalIP, address: 203.0.113.7}]
  nodeInfo: {kubeletVersion: v1.36.0, osImage: Debian GNU/Linux 12 (bookworm), kernelVersion: 6.1.0,
             containerRuntimeVersion: "containerd://2.1.0", machineID: m, systemUUID: s, bootID: b,
             kubeProxyVersion: "", operatingSystem: linux, architecture: amd64}
"""
    (tmp_path / "nodes.yaml").write_text(NODE + "---\n" + ready)
    kubectl("apply", "-f", str(tmp_path / "nodes.yaml"))
    kubectl("cordon", "node-1")
    rows = [row.split() for row in kubectl("get", "nodes").stdout.splitlines()]
    assert rows[0] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    assert rows[1][:3] == ["node-1", "Unknown,SchedulingDisabled", "<none>"] and len(rows[1]) == 4
    assert rows[2][:3] == ["node-2", "Ready", "control-plane,gpu"] and rows[2][4] == "v1.36.0"
    wide = kubectl("get", "nodes", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "STATUS", "ROLES", "AGE", "VERSION", "INTERNAL-IP", "EXTERNAL-IP",
                               "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"]
    assert wide[1].split()[-5:] == ["172.18.0.2", "<none>", "<unknown>", "<unknown>", "<unknown>"]
    assert wide[2].split()[-8:] == ["172.18.0.3", "203.0.113.7", "Debian", "GNU/Linux", "12", "(bookworm)", "6.1.0",
                                    "containerd://2.1.0"]


def test_client_side_apply_merges_finalizers_as_a_strategic_merge_patch_does(kubectl, tmp_path: Path) -> None:
    # the OpenAPI v3 patch operation offers a strategic merge patch, so kubectl apply computes one from the
    # schema's patch strategies: a finalizer another client added stays (a JSON merge patch replaced the list)
    manifest = tmp_path / "class.yaml"
    text = """apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: fin, labels: {v: "1"}, finalizers: [example.com/mine]}
spec: {}
"""
    manifest.write_text(text)
    kubectl("apply", "-f", str(manifest))
    kubectl("patch", "deviceclass", "fin", "--type=json",
            "-p", '[{"op":"add","path":"/metadata/finalizers/-","value":"example.com/theirs"}]')
    manifest.write_text(text.replace('v: "1"', 'v: "2"'))
    kubectl("apply", "-f", str(manifest))
    assert kubectl("get", "deviceclass", "fin", "-o", "jsonpath={.metadata.finalizers}").stdout == \
        '["example.com/mine","example.com/theirs"]'
    kubectl("patch", "deviceclass", "fin", "--type=merge", "-p", '{"metadata":{"finalizers":null}}')


def test_kubectl_creates_describes_and_explains_configmaps_and_secrets(kubectl) -> None:
    kubectl("create", "configmap", "app", "--from-literal=mode=fast", "--from-literal=level=3")  # protobuf
    kubectl("create", "secret", "generic", "pw", "--from-literal=password=s3cret")
    lines = kubectl("get", "configmaps,secrets").stdout.splitlines()
    assert lines[0].split() == ["NAME", "DATA", "AGE"] and lines[1].split()[:2] == ["configmap/app", "2"]
    assert lines[2].split()[:2] == ["configmap/kube-root-ca.crt", "1"]  # the root CA publisher's
    assert ["NAME", "TYPE", "DATA", "AGE"] == lines[4].split() and lines[5].split()[:3] == ["secret/pw", "Opaque", "1"]
    assert "mode:\n----\nfast" in kubectl("describe", "configmap", "app").stdout
    assert "password:  6 bytes" in kubectl("describe", "secret", "pw").stdout
    assert "<map[string]string>" in kubectl("explain", "configmap.data").stdout
    bad = kubectl("create", "secret", "tls", "half", "--cert=/dev/null", "--key=/dev/null", check=False)
    assert bad.returncode == 1


def test_apply_prune_works_with_kubectls_default_list_of_kinds(kubectl, tmp_path: Path) -> None:
    # kubectl's default prune list names ConfigMaps, Secrets, PVCs, PVs, Jobs, CronJobs and Ingresses too
    manifest = tmp_path / "app.yaml"
    cm = "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {}, labels: {{app: x}}}}\ndata: {{a: '1'}}\n"
    manifest.write_text(cm.format("keep") + "---\n" + cm.format("drop"))
    kubectl("apply", "--prune", "-l", "app=x", "-f", str(manifest))
    manifest.write_text(cm.format("keep"))
    out = kubectl("apply", "--prune", "-l", "app=x", "-f", str(manifest)).stdout
    assert "configmap/drop pruned" in out, out
    assert kubectl("get", "configmaps", "-l", "app=x", "-o", "name").stdout.split() == ["configmap/keep"]
