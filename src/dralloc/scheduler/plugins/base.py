"""The plugin interface, re-exported from :mod:`dralloc.scheduler.framework` where it lives."""

from dralloc.scheduler.framework import Cycle, Plugin, implements

__all__ = ["Cycle", "Plugin", "implements"]
