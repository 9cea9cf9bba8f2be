"""A resource.k8s.io API server for kubectl and the official clients: ``create_app(store)``."""

from dralloc.server.app import create_app

__all__ = ["create_app"]
