"""The optional C reader of protobuf bodies; everything else about the package is in pyproject.toml.

The extension is optional: without a C compiler (or Python's headers) the install still succeeds and the
decoder reads bodies in Python alone (dralloc.server.protobuf.accelerated says which one is in use)."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dralloc.server.protobuf._fastwire", ["src/dralloc/server/protobuf/_fastwire.c"],
                             optional=True)])
