"""Production traces as DRA objects, and their replay through the scheduler.

* :mod:`dralloc.trace.alibaba` reads the Alibaba GPU trace (cluster-trace-gpu-v2023, "openb") CSVs and
  turns them into Nodes, ResourceSlices (each GPU a device with consumable milli-GPU capacity), a
  DeviceClass, Pods and their ResourceClaims;
* :mod:`dralloc.trace.protocol` orders the pods as the FGD paper's artifact does (shuffled, inflated);
* :mod:`dralloc.trace.replay` schedules them one by one through the scheduling framework and records the
  allocation curve and fragmentation;
* :mod:`dralloc.trace.events` replays them over time instead: arrivals at their creation time, departures
  at their deletion time, a queue for the pods that wait.
"""
