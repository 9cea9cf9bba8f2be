"""The controllers DRA needs, running inside ``dralloc serve``: the resourceclaim controller, a scheduler loop
built on :mod:`dralloc.scheduler`, the device taint eviction controller and an optional fake kubelet."""

from dralloc.server.controllers.manager import ControllerManager, Options

__all__ = ["ControllerManager", "Options"]
