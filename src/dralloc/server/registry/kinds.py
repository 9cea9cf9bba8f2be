"""The resources the server serves: names, kinds, scope, versions, printed columns, and the strategy each is
written with (``registry/strategy.py``; a kind without a strategy module of its own has the generic one)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from dralloc.server.crds import definitions as crd_definitions
from dralloc.server.registry import (
    admission_registration,
    autoscaling,
    configs,
    controller_revisions,
    core_defaults,
    disruption_budgets,
    endpoints,
    events,
    limit_ranges,
    namespaces,
    networking,
    pod_groups,
    pods,
    priorities,
    quota,
    rbac,
    replication_controllers,
    resource_claims,
    service_accounts,
    service_strategy,
    storage,
    storage_columns,
    workload_columns,
    workloads,
)
from dralloc.server.registry.strategy import TYPED, Strategy

GROUP = "resource.k8s.io"
GROUP_VERSIONS = ("v1", "v1beta2", "v1beta1")  # preferred first
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


@dataclass(frozen=True)
class Resource:
    name: str  # plural, as in URLs
    kind: str
    namespaced: bool
    group: str = GROUP
    versions: tuple[str, ...] = GROUP_VERSIONS
    status: bool = False
    short_names: tuple[str, ...] = ()
    # (header, dotted JSON path or a table.COMPUTED name) besides NAME and AGE; wide ones for -o wide
    columns: tuple[tuple[str, str], ...] = field(default=())
    wide_columns: tuple[tuple[str, str], ...] = field(default=())
    subresources: tuple[str, ...] = ()  # besides status (e.g. pods/binding)
    verbs: tuple[str, ...] = ()  # when not the usual ones (the reviews below are create-only)
    # a whole table layout (header, dotted JSON path or a table.COMPUTED name, priority), in place of NAME,
    # columns, AGE and wide columns; a "metadata.name" column is the one of format "name"
    table: tuple[tuple[str, str, int], ...] = ()
    categories: tuple[str, ...] = ()  # `kubectl get all` lists the resources of category "all"
    deprecation: str = ""  # the Warning every request of a deprecated resource gets
    # how writes prepare, admit and validate its objects, and what a delete does
    strategy: Strategy = field(default=TYPED, compare=False)
    # the resource whose objects this one shows in another form (events.k8s.io Events are core/v1 Events)
    stored_as: Resource | None = field(default=None, compare=False)
    # a custom resource's names from its CRD (acceptedNames.singular and .listKind), when not the kind's
    singular_name: str = ""
    list_kind_name: str = ""

    @property
    def singular(self) -> str:
        return self.singular_name or self.kind.lower()

    @property
    def list_kind(self) -> str:
        """The kind of its lists: ``<Kind>List``, or a custom resource's ``spec.names.listKind``."""
        return self.list_kind_name or f"{self.kind}List"

    @property
    def group_resource(self) -> str:
        return f"{self.name}.{self.group}" if self.group else self.name


RESOURCES = {r.name: r for r in (
    Resource("resourceslices", "ResourceSlice", False, strategy=resource_claims.DRA,
             columns=(("NODE", "spec.nodeName"), ("DRIVER", "spec.driver"), ("POOL", "spec.pool.name"))),
    Resource("deviceclasses", "DeviceClass", False, strategy=resource_claims.DRA),
    Resource("resourceclaims", "ResourceClaim", True, status=True, columns=(("STATE", "=claimState"),),
             strategy=resource_claims.RESOURCE_CLAIMS),
    Resource("resourceclaimtemplates", "ResourceClaimTemplate", True,
             strategy=resource_claims.RESOURCE_CLAIM_TEMPLATES),
    Resource("devicetaintrules", "DeviceTaintRule", False, versions=("v1", "v1beta2"), status=True,
             strategy=resource_claims.DRA),
)}

_EVENT_TABLE = (("Last Seen", "=eventLastSeen", 0), ("Type", "type", 0), ("Reason", "reason", 0),
                ("Object", "=eventObject", 0), ("Subobject", "involvedObject.fieldPath", 1),
                ("Source", "=eventSource", 1), ("Message", "=eventMessage", 0), ("First Seen", "=eventFirstSeen", 1),
                ("Count", "=eventCount", 1), ("Name", "metadata.name", 1))

# kube-apiserver's node columns: STATUS from the Ready condition (and SchedulingDisabled), ROLES from the
# node-role labels, VERSION the kubelet's; -o wide adds the addresses and what the kubelet reports
_NODE_TABLE = (("Name", "metadata.name", 0), ("Status", "=nodeStatus", 0), ("Roles", "=nodeRoles", 0),
               ("Age", "=age", 0), ("Version", "status.nodeInfo.kubeletVersion", 0),
               ("Internal-IP", "=nodeInternalIP", 1), ("External-IP", "=nodeExternalIP", 1),
               ("OS-Image", "=nodeOSImage", 1), ("Kernel-Version", "=nodeKernelVersion", 1),
               ("Container-Runtime", "=nodeContainerRuntime", 1))

READ_ONLY = ("get", "list", "watch")
_SERVICE_TABLE = (("Name", "metadata.name", 0), ("Type", "spec.type", 0), ("Cluster-IP", "=serviceClusterIP", 0),
                  ("External-IP", "=serviceExternalIP", 0), ("Port(s)", "=servicePorts", 0), ("Age", "=age", 0),
                  ("Selector", "=serviceSelector", 1))

CORE = {r.name: r for r in (
    Resource("namespaces", "Namespace", False, group="", versions=("v1",), status=True, short_names=("ns",),
             columns=(("STATUS", "status.phase"),), subresources=("finalize",), strategy=namespaces.STRATEGY),
    # nodes/status: as kube-apiserver's node strategy, the main endpoint keeps the stored status (a create
    # takes the whole object, status included)
    Resource("nodes", "Node", False, group="", versions=("v1",), status=True, short_names=("no",),
             table=_NODE_TABLE, strategy=core_defaults.NODES),
    Resource("pods", "Pod", True, group="", versions=("v1",), status=True, short_names=("po",), categories=("all",),
             columns=(("READY", "=podReady"), ("STATUS", "=podStatus"), ("RESTARTS", "=podRestarts")),
             wide_columns=(("IP", "status.podIP"), ("NODE", "spec.nodeName"),
                           ("NOMINATED NODE", "status.nominatedNodeName"), ("READINESS GATES", "=readinessGates")),
             subresources=("attach", "binding", "eviction", "exec", "log", "portforward"),
             strategy=pods.STRATEGY),
    # ConfigMaps and Secrets, stored as sent (server/registry/configs.py): test suites' everyday objects
    Resource("configmaps", "ConfigMap", True, group="", versions=("v1",), short_names=("cm",),
             table=(("Name", "metadata.name", 0), ("Data", "=dataCount", 0), ("Age", "=age", 0)),
             strategy=configs.STRATEGY),
    # serviceaccounts/token: the TokenRequest API (server/auth/token_request.py)
    Resource("serviceaccounts", "ServiceAccount", True, group="", versions=("v1",), short_names=("sa",),
             table=(("Name", "metadata.name", 0), ("Secrets", "=secretCount", 0), ("Age", "=age", 0)),
             subresources=("token",), strategy=service_accounts.STRATEGY),
    Resource("secrets", "Secret", True, group="", versions=("v1",),
             table=(("Name", "metadata.name", 0), ("Type", "type", 0), ("Data", "=dataCount", 0),
                    ("Age", "=age", 0)), strategy=configs.STRATEGY),
    # kube-apiserver's event table has no leading name nor age: the name is the last, wide, column
    Resource("events", "Event", True, group="", versions=("v1",), short_names=("ev",), table=_EVENT_TABLE,
             strategy=events.STRATEGY),
    # Services (server/registry/service_strategy.py: defaults, cluster IP and node port allocation, validation),
    # the default/kubernetes one kube-apiserver keeps (server/registry/services.py) among them
    Resource("services", "Service", True, group="", versions=("v1",), status=True, short_names=("svc",),
             categories=("all",), table=_SERVICE_TABLE, strategy=service_strategy.STRATEGY),
    # Endpoints (server/registry/endpoints.py): the default/kubernetes one kube-apiserver keeps, those the
    # endpoints controller writes for Services with a selector, and clients' for Services without
    Resource("endpoints", "Endpoints", True, group="", versions=("v1",), short_names=("ep",),
             table=(("Name", "metadata.name", 0), ("Endpoints", "=endpoints", 0), ("Age", "=age", 0)),
             deprecation=endpoints.DEPRECATION, strategy=endpoints.STRATEGY),
    # ResourceQuotas (server/registry/quota.py): the ResourceQuota admission of every create, their usage the
    # resourcequota controller's
    Resource("resourcequotas", "ResourceQuota", True, group="", versions=("v1",), short_names=("quota",),
             status=True, table=(("Name", "metadata.name", 0), ("Age", "=age", 0),
                                 ("Request", "=quotaRequest", 0), ("Limit", "=quotaLimit", 0)),
             strategy=quota.STRATEGY),
    # LimitRanges (server/registry/limit_ranges.py): their defaults and bounds are the LimitRanger admission's
    Resource("limitranges", "LimitRange", True, group="", versions=("v1",), short_names=("limits",),
             table=(("Name", "metadata.name", 0), ("Created At", "metadata.creationTimestamp", 0)),
             strategy=limit_ranges.STRATEGY),
    # ReplicationControllers (server/registry/replication_controllers.py), whose pods the ReplicaSet controller keeps
    Resource("replicationcontrollers", "ReplicationController", True, group="", versions=("v1",),
             short_names=("rc",), categories=("all",), status=True, subresources=("scale",),
             table=replication_controllers.TABLE, strategy=replication_controllers.STRATEGY),
    # Volumes (server/registry/storage.py), bound by the PV controller and the scheduler (server/controllers/volumes.py)
    Resource("persistentvolumeclaims", "PersistentVolumeClaim", True, group="", versions=("v1",), status=True,
             short_names=("pvc",), table=storage_columns.CLAIM_TABLE, strategy=storage.CLAIMS),
    Resource("persistentvolumes", "PersistentVolume", False, group="", versions=("v1",), status=True,
             short_names=("pv",), table=storage_columns.VOLUME_TABLE, strategy=storage.VOLUMES),
)}

# apps/v1 and batch/v1 workloads (server/registry/workloads.py), which the controllers of server/controllers/
# turn into pods; `kubectl get all` lists those of category "all".
APPS_GROUP = "apps"
_SCALE = ("scale",)  # autoscaling/v1 Scale (server/subresources/scale.py), as `kubectl scale` writes it
APPS = {r.name: r for r in (
    # the StatefulSets' and DaemonSets' template history (server/controllers/revisions.py)
    Resource("controllerrevisions", "ControllerRevision", True, group=APPS_GROUP, versions=("v1",),
             table=workload_columns.CONTROLLER_REVISION_TABLE, strategy=controller_revisions.STRATEGY),
    Resource("daemonsets", "DaemonSet", True, group=APPS_GROUP, versions=("v1",), short_names=("ds",),
             categories=("all",), status=True, table=workload_columns.DAEMON_SET_TABLE, strategy=workloads.DAEMON_SETS),
    Resource("deployments", "Deployment", True, group=APPS_GROUP, versions=("v1",), short_names=("deploy",),
             categories=("all",), status=True, subresources=_SCALE, table=workload_columns.DEPLOYMENT_TABLE,
             strategy=workloads.DEPLOYMENTS),
    Resource("replicasets", "ReplicaSet", True, group=APPS_GROUP, versions=("v1",), short_names=("rs",),
             categories=("all",), status=True, subresources=_SCALE, table=workload_columns.REPLICA_SET_TABLE,
             strategy=workloads.REPLICA_SETS),
    Resource("statefulsets", "StatefulSet", True, group=APPS_GROUP, versions=("v1",), short_names=("sts",),
             categories=("all",), status=True, subresources=_SCALE, table=workload_columns.STATEFUL_SET_TABLE,
             strategy=workloads.STATEFUL_SETS),
)}

BATCH_GROUP = "batch"
BATCH = {r.name: r for r in (
    Resource("cronjobs", "CronJob", True, group=BATCH_GROUP, versions=("v1",), short_names=("cj",),
             categories=("all",), status=True, table=workload_columns.CRON_JOB_TABLE, strategy=workloads.CRON_JOBS),
    Resource("jobs", "Job", True, group=BATCH_GROUP, versions=("v1",), categories=("all",), status=True,
             table=workload_columns.JOB_TABLE, strategy=workloads.JOBS),
)}
# networking.k8s.io/v1 (server/registry/networking.py): stored and validated; nothing routes ingress traffic nor
# enforces a network policy
NETWORKING_GROUP = "networking.k8s.io"
NETWORKING = {r.name: r for r in (
    Resource("ingressclasses", "IngressClass", False, group=NETWORKING_GROUP, versions=("v1",),
             table=networking.INGRESS_CLASS_TABLE, strategy=networking.INGRESS_CLASSES_STRATEGY),
    Resource("ingresses", "Ingress", True, group=NETWORKING_GROUP, versions=("v1",), short_names=("ing",),
             status=True, table=networking.INGRESS_TABLE, strategy=networking.INGRESSES),
    Resource("networkpolicies", "NetworkPolicy", True, group=NETWORKING_GROUP, versions=("v1",),
             short_names=("netpol",), table=networking.NETWORK_POLICY_TABLE, strategy=networking.NETWORK_POLICIES),
)}

# autoscaling/v2 HorizontalPodAutoscalers, also served as autoscaling/v1 (server/registry/autoscaling.py); their
# controller (server/controllers/autoscaling.py) has no metrics to read
AUTOSCALING_GROUP = "autoscaling"
AUTOSCALING = {"horizontalpodautoscalers": Resource(
    "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, group=AUTOSCALING_GROUP, versions=("v2", "v1"),
    short_names=("hpa",), categories=("all",), status=True, table=autoscaling.TABLE, strategy=autoscaling.STRATEGY)}

# policy/v1 PodDisruptionBudgets (server/registry/disruption_budgets.py), whose status the disruption controller
# keeps, which evictions honour and DefaultPreemption reads. storage.k8s.io/v1: the volume plugins' classes, CSI
# nodes, drivers and capacities, and attachments (server/registry/storage.py).
POLICY_GROUP = "policy"
POLICY = {"poddisruptionbudgets": Resource("poddisruptionbudgets", "PodDisruptionBudget", True, group=POLICY_GROUP,
                                           versions=("v1",), short_names=("pdb",), status=True,
                                           table=disruption_budgets.TABLE, strategy=disruption_budgets.STRATEGY)}
# storage.k8s.io/v1: the classes, CSI nodes, drivers, capacities and attachments the volume plugins read (the
# volume controllers bind and provision with them; an external kube-scheduler's informers watch them).
STORAGE_GROUP = "storage.k8s.io"
STORAGE = {r.name: r for r in (
    Resource("csidrivers", "CSIDriver", False, group=STORAGE_GROUP, versions=("v1",),
             table=storage_columns.CSI_DRIVER_TABLE, strategy=storage.CSI_DRIVERS),
    Resource("csinodes", "CSINode", False, group=STORAGE_GROUP, versions=("v1",),
             table=storage_columns.CSI_NODE_TABLE),
    Resource("csistoragecapacities", "CSIStorageCapacity", True, group=STORAGE_GROUP, versions=("v1",),
             table=storage_columns.CAPACITY_TABLE),
    Resource("storageclasses", "StorageClass", False, group=STORAGE_GROUP, versions=("v1",), short_names=("sc",),
             table=storage_columns.STORAGE_CLASS_TABLE, strategy=storage.STORAGE_CLASSES_STRATEGY),
    Resource("volumeattachments", "VolumeAttachment", False, group=STORAGE_GROUP, versions=("v1",), status=True,
             table=storage_columns.ATTACHMENT_TABLE),
)}

# events.k8s.io/v1: the same stored events (``events``), another view of them (server/registry/events.py converts)
EVENTS_GROUP = "events.k8s.io"
EVENTS = {"events": Resource("events", "Event", True, group=EVENTS_GROUP, versions=("v1",), short_names=("ev",),
                             table=_EVENT_TABLE, strategy=events.EVENTS_V1_STRATEGY, stored_as=CORE["events"])}

# discovery.k8s.io/v1, read-only: the EndpointSlice kube-apiserver keeps for the default/kubernetes Service
# (server/registry/services.py), which `kubectl describe service` lists.
DISCOVERY_GROUP = "discovery.k8s.io"
_ENDPOINT_SLICE_TABLE = (("Name", "metadata.name", 0), ("AddressType", "addressType", 0),
                         ("Ports", "=endpointSlicePorts", 0), ("Endpoints", "=endpointSliceEndpoints", 0),
                         ("Age", "=age", 0))
ENDPOINT_SLICES = {"endpointslices": Resource("endpointslices", "EndpointSlice", True, group=DISCOVERY_GROUP,
                                              versions=("v1",), verbs=READ_ONLY, table=_ENDPOINT_SLICE_TABLE)}

# scheduling.k8s.io/v1 PriorityClasses: what a pod's priorityClassName stands for (server/registry/priorities.py: the
# Priority admission of pods and classes, and the two system classes kube-apiserver keeps)
SCHEDULING_GROUP = "scheduling.k8s.io"
_PRIORITY_CLASS_TABLE = (("Name", "metadata.name", 0), ("Value", "value", 0), ("Global-Default", "=globalDefault", 0),
                         ("Age", "=age", 0), ("PreemptionPolicy", "preemptionPolicy", 0))
SCHEDULING = {"priorityclasses": Resource("priorityclasses", "PriorityClass", False, group=SCHEDULING_GROUP,
                                          versions=("v1",), short_names=("pc",), table=_PRIORITY_CLASS_TABLE,
                                          strategy=priorities.STRATEGY)}


def workload_resources(enabled: Collection[str]) -> dict[str, Resource]:
    """scheduling.k8s.io/v1alpha2 Workloads and PodGroups (server/registry/pod_groups.py), served only with the
    GenericWorkload gate among ``enabled``, validated with the gated options ``enabled`` turns on. kube-apiserver
    prints no columns of its own for them: NAME and AGE."""
    if pod_groups.SERVING_GATE not in enabled:
        return {}
    features = pod_groups.validation_features(enabled)
    return {r.name: r for r in (
        Resource("workloads", "Workload", True, group=SCHEDULING_GROUP, versions=("v1alpha2",),
                 strategy=pod_groups.WorkloadStrategy(features)),
        Resource("podgroups", "PodGroup", True, group=SCHEDULING_GROUP, versions=("v1alpha2",), status=True,
                 strategy=pod_groups.PodGroupStrategy(features)),
    )}


# Every gated resource, whatever the gates: what the controllers that go through all stored objects (a namespace's
# deletion, the garbage collector) look at too, since a server once started with the gate may hold their objects.
GATED_RESOURCES = workload_resources({pod_groups.SERVING_GATE})

# rbac.authorization.k8s.io/v1, stored and validated, not enforced (server/registry/rbac.py): what DRA drivers'
# install manifests carry
RBAC_GROUP = "rbac.authorization.k8s.io"
RBAC = {r.name: r for r in (
    Resource("clusterrolebindings", "ClusterRoleBinding", False, group=RBAC_GROUP, versions=("v1",),
             table=rbac.BINDING_TABLE, strategy=rbac.STRATEGY),
    Resource("clusterroles", "ClusterRole", False, group=RBAC_GROUP, versions=("v1",), table=rbac.ROLE_TABLE,
             strategy=rbac.STRATEGY),
    Resource("rolebindings", "RoleBinding", True, group=RBAC_GROUP, versions=("v1",), table=rbac.BINDING_TABLE,
             strategy=rbac.STRATEGY),
    Resource("roles", "Role", True, group=RBAC_GROUP, versions=("v1",), table=rbac.ROLE_TABLE,
             strategy=rbac.STRATEGY),
)}

# coordination.k8s.io/v1 Leases, stored as written (leader election: client-go's LeaseLock)
COORDINATION_GROUP = "coordination.k8s.io"
LEASES = {"leases": Resource("leases", "Lease", True, group=COORDINATION_GROUP, versions=("v1",),
                             table=(("Name", "metadata.name", 0), ("Holder", "spec.holderIdentity", 0),
                                    ("Age", "=age", 0)))}

# apiextensions.k8s.io/v1 CustomResourceDefinitions (server/crds/definitions.py); the custom resources they define
# are served from their own rows (server/crds/served.py), made while the server runs
APIEXTENSIONS_GROUP = "apiextensions.k8s.io"
APIEXTENSIONS = {"customresourcedefinitions": Resource(
    "customresourcedefinitions", "CustomResourceDefinition", False, group=APIEXTENSIONS_GROUP, versions=("v1",),
    status=True, short_names=("crd", "crds"), categories=("api-extensions",),
    table=(("Name", "metadata.name", 0), ("Created At", "metadata.creationTimestamp", 0)),
    strategy=crd_definitions.DefinitionStrategy(lambda: _built_in_groups()))}

# admissionregistration.k8s.io/v1 (server/registry/admission_registration.py): webhook configurations, stored
# and never called, and ValidatingAdmissionPolicies with their bindings, enforced (server/admission/)
ADMISSION_GROUP = "admissionregistration.k8s.io"
ADMISSION = {r.name: r for r in (
    Resource("mutatingwebhookconfigurations", "MutatingWebhookConfiguration", False, group=ADMISSION_GROUP,
             versions=("v1",), categories=("api-extensions",), table=admission_registration.WEBHOOK_TABLE,
             strategy=admission_registration.MUTATING_WEBHOOKS),
    Resource("validatingadmissionpolicies", "ValidatingAdmissionPolicy", False, group=ADMISSION_GROUP,
             versions=("v1",), status=True, categories=("api-extensions",), table=admission_registration.POLICY_TABLE,
             strategy=admission_registration.POLICIES),
    Resource("validatingadmissionpolicybindings", "ValidatingAdmissionPolicyBinding", False, group=ADMISSION_GROUP,
             versions=("v1",), categories=("api-extensions",), table=admission_registration.BINDING_TABLE,
             strategy=admission_registration.BINDINGS),
    Resource("validatingwebhookconfigurations", "ValidatingWebhookConfiguration", False, group=ADMISSION_GROUP,
             versions=("v1",), categories=("api-extensions",), table=admission_registration.WEBHOOK_TABLE,
             strategy=admission_registration.VALIDATING_WEBHOOKS),
)}

# The reviews: the self reviews kube-apiserver serves to every authenticated user (kubectl auth can-i /
# whoami) and TokenReview (kr8s whoami); computed per request, never stored. Their groups, in kube-apiserver's
# discovery order.
REVIEWS = {r.name: r for r in (
    Resource("selfsubjectreviews", "SelfSubjectReview", False, group="authentication.k8s.io", versions=("v1",),
             verbs=("create",)),
    Resource("tokenreviews", "TokenReview", False, group="authentication.k8s.io", versions=("v1",),
             verbs=("create",)),
    Resource("selfsubjectaccessreviews", "SelfSubjectAccessReview", False, group="authorization.k8s.io",
             versions=("v1",), verbs=("create",)),
    Resource("selfsubjectrulesreviews", "SelfSubjectRulesReview", False, group="authorization.k8s.io",
             versions=("v1",), verbs=("create",)),
)}
REVIEW_GROUPS = ("authentication.k8s.io", "authorization.k8s.io")

# The stored resources of each served API group (the core group's are CORE, under /api)
GROUP_RESOURCES: dict[str, dict[str, Resource]] = {
    GROUP: RESOURCES, EVENTS_GROUP: EVENTS, DISCOVERY_GROUP: ENDPOINT_SLICES, APPS_GROUP: APPS,
    AUTOSCALING_GROUP: AUTOSCALING, BATCH_GROUP: BATCH, NETWORKING_GROUP: NETWORKING, POLICY_GROUP: POLICY, STORAGE_GROUP: STORAGE,
    SCHEDULING_GROUP: SCHEDULING, COORDINATION_GROUP: LEASES, RBAC_GROUP: RBAC, APIEXTENSIONS_GROUP: APIEXTENSIONS,
    ADMISSION_GROUP: ADMISSION}


def _built_in_groups() -> set[str]:
    """Every group the server serves itself, whatever the gates."""
    return {*GROUP_RESOURCES, *(r.group for r in GATED_RESOURCES.values())}


def served_groups(enabled: Collection[str] = ()) -> dict[str, dict[str, Resource]]:
    """The stored resources of each served API group with the feature gates ``enabled`` (the names of the gates
    that are on): :data:`GROUP_RESOURCES`, with the gated resources added to their groups."""
    gated = workload_resources(enabled)
    if not gated:
        return GROUP_RESOURCES
    return {**GROUP_RESOURCES, SCHEDULING_GROUP: {**SCHEDULING, **gated}}

# Field selectors kube-apiserver accepts, besides metadata.name / metadata.namespace.
FIELD_SELECTORS = {
    "resourceslices": ("spec.driver", "spec.nodeName", "spec.pool.name"),
    "pods": ("spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName",
             "spec.hostNetwork", "status.phase", "status.podIP", "status.nominatedNodeName"),
    "nodes": ("spec.unschedulable",),
    "namespaces": ("status.phase",),
    "events": ("involvedObject.kind", "involvedObject.namespace", "involvedObject.name", "involvedObject.uid",
               "involvedObject.apiVersion", "involvedObject.resourceVersion", "involvedObject.fieldPath",
               "reason", "reportingComponent", "source", "type"),
}
