"""The kube-scheduler for DRA: a cluster snapshot, the scheduling queue and cycle, and its plugins."""
