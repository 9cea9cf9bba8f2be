"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``): the decoder and its schema
tables."""
