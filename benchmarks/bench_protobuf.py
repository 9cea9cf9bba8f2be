"""Decoding protobuf request bodies (server/protobuf/decoder.py): what a kube-scheduler status update of a ResourceClaim
and a driver's ResourceSlice of 8 devices cost to read, beside msgspec's decoding of the same objects as JSON.

    .venv/bin/python benchmarks/bench_protobuf.py [--calls 5000]

Prints the µs per decode (the median of 5 runs, the two forms alternating), the body sizes and protobuf's cost
as a multiple of JSON's. The protobuf bodies are made from the
JSON objects by an encoder driven by the same schema tables (this script's own, Go's field order).
"""

from __future__ import annotations

import argparse
import base64
import statistics
import timeit
from datetime import datetime
from functools import partial
from typing import Any

import msgspec

from dralloc.server.protobuf.decoder import KINDS, MAGIC, decode
from dralloc.server.protobuf.schema import Field, Schema

CLAIM = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
    "metadata": {"name": "web-gpu-x7k2p", "generateName": "web-gpu-", "namespace": "default", "uid": "0d6c4e3a",
                 "resourceVersion": "1234", "generation": 1, "creationTimestamp": "2025-01-02T03:04:05Z",
                 "annotations": {"resource.kubernetes.io/pod-claim-name": "gpu"},
                 "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "web", "uid": "5f1c",
                                      "controller": True, "blockOwnerDeletion": True}],
                 "finalizers": ["resource.kubernetes.io/delete-protection"],
                 "managedFields": [{"manager": "kube-controller-manager", "operation": "Update",
                                    "apiVersion": "resource.k8s.io/v1", "time": "2025-01-02T03:04:05Z",
                                    "fieldsType": "FieldsV1",
                                    "fieldsV1": {"f:metadata": {"f:generateName": {}}, "f:spec": {"f:devices": {}}}}]},
    "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                                  "allocationMode": "ExactCount", "count": 1}}]}},
    "status": {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                       "pool": "node-1", "device": "gpu-0"}]},
                              "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                  {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]},
                              "allocationTimestamp": "2025-01-02T03:04:06Z"},
               "reservedFor": [{"resource": "pods", "name": "web", "uid": "5f1c"}]}}
SLICE = {
    "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "node-1-gpu"},
    "spec": {"driver": "gpu.example.com", "nodeName": "node-1",
             "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
             "devices": [{"name": f"gpu-{g}", "attributes": {"model": {"string": "h100"}, "index": {"int": g},
                                                             "driverVersion": {"version": "560.35.3"}},
                          "capacity": {"memory": {"value": "80Gi"}}} for g in range(8)]}}


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _delimited(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _value(f: Field, number: int, value: Any, table: Schema) -> bytes:
    if f.varint:
        return _varint(number << 3) + _varint(int(value))
    if f.type == "string":
        return _delimited(number, value.encode())
    if f.type == "bytes":
        return _delimited(number, base64.b64decode(value))
    if f.type == "Quantity":
        return _delimited(number, _delimited(1, value.encode()))
    if f.type in ("Time", "MicroTime"):
        seconds = int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp())
        return _delimited(number, _varint(1 << 3) + _varint(seconds))
    if f.type in ("RawExtension", "FieldsV1"):
        return _delimited(number, _delimited(1, msgspec.json.encode(value)))
    return _delimited(number, encode(value, table, f.type))


def encode(obj: dict[str, Any], table: Schema, name: str) -> bytes:
    out = b""
    for number, f in sorted(table[name].items()):
        if f.inline:
            out += _delimited(number, encode(obj, table, f.type))
            continue
        if f.name not in obj:
            continue
        value = obj[f.name]
        if f.map:
            for key, v in value.items():
                entry = Field("", f.type, varint=f.varint, wire=f.wire)
                out += _delimited(number, _delimited(1, key.encode()) + _value(entry, 2, v, table))
        elif f.repeated:
            out += b"".join(_value(f, number, v, table) for v in value)
        else:
            out += _value(f, number, value, table)
    return out


def body(obj: dict[str, Any]) -> bytes:
    table, name = KINDS[obj["apiVersion"], obj["kind"]]
    type_meta = _delimited(1, obj["apiVersion"].encode()) + _delimited(2, obj["kind"].encode())
    return MAGIC + _delimited(1, type_meta) + _delimited(2, encode(obj, table, name))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=5000)
    n = parser.parse_args().calls
    for label, obj in (("ResourceClaim status update", CLAIM), ("ResourceSlice of 8 devices", SLICE)):
        pb, js = body(obj), msgspec.json.encode(obj)
        assert decode(pb) == obj, "the encoder and the decoder disagree"
        # the two forms alternate, run by run, so a busy machine slows both alike
        runs: dict[str, list[float]] = {"protobuf": [], "JSON": []}
        for _ in range(5):
            runs["protobuf"].append(timeit.timeit(partial(decode, pb), number=n) / n * 1e6)
            runs["JSON"].append(timeit.timeit(partial(msgspec.json.decode, js), number=n) / n * 1e6)
        µs = {form: statistics.median(times) for form, times in runs.items()}
        for form, size in (("protobuf", len(pb)), ("JSON", len(js))):
            ratio = f"  {µs[form] / µs['JSON']:5.1f}× JSON" if form == "protobuf" else ""
            print(f"{label:30} {form:9} {size:5} bytes  {µs[form]:7.1f} µs{ratio}")


if __name__ == "__main__":
    main()
