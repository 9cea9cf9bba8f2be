"""The C reader of protobuf bodies (server/protobuf/_fastwire.c through accelerated.py): built where a C compiler
is; where it answers, the walker's object, keys in the same order (the independent reference walker's, on random
bodies of every kind); every body the Python single pass reads, it reads too; anything else (unknown fields,
errors, mutated and truncated bodies) it leaves to the Python path, which answers as without it — no crash, no
leak, safe with threads. The other protobuf test modules run whole with it and without it (protobuf_readers.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import threading
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import protobuf_reference as reference
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_protobuf_limits import full
from test_protobuf_reference import ROOTS, delimited, encoded, key, outcome, varint
from test_protobuf_round_trip import go_json

from dralloc.server.protobuf import accelerated, decoder
from dralloc.server.protobuf.decoder import (
    KINDS,
    MAX_DEPTH,
    OPTIONS,
    ProtobufError,
    _usual_envelope,
    accelerator_in_use,
    decode,
    encode,
    use_accelerator,
)
from dralloc.server.protobuf.forms import _time
from dralloc.server.protobuf.plans import _plans
from dralloc.server.protobuf.pod import POD
from dralloc.server.protobuf.resource import RESOURCE_V1
from dralloc.server.protobuf.schema import CORE, META, Schema
from dralloc.server.protobuf.walker import _walk

# the special messages the C reader hands to the Python path
PYTHON_ONLY = frozenset({"JSONSchemaProps"})
needs_c = pytest.mark.skipif(not accelerated.AVAILABLE, reason=f"the C reader is not built: {accelerated.IMPORT_ERROR}")


def in_c(buf: bytes, table: Schema, name: str, depth: int = 1) -> dict[str, Any] | None:
    return accelerated.read_message(buf, 0, len(buf), table, name, depth)


def walked(buf: bytes, table: Schema, name: str) -> Any:
    return _walk(_plans(table)[name], buf, 1)


def json(value: Any) -> bytes:
    """The JSON text (key order included)."""
    return msgspec.json.encode(value)


def python_decode(body: bytes) -> tuple[str, Any]:
    before = use_accelerator(False)
    try:
        return "ok", json(decode(body))
    except ProtobufError as exc:
        return "error", str(exc)
    finally:
        use_accelerator(before)


def c_decode(body: bytes) -> tuple[str, Any]:
    before = use_accelerator(True)
    try:
        return "ok", json(decode(body))
    except ProtobufError as exc:
        return "error", str(exc)
    finally:
        use_accelerator(before)


# --- built, and switched off on demand ----------------------------------------------------------------

def test_the_extension_is_built_where_a_compiler_is() -> None:
    # a broken build would otherwise go unnoticed: every body would still decode, in Python
    if accelerated.PURE_PYTHON:
        pytest.skip("DRALLOC_PURE_PYTHON is set")
    # the compiler setuptools uses (CC, else Python's own), where it runs (CC=false: an install without one)
    compiler = (os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc").split()[0]
    found = shutil.which(compiler)
    if found is None or subprocess.run([found, "--version"], capture_output=True).returncode != 0:
        pytest.skip(f"no C compiler ({compiler}): the Python path alone is installed")
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        pytest.skip("no Python headers (Python.h): the Python path alone is installed")
    assert accelerated.AVAILABLE, accelerated.IMPORT_ERROR


def test_dralloc_pure_python_reads_every_body_in_python() -> None:
    env = {**os.environ, "DRALLOC_PURE_PYTHON": "1"}
    code = ("import sys; from dralloc.server.protobuf import accelerated, decoder; "
            "print(accelerated.AVAILABLE, decoder.accelerator_in_use(), "
            "'dralloc.server.protobuf._fastwire' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False", "False"]


@needs_c
def test_the_c_reader_is_the_default_where_built() -> None:
    assert accelerator_in_use() == (not accelerated.PURE_PYTHON)


# --- the same objects ---------------------------------------------------------------------------------

@needs_c
@pytest.mark.parametrize(("api_version", "kind"), sorted({**KINDS, **OPTIONS}))
def test_every_field_of_every_kind_is_read_in_c(api_version: str, kind: str) -> None:
    table, name = {**KINDS, **OPTIONS}[api_version, kind]
    body = encode({"apiVersion": api_version, "kind": kind, **full(table, name)})
    usual = _usual_envelope(body)
    assert usual is not None
    _, _, buf, start, end = usual
    found = accelerated.read_message(buf, start, end, table, name, 1)
    if any(f.type in PYTHON_ONLY for fields in table.values() for f in fields.values()):
        assert found is None  # (a CRD's schema: handed to the Python path)
        assert c_decode(body) == python_decode(body)
        return
    assert found is not None, "left to Python"
    assert json(found) == json(walked(buf[start:end], table, name))
    assert c_decode(body) == python_decode(body)


@pytest.mark.slow
@needs_c
@settings(max_examples=500, deadline=None)
@given(st.data())
def test_where_c_answers_it_is_the_reference_walker_s_answer(data: st.DataObject) -> None:
    table, name = data.draw(st.sampled_from(ROOTS))
    buf = data.draw(encoded(table, name, faults=data.draw(st.booleans())))
    found = in_c(buf, table, name)
    if found is not None:
        assert ("ok", json(found)) == outcome(reference.message, buf, table, name)


@pytest.mark.slow
@needs_c
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.data())
def test_c_reads_every_body_go_writes(data: st.DataObject) -> None:
    # (so that it leaves none of Go's bodies to the slower path), keys in the struct's order
    (api_version, kind), (table, name) = data.draw(st.sampled_from(sorted({**KINDS, **OPTIONS}.items())))
    head: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if (api_version, kind) in KINDS:
        head["metadata"] = {}
    obj = {**head, **data.draw(go_json(table, name))}
    usual = _usual_envelope(encode(obj))
    assert usual is not None
    _, _, buf, start, end = usual
    found = accelerated.read_message(buf, start, end, table, name, 1)
    if found is None and any(f.type in PYTHON_ONLY for fields in table.values() for f in fields.values()):
        found = walked(buf[start:end], table, name)  # (a CRD's schema: handed to the Python path)
    assert found is not None, "left to Python"
    assert json({**head, **found}) == json(obj)


# --- each rule, on a body that exercises it -----------------------------------------------------------

POD_SPEC_IN_FIELD_ORDER = (delimited(2, delimited(1, b"app")) + key(3, 2) + varint(0)  # (restartPolicy: empty)
                           + delimited(20, delimited(1, b"init")) + key(21, 0) + varint(0))


def seconds(s: int, nanos: int | None = None) -> bytes:
    return key(1, 0) + varint(s) + (key(2, 0) + varint(nanos) if nanos is not None else b"")


RULES: dict[str, tuple[Schema, str, bytes]] = {
    # struct order is not field-number order: initContainers (20) comes before containers (2) in the JSON
    "struct order": (POD, "PodSpec", POD_SPEC_IN_FIELD_ORDER),
    # a pointer's false is kept; an empty string left out
    "kept zero": (POD, "PodSpec", delimited(2, delimited(1, b"app")) + key(21, 0) + varint(0)),
    # an inline message's fields are the object's own (a probe's handler)
    "inline": (POD, "Probe", delimited(1, delimited(3, delimited(1, key(1, 0) + varint(0) + key(2, 0) + varint(80))))
               + key(2, 0) + varint(5)),
    "IntOrString string": (POD, "TCPSocketAction", delimited(1, key(1, 0) + varint(1) + key(2, 0) + varint(0)
                                                                + delimited(3, b"http"))),
    "IntOrString negative": (POD, "TCPSocketAction", delimited(1, key(1, 0) + varint(0) + key(2, 0) + varint(-7)
                                                                  + delimited(3, b""))),
    # a map entry without its value is the zero value
    "map zero string": (META, "ObjectMeta", delimited(11, delimited(1, b"k"))),
    "map zero bytes and base64": (CORE, "Secret", delimited(2, delimited(1, b"a"))
                                  + b"".join(delimited(2, delimited(1, b"k%d" % n) + delimited(2, b"\xfb\xff"[:n % 3] * n))
                                             for n in range(1, 6))),
    "map zero message": (RESOURCE_V1, "CounterSet", delimited(1, b"set") + delimited(2, delimited(1, b"mem"))),
    "map zero quantity": (CORE, "NodeStatus", delimited(1, delimited(1, b"cpu"))),
    # a list of varints, one key each or packed; int32 and int64 signs
    "packed and unpacked ints": (RESOURCE_V1, "DeviceAttribute", delimited(6, varint(1) + varint(-2) + varint(2**63))
                                 + key(6, 0) + varint(7) + delimited(7, varint(0) + varint(2)) + key(7, 0) + varint(1)),
    "empty packed run": (RESOURCE_V1, "DeviceAttribute", delimited(6, b"")),
    "a list of strings": (CORE, "NodeSpec", delimited(1, b"10.0.0.0/24") + delimited(7, b"10.0.0.0/24")
                          + delimited(7, b"")),
    # an int32 is the low 32 bits of its varint: zero (left out) when those are
    "int32 of zero low bits": (CORE, "EventSeries", key(1, 0) + varint(2**32) + delimited(2, seconds(1))),
    "int32 of a negative varint": (CORE, "EventSeries", key(1, 0) + varint(-3)),
    "negative int64": (META, "ObjectMeta", delimited(1, b"n") + key(7, 0) + varint(-5) + key(10, 0) + varint(-1)),
    "times": (META, "ObjectMeta", delimited(8, seconds(1_700_000_000, 999_999_999))
              + delimited(9, seconds(-62_135_596_800))),
    "last time": (META, "ObjectMeta", delimited(8, seconds(253_402_300_799))),
    "micro time borrows from the seconds": (CORE, "EventSeries", key(1, 0) + varint(2)
                                             + delimited(2, seconds(10, -1500))),
    "micro time of nanos alone": (CORE, "EventSeries", delimited(2, key(2, 0) + varint(999_999_999))),
    "empty time is null": (META, "ObjectMeta", delimited(1, b"n") + delimited(8, b"")),
    "fields v1": (META, "ManagedFieldsEntry", delimited(7, delimited(1, b'{"f:spec":{"f:x":{}}}'))),
    "empty fields v1": (META, "ManagedFieldsEntry", delimited(1, b"m") + delimited(7, b"")),
    "quantity": (CORE, "NodeStatus", delimited(1, delimited(1, b"cpu") + delimited(2, delimited(1, b"64")))),
    "empty quantity": (CORE, "NodeStatus", delimited(1, delimited(1, b"cpu") + delimited(2, b""))),
    "a list's items split": (META, "ObjectMeta", delimited(14, b"a") + delimited(1, b"n") + delimited(14, b"b")),
    "fields out of order": (META, "ObjectMeta", delimited(3, b"ns") + delimited(1, b"n")),
    "long strings and sizes": (META, "ObjectMeta", delimited(1, b"n" * 200) + delimited(12, delimited(
        1, b"k") + delimited(2, b"v" * 20000))),
}


@needs_c
@pytest.mark.parametrize("rule", sorted(RULES))
def test_c_reads_each_rule_as_the_walker(rule: str) -> None:
    table, name, buf = RULES[rule]
    found = in_c(buf, table, name)
    assert found is not None, "left to Python"
    assert json(found) == json(walked(buf, table, name)) == json(reference.message(buf, table, name))


LEFT_TO_PYTHON: dict[str, tuple[Schema, str, bytes]] = {
    "unknown field": (META, "ObjectMeta", delimited(1, b"n") + delimited(99, b"x")),
    "wrong wire type": (META, "ObjectMeta", key(1, 0) + varint(1)),
    "a field given twice": (META, "ObjectMeta", delimited(1, b"a") + delimited(1, b"b")),
    "a message given twice": (CORE, "Namespace", delimited(2, b"") + delimited(2, delimited(1, b"f"))),
    "truncated": (META, "ObjectMeta", delimited(1, b"name")[:-1]),
    "truncated varint": (META, "ObjectMeta", key(7, 0) + b"\x80"),
    "varint of eleven bytes": (META, "ObjectMeta", key(7, 0) + b"\xff" * 10 + b"\x01"),
    "invalid UTF-8": (META, "ObjectMeta", delimited(1, b"\xff")),
    "invalid UTF-8 of a map key": (META, "ObjectMeta", delimited(11, delimited(1, b"\xc3"))),
    "time before year 1": (META, "ObjectMeta", delimited(8, seconds(-62_135_596_801))),
    "time after year 9999": (META, "ObjectMeta", delimited(8, seconds(253_402_300_800))),
    "time of a wrong wire": (META, "ObjectMeta", delimited(8, delimited(1, b""))),
    "IntOrString of type 2": (POD, "TCPSocketAction", delimited(1, key(1, 0) + varint(2))),
    "fields v1 that is not JSON": (META, "ManagedFieldsEntry", delimited(7, delimited(1, b"{"))),
    "a map entry of three fields": (META, "ObjectMeta", delimited(11, delimited(1, b"k") + delimited(2, b"v")
                                                                  + delimited(3, b"x"))),
    "a map entry value first": (META, "ObjectMeta", delimited(11, delimited(2, b"v") + delimited(1, b"k"))),
    "a quantity of two texts": (CORE, "NodeStatus", delimited(1, delimited(1, b"cpu") + delimited(
        2, delimited(1, b"1") + delimited(1, b"2")))),
    "field number 0": (META, "ObjectMeta", key(0, 2) + varint(0)),
}


@needs_c
@pytest.mark.parametrize("case", sorted(LEFT_TO_PYTHON))
def test_c_leaves_the_rest_to_python(case: str) -> None:
    table, name, buf = LEFT_TO_PYTHON[case]
    assert in_c(buf, table, name) is None
    # and decoding it gives the walker's answer or error, as without the C reader
    assert outcome(lambda b, t, n: decode_message(b, t, n), buf, table, name) == outcome(
        reference.message, buf, table, name)


def decode_message(buf: bytes, table: Schema, name: str) -> dict[str, Any]:
    from dralloc.server.protobuf.decoder import message

    before = use_accelerator(True)
    try:
        return message(buf, table, name)
    finally:
        use_accelerator(before)


@needs_c
def test_nesting_deeper_than_the_limit_is_left_to_python() -> None:
    buf = delimited(2, delimited(1, b"f"))  # a Namespace's spec: one level below the namespace
    assert in_c(buf, CORE, "Namespace", MAX_DEPTH - 1) is not None
    assert in_c(buf, CORE, "Namespace", MAX_DEPTH) is None
    with pytest.raises(ProtobufError, match="deeper than"):
        _walk(_plans(CORE)["Namespace"], buf, MAX_DEPTH)


@needs_c
@settings(max_examples=300, deadline=None)
@given(st.integers(-62_135_596_800 - 5, 253_402_300_799 + 5), st.integers(-(2**31), 2**31 - 1), st.booleans())
def test_times_are_written_as_forms_writes_them(s: int, nanos: int, micro: bool) -> None:
    raw = seconds(s, nanos)
    table, name, number = (CORE, "EventSeries", 2) if micro else (META, "ObjectMeta", 8)
    found = in_c(delimited(number, raw), table, name)
    try:
        expected = _time(raw, micro)
    except ProtobufError:
        assert found is None
        return
    assert found is not None
    assert found["lastObservedTime" if micro else "creationTimestamp"] == expected


# --- bad bodies: no crash, the Python path's answer ----------------------------------------------------

GO_BODIES = [encode({"apiVersion": api_version, "kind": kind, **full(table, name)})
             for (api_version, kind), (table, name) in sorted(KINDS.items())] + [
    encode({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1", "labels": {"kubernetes.io/os": "linux"}},
            "spec": {"podCIDRs": ["10.244.1.0/24"], "taints": [{"key": "gpu.example.com/maintenance",
                                                                 "effect": "NoSchedule"}]},
            "status": {"capacity": {"cpu": "64", "memory": "512Gi"}, "allocatable": {"cpu": "63500m"}}}),
    encode({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
            "data": {"first-setting": "on", "second-setting": "off"}, "binaryData": {"blob": "AAECAw=="}})]


@needs_c
def test_go_s_envelope_of_a_kind_met_before_is_read_in_one_c_call() -> None:
    body = GO_BODIES[sorted(KINDS).index(("v1", "ConfigMap"))]
    expected = python_decode(body)
    assert c_decode(body) == expected  # (the kind met: its envelope is known from now on)
    found = accelerated.read_envelope(decoder._C_ENVELOPES, body)
    assert found is not None and ("ok", json(found)) == expected
    tail = len(body) - 4
    for other in (body[:tail], body[:tail] + b"\x1a\x01x\x22\x00", body + b"\x00",  # (other tails)
                  body[:4] + b"\x0b" + body[5:],  # (another envelope field first)
                  body[:5] + bytes([body[5] + 1]) + body[6:],  # (another typeMeta size)
                  body[:8] + bytes([body[8] ^ 0x20]) + body[9:],  # (a typeMeta not met)
                  b"k8s\x00"):
        assert accelerated.read_envelope(decoder._C_ENVELOPES, other) is None


@pytest.mark.slow
@needs_c
@settings(max_examples=600, deadline=None)
@given(st.data())
def test_mutated_and_truncated_go_bodies_get_the_python_path_s_answer(data: st.DataObject) -> None:
    body = bytearray(data.draw(st.sampled_from(GO_BODIES)))
    for _ in range(data.draw(st.integers(0, 4))):
        body[data.draw(st.integers(4, len(body) - 1))] = data.draw(st.integers(0, 255))
    if data.draw(st.booleans()):
        body = body[:data.draw(st.integers(4, len(body)))]
    assert c_decode(bytes(body)) == python_decode(bytes(body))


@needs_c
def test_reading_from_threads_gives_each_its_object() -> None:
    expected = [python_decode(body) for body in GO_BODIES]
    before = use_accelerator(True)
    wrong: list[int] = []

    def read(offset: int) -> None:
        for i in range(300):
            n = (i + offset) % len(GO_BODIES)
            if json(decode(GO_BODIES[n])) != expected[n][1]:
                wrong.append(n)

    try:
        threads = [threading.Thread(target=read, args=(t,)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        use_accelerator(before)
    assert not wrong


@pytest.mark.slow
@needs_c
def test_reading_leaks_nothing() -> None:
    bodies = [*GO_BODIES, *(body[:len(body) // 2] for body in GO_BODIES),  # (truncated: left to Python)
              *(body.replace(b"gpu", b"\xffpu") for body in GO_BODIES)]  # (invalid UTF-8 at some depth)

    def read_all() -> None:
        for body in bodies:
            try:
                decode(body)
            except ProtobufError:
                pass

    before = use_accelerator(True)
    try:
        for _ in range(50):  # (the Python path's caches filled)
            read_all()
        tracemalloc.start()
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(200):
            read_all()
        grown = tracemalloc.get_traced_memory()[0] - start
        tracemalloc.stop()
    finally:
        use_accelerator(before)
    assert grown < 32 * 1024, f"{grown} bytes more after 200 rounds"  # (a str a body: 500 KiB)


@needs_c
def test_a_table_the_c_reader_hands_back_is_read_by_the_python_path_from_the_start() -> None:
    crd_table, crd = KINDS["apiextensions.k8s.io/v1", "CustomResourceDefinition"]
    assert accelerated.object_reader(crd_table, crd, True) is None  # (its schema: every body handed back)
    pod_table, pod = KINDS["v1", "Pod"]
    assert accelerated.object_reader(pod_table, pod, True) is not None
    envelopes: accelerated.Envelopes = {}
    accelerated.add_envelope(envelopes, b"crd", crd_table, crd, True, "apiextensions.k8s.io/v1", crd)
    accelerated.add_envelope(envelopes, b"pod", pod_table, pod, True, "v1", pod)
    assert list(envelopes) == [b"pod"]
