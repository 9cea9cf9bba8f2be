"""Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``): the decoder (decoder.py, its
public API, and the modules it is built of) and its schema tables."""
