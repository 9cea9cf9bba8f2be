"""The protobuf schema tables of the apps/v1 workloads and batch/v1 Jobs (notation: server/protobuf/schema.py),
which kubectl's typed clients (``kubectl create deployment``, ``kubectl create job``) send as protobuf: the
objects, their specs around a Pod's template (server/protobuf/pod.py) and their statuses. Written from the
generated ``.proto`` of apps/v1 and batch/v1 (field numbers) and the Go types' JSON tags. Besides them, the
StatefulSets' and DaemonSets' ControllerRevisions (kube-controller-manager writes them) and CronJobs (``kubectl
create cronjob``), whose job template is a Job's, and core/v1 ReplicationControllers (a client-go
controller's writes)."""

from __future__ import annotations

from dralloc.server.protobuf.pod import POD
from dralloc.server.protobuf.schema import messages, schema

_TEMPLATE = messages({"PodTemplateSpec": {1: "metadata ObjectMeta", 2: "spec PodSpec"}})

APPS_V1 = schema(POD, _TEMPLATE, messages({
    "Deployment": {1: "metadata ObjectMeta", 2: "spec DeploymentSpec", 3: "status DeploymentStatus"},
    "DeploymentSpec": {1: "replicas *int32", 2: "selector *LabelSelector", 3: "template PodTemplateSpec",
                       4: "strategy DeploymentStrategy", 5: "minReadySeconds int32", 6: "revisionHistoryLimit *int32",
                       7: "paused bool", 9: "progressDeadlineSeconds *int32"},
    "DeploymentStrategy": {1: "type string", 2: "rollingUpdate *RollingUpdateDeployment"},
    "RollingUpdateDeployment": {1: "maxUnavailable *IntOrString", 2: "maxSurge *IntOrString"},
    "DeploymentStatus": {1: "observedGeneration int64", 2: "replicas int32", 3: "updatedReplicas int32",
                         7: "readyReplicas int32", 4: "availableReplicas int32", 5: "unavailableReplicas int32",
                         9: "terminatingReplicas *int32", 6: "conditions []DeploymentCondition",
                         8: "collisionCount *int32"},
    "DeploymentCondition": {1: "type string always", 2: "status string always", 6: "lastUpdateTime Time",
                            7: "lastTransitionTime Time", 4: "reason string", 5: "message string"},
    "ReplicaSet": {1: "metadata ObjectMeta", 2: "spec ReplicaSetSpec", 3: "status ReplicaSetStatus"},
    "ReplicaSetSpec": {1: "replicas *int32", 4: "minReadySeconds int32", 2: "selector *LabelSelector",
                       3: "template PodTemplateSpec"},
    "ReplicaSetStatus": {1: "replicas int32 always", 2: "fullyLabeledReplicas int32", 4: "readyReplicas int32",
                         5: "availableReplicas int32", 7: "terminatingReplicas *int32", 3: "observedGeneration int64",
                         6: "conditions []ReplicaSetCondition"},
    "ReplicaSetCondition": {1: "type string always", 2: "status string always", 3: "lastTransitionTime Time",
                            4: "reason string", 5: "message string"},
    "StatefulSet": {1: "metadata ObjectMeta", 2: "spec StatefulSetSpec", 3: "status StatefulSetStatus"},
    "StatefulSetSpec": {1: "replicas *int32", 2: "selector *LabelSelector", 3: "template PodTemplateSpec",
                        4: "volumeClaimTemplates []PersistentVolumeClaimTemplate", 5: "serviceName string",
                        6: "podManagementPolicy string", 7: "updateStrategy StatefulSetUpdateStrategy",
                        8: "revisionHistoryLimit *int32", 9: "minReadySeconds int32",
                        10: "persistentVolumeClaimRetentionPolicy *StatefulSetPersistentVolumeClaimRetentionPolicy",
                        11: "ordinals *StatefulSetOrdinals"},
    "StatefulSetUpdateStrategy": {1: "type string", 2: "rollingUpdate *RollingUpdateStatefulSetStrategy"},
    "RollingUpdateStatefulSetStrategy": {1: "partition *int32", 2: "maxUnavailable *IntOrString"},
    "StatefulSetPersistentVolumeClaimRetentionPolicy": {1: "whenDeleted string", 2: "whenScaled string"},
    "StatefulSetOrdinals": {1: "start int32"},
    "StatefulSetStatus": {1: "observedGeneration int64", 2: "replicas int32 always", 3: "readyReplicas int32",
                          4: "currentReplicas int32", 5: "updatedReplicas int32", 6: "currentRevision string",
                          7: "updateRevision string", 9: "collisionCount *int32",
                          10: "conditions []StatefulSetCondition", 11: "availableReplicas int32 always"},
    "StatefulSetCondition": {1: "type string always", 2: "status string always", 3: "lastTransitionTime Time",
                             4: "reason string", 5: "message string"},
    "DaemonSet": {1: "metadata ObjectMeta", 2: "spec DaemonSetSpec", 3: "status DaemonSetStatus"},
    "DaemonSetSpec": {1: "selector *LabelSelector", 2: "template PodTemplateSpec",
                      3: "updateStrategy DaemonSetUpdateStrategy", 4: "minReadySeconds int32",
                      6: "revisionHistoryLimit *int32"},
    "DaemonSetUpdateStrategy": {1: "type string", 2: "rollingUpdate *RollingUpdateDaemonSet"},
    "RollingUpdateDaemonSet": {1: "maxUnavailable *IntOrString", 2: "maxSurge *IntOrString"},
    "DaemonSetStatus": {1: "currentNumberScheduled int32 always", 2: "numberMisscheduled int32 always",
                        3: "desiredNumberScheduled int32 always", 4: "numberReady int32 always",
                        5: "observedGeneration int64", 6: "updatedNumberScheduled int32", 7: "numberAvailable int32",
                        8: "numberUnavailable int32", 9: "collisionCount *int32",
                        10: "conditions []DaemonSetCondition"},
    "DaemonSetCondition": {1: "type string always", 2: "status string always", 3: "lastTransitionTime Time",
                           4: "reason string", 5: "message string"},
    "ControllerRevision": {1: "metadata ObjectMeta", 2: "data RawExtension", 3: "revision int64 always"},
}))

BATCH_V1 = schema(POD, _TEMPLATE, messages({
    "Job": {1: "metadata ObjectMeta", 2: "spec JobSpec", 3: "status JobStatus"},
    "JobSpec": {1: "parallelism *int32", 2: "completions *int32", 3: "activeDeadlineSeconds *int64",
                11: "podFailurePolicy *PodFailurePolicy", 16: "successPolicy *SuccessPolicy", 7: "backoffLimit *int32", 12: "backoffLimitPerIndex *int32", 13: "maxFailedIndexes *int32",
                4: "selector *LabelSelector", 5: "manualSelector *bool", 6: "template PodTemplateSpec",
                8: "ttlSecondsAfterFinished *int32", 9: "completionMode *string", 10: "suspend *bool",
                14: "podReplacementPolicy *string", 15: "managedBy *string"},
    "JobStatus": {1: "conditions []JobCondition", 2: "startTime *Time", 3: "completionTime *Time",
                  4: "active int32", 5: "succeeded int32", 6: "failed int32", 11: "terminating *int32",
                  7: "completedIndexes string", 10: "failedIndexes *string",
                  8: "uncountedTerminatedPods *UncountedTerminatedPods", 9: "ready *int32"},
    "JobCondition": {1: "type string always", 2: "status string always", 3: "lastProbeTime Time",
                     4: "lastTransitionTime Time", 5: "reason string", 6: "message string"},
    "UncountedTerminatedPods": {1: "succeeded []string", 2: "failed []string"},
    "PodFailurePolicy": {1: "rules []PodFailurePolicyRule"},
    "PodFailurePolicyRule": {1: "action string always", 2: "onExitCodes *PodFailurePolicyOnExitCodesRequirement",
                             3: "onPodConditions []PodFailurePolicyOnPodConditionsPattern"},
    "PodFailurePolicyOnExitCodesRequirement": {1: "containerName *string", 2: "operator string always",
                                               3: "values []int32"},
    "PodFailurePolicyOnPodConditionsPattern": {1: "type string always", 2: "status string always"},
    "SuccessPolicy": {1: "rules []SuccessPolicyRule"},
    "SuccessPolicyRule": {1: "succeededIndexes *string", 2: "succeededCount *int32"},
    "CronJob": {1: "metadata ObjectMeta", 2: "spec CronJobSpec", 3: "status CronJobStatus"},
    "CronJobSpec": {1: "schedule string always", 8: "timeZone *string", 2: "startingDeadlineSeconds *int64",
                    3: "concurrencyPolicy string", 4: "suspend *bool", 5: "jobTemplate JobTemplateSpec",
                    6: "successfulJobsHistoryLimit *int32", 7: "failedJobsHistoryLimit *int32"},
    "JobTemplateSpec": {1: "metadata ObjectMeta", 2: "spec JobSpec"},
    "CronJobStatus": {1: "active []ObjectReference", 4: "lastScheduleTime *Time", 5: "lastSuccessfulTime *Time"},
}))

# core/v1 ReplicationControllers, the ReplicaSets' older kind (a map selector, a template behind a pointer)
CORE_REPLICATION_V1 = schema(POD, _TEMPLATE, messages({
    "ReplicationController": {1: "metadata ObjectMeta", 2: "spec ReplicationControllerSpec",
                              3: "status ReplicationControllerStatus"},
    "ReplicationControllerSpec": {1: "replicas *int32", 4: "minReadySeconds int32", 2: "selector map[string]string",
                                  3: "template *PodTemplateSpec"},
    "ReplicationControllerStatus": {1: "replicas int32 always", 2: "fullyLabeledReplicas int32",
                                    4: "readyReplicas int32", 5: "availableReplicas int32",
                                    3: "observedGeneration int64", 6: "conditions []ReplicationControllerCondition"},
    "ReplicationControllerCondition": {1: "type string always", 2: "status string always",
                                       3: "lastTransitionTime Time", 4: "reason string", 5: "message string"},
}))

KINDS = {**{("apps/v1", kind): (APPS_V1, kind) for kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet",
                                                                   "ControllerRevision")},
         **{("batch/v1", kind): (BATCH_V1, kind) for kind in ("Job", "CronJob")},
         ("v1", "ReplicationController"): (CORE_REPLICATION_V1, "ReplicationController")}
