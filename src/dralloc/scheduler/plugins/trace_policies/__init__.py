"""Scoring policies for GPU clusters, one module each: kube-scheduler's default and MostAllocated, and the
policies of "Beware of Fragmentation" (USENIX ATC'23): Random, DotProd, GpuClustering, GpuPacking, BestFit
and FGD. Each is a score plugin (:class:`~dralloc.scheduler.framework.Plugin`); the paper's policies also
choose which GPU of a node a share goes to (the device-ordering hook, beyond upstream DRA).

:func:`dralloc.scheduler.plugins.trace_policies.registry.profile` builds a policy's plugin list by name.
"""
