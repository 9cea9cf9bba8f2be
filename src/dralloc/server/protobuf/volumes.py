"""The protobuf schema tables (notation: server/protobuf/schema.py) of the volume kinds: core/v1
PersistentVolume and PersistentVolumeClaim (what kube-controller-manager's PV controller and the
external-provisioner sidecar write, and ``kubectl create -f`` of a typed client), and storage.k8s.io/v1
StorageClass, CSIDriver, CSINode, CSIStorageCapacity and VolumeAttachment (the CSI sidecars', the kubelet's
and the attach/detach controller's). Written from the generated ``.proto`` of core/v1 and storage/v1 (field
numbers) and the Go types' JSON tags. A PersistentVolume's in-tree sources that a Pod's volumes share are
the Pod table's messages (server/protobuf/pod.py)."""

from __future__ import annotations

from dralloc.server.protobuf.pod import POD
from dralloc.server.protobuf.schema import messages, schema

# The PersistentVolume's messages (a VolumeAttachment's inline volume spec is one as well)
_PERSISTENT_VOLUMES = messages({
    "PersistentVolume": {1: "metadata ObjectMeta", 2: "spec PersistentVolumeSpec", 3: "status PersistentVolumeStatus"},
    "PersistentVolumeSpec": {1: "capacity map[string]Quantity",
                             2: "persistentVolumeSource PersistentVolumeSource inline", 3: "accessModes []string",
                             4: "claimRef *ObjectReference", 5: "persistentVolumeReclaimPolicy string",
                             6: "storageClassName string", 7: "mountOptions []string", 8: "volumeMode *string",
                             9: "nodeAffinity *VolumeNodeAffinity", 10: "volumeAttributesClassName *string"},
    "PersistentVolumeSource": {
        1: "gcePersistentDisk *GCEPersistentDiskVolumeSource",
        2: "awsElasticBlockStore *AWSElasticBlockStoreVolumeSource", 3: "hostPath *HostPathVolumeSource",
        4: "glusterfs *GlusterfsPersistentVolumeSource", 5: "nfs *NFSVolumeSource", 6: "rbd *RBDPersistentVolumeSource",
        7: "iscsi *ISCSIPersistentVolumeSource", 8: "cinder *CinderPersistentVolumeSource",
        9: "cephfs *CephFSPersistentVolumeSource", 10: "fc *FCVolumeSource", 11: "flocker *FlockerVolumeSource",
        12: "flexVolume *FlexPersistentVolumeSource", 13: "azureFile *AzureFilePersistentVolumeSource",
        14: "vsphereVolume *VsphereVirtualDiskVolumeSource", 15: "quobyte *QuobyteVolumeSource",
        16: "azureDisk *AzureDiskVolumeSource", 17: "photonPersistentDisk *PhotonPersistentDiskVolumeSource",
        18: "portworxVolume *PortworxVolumeSource", 19: "scaleIO *ScaleIOPersistentVolumeSource",
        20: "local *LocalVolumeSource", 21: "storageos *StorageOSPersistentVolumeSource",
        22: "csi *CSIPersistentVolumeSource"},
    "VolumeNodeAffinity": {1: "required *NodeSelector"},
    "PersistentVolumeStatus": {1: "phase string", 2: "message string", 3: "reason string",
                               4: "lastPhaseTransitionTime *Time"},
    # the sources whose PersistentVolume form differs from a Pod volume's (a secret in another namespace, ...)
    "SecretReference": {1: "name string", 2: "namespace string"},
    "GlusterfsPersistentVolumeSource": {1: "endpoints string always", 2: "path string always", 3: "readOnly bool",
                                        4: "endpointsNamespace *string"},
    "RBDPersistentVolumeSource": {1: "monitors []string", 2: "image string always", 3: "fsType string",
                                  4: "pool string", 5: "user string", 6: "keyring string",
                                  7: "secretRef *SecretReference", 8: "readOnly bool"},
    "ISCSIPersistentVolumeSource": {1: "targetPortal string always", 2: "iqn string always", 3: "lun int32 always",
                                    4: "iscsiInterface string", 5: "fsType string", 6: "readOnly bool",
                                    7: "portals []string", 8: "chapAuthDiscovery bool", 11: "chapAuthSession bool",
                                    10: "secretRef *SecretReference", 12: "initiatorName *string"},
    "CinderPersistentVolumeSource": {1: "volumeID string always", 2: "fsType string", 3: "readOnly bool",
                                     4: "secretRef *SecretReference"},
    "CephFSPersistentVolumeSource": {1: "monitors []string", 2: "path string", 3: "user string",
                                     4: "secretFile string", 5: "secretRef *SecretReference", 6: "readOnly bool"},
    "FlexPersistentVolumeSource": {1: "driver string always", 2: "fsType string", 3: "secretRef *SecretReference",
                                   4: "readOnly bool", 5: "options map[string]string"},
    "AzureFilePersistentVolumeSource": {1: "secretName string always", 2: "shareName string always",
                                        3: "readOnly bool", 4: "secretNamespace *string"},
    "ScaleIOPersistentVolumeSource": {1: "gateway string always", 2: "system string always",
                                      3: "secretRef *SecretReference", 4: "sslEnabled bool",
                                      5: "protectionDomain string", 6: "storagePool string",
                                      7: "storageMode string", 8: "volumeName string", 9: "fsType string",
                                      10: "readOnly bool"},
    "LocalVolumeSource": {1: "path string always", 2: "fsType *string"},
    "StorageOSPersistentVolumeSource": {1: "volumeName string", 2: "volumeNamespace string", 3: "fsType string",
                                        4: "readOnly bool", 5: "secretRef *ObjectReference"},
    "CSIPersistentVolumeSource": {1: "driver string always", 2: "volumeHandle string always", 3: "readOnly bool",
                                  4: "fsType string", 5: "volumeAttributes map[string]string",
                                  6: "controllerPublishSecretRef *SecretReference",
                                  7: "nodeStageSecretRef *SecretReference",
                                  8: "nodePublishSecretRef *SecretReference",
                                  9: "controllerExpandSecretRef *SecretReference",
                                  10: "nodeExpandSecretRef *SecretReference"},
})

CORE_VOLUMES = schema(POD, _PERSISTENT_VOLUMES, messages({
    "PersistentVolumeClaim": {1: "metadata ObjectMeta", 2: "spec PersistentVolumeClaimSpec",
                              3: "status PersistentVolumeClaimStatus"},
    "PersistentVolumeClaimStatus": {1: "phase string", 2: "accessModes []string", 3: "capacity map[string]Quantity",
                                    4: "conditions []PersistentVolumeClaimCondition",
                                    5: "allocatedResources map[string]Quantity",
                                    7: "allocatedResourceStatuses map[string]string",
                                    8: "currentVolumeAttributesClassName *string",
                                    9: "modifyVolumeStatus *ModifyVolumeStatus"},
    "PersistentVolumeClaimCondition": {1: "type string always", 2: "status string always", 3: "lastProbeTime Time",
                                       4: "lastTransitionTime Time", 5: "reason string", 6: "message string"},
    "ModifyVolumeStatus": {1: "targetVolumeAttributesClassName string", 2: "status string always"},
}))

STORAGE_V1 = schema(POD, _PERSISTENT_VOLUMES, messages({
    "StorageClass": {1: "metadata ObjectMeta", 2: "provisioner string always", 3: "parameters map[string]string",
                     4: "reclaimPolicy *string", 5: "mountOptions []string", 6: "allowVolumeExpansion *bool",
                     7: "volumeBindingMode *string", 8: "allowedTopologies []TopologySelectorTerm"},
    "TopologySelectorTerm": {1: "matchLabelExpressions []TopologySelectorLabelRequirement"},
    "TopologySelectorLabelRequirement": {1: "key string always", 2: "values []string"},
    "CSIDriver": {1: "metadata ObjectMeta", 2: "spec CSIDriverSpec"},
    "CSIDriverSpec": {1: "attachRequired *bool", 2: "podInfoOnMount *bool", 3: "volumeLifecycleModes []string",
                      4: "storageCapacity *bool", 5: "fsGroupPolicy *string", 6: "tokenRequests []TokenRequest",
                      7: "requiresRepublish *bool", 8: "seLinuxMount *bool",
                      9: "nodeAllocatableUpdatePeriodSeconds *int64", 10: "serviceAccountTokenInSecrets *bool",
                      11: "preventPodSchedulingIfMissing *bool"},
    "TokenRequest": {1: "audience string always", 2: "expirationSeconds *int64"},
    "CSINode": {1: "metadata ObjectMeta", 2: "spec CSINodeSpec"},
    "CSINodeSpec": {1: "drivers []CSINodeDriver"},
    "CSINodeDriver": {1: "name string always", 2: "nodeID string always", 3: "topologyKeys []string",
                      4: "allocatable *VolumeNodeResources"},
    "VolumeNodeResources": {1: "count *int32"},
    "CSIStorageCapacity": {1: "metadata ObjectMeta", 2: "nodeTopology *LabelSelector",
                           3: "storageClassName string always", 4: "capacity *Quantity", 5: "maximumVolumeSize *Quantity"},
    "VolumeAttachment": {1: "metadata ObjectMeta", 2: "spec VolumeAttachmentSpec", 3: "status VolumeAttachmentStatus"},
    "VolumeAttachmentSpec": {1: "attacher string always", 2: "source VolumeAttachmentSource",
                             3: "nodeName string always"},
    "VolumeAttachmentSource": {1: "persistentVolumeName *string", 2: "inlineVolumeSpec *PersistentVolumeSpec"},
    "VolumeAttachmentStatus": {1: "attached bool always", 2: "attachmentMetadata map[string]string",
                               3: "attachError *VolumeError", 4: "detachError *VolumeError"},
    "VolumeError": {1: "time Time", 2: "message string", 3: "errorCode *int32"},
}))

KINDS = {("v1", "PersistentVolume"): (CORE_VOLUMES, "PersistentVolume"),
         ("v1", "PersistentVolumeClaim"): (CORE_VOLUMES, "PersistentVolumeClaim"),
         **{("storage.k8s.io/v1", kind): (STORAGE_V1, kind)
            for kind in ("StorageClass", "CSIDriver", "CSINode", "CSIStorageCapacity", "VolumeAttachment")}}
