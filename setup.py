"""The optional C reader of protobuf bodies and C walk of a create's managedFields; everything else about the package is in pyproject.toml.

The extensions are optional: without a C compiler (or Python's headers) the install still succeeds, the
decoder reads bodies in Python alone (dralloc.server.protobuf.accelerated says which one is in use) and
managedFields are walked in Python."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("dralloc.server.protobuf._fastwire", ["src/dralloc/server/protobuf/_fastwire.c"],
                             optional=True),
                   Extension("dralloc.server.apply._fastfields", ["src/dralloc/server/apply/_fastfields.c"],
                             optional=True)])
