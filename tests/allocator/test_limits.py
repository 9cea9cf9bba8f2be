"""The 32-devices-per-claim limit during the search (upstream's errAllocationResultMaxSizeExceeded)."""

from __future__ import annotations

from cases_loader import expand

from dralloc.allocator import Allocator
from dralloc.api import codec

DRIVER = "d.example.com"


def _run(requests, n_devices=64):
    objs = [{"kind": "DeviceClass", "name": "any"}, {"kind": "Node", "name": "node-1"},
            {"kind": "ResourceSlice", "name": "s", "driver": DRIVER, "pool": "p", "nodeName": "node-1",
             "devices": [f"dev-{i:02d}" for i in range(n_devices)]},
            {"kind": "ResourceClaim", "name": "c", "requests": requests}]
    objs = [codec.decode(expand(o)) for o in objs]
    return Allocator.from_objects(objs).allocate(objs[1], [objs[-1]])


def test_subrequest_over_the_limit_moves_on_to_a_smaller_subrequest():
    def req(name):
        return {"name": name, "firstAvailable": [{"name": "big", "class": "any", "count": 32},
                                                  {"name": "small", "class": "any", "count": 16}]}

    out = _run([req("r0"), req("r1")])
    assert out.status == "allocated"
    results = out.results[0].devices.results
    assert [r.request for r in results] == ["r0/small"] * 16 + ["r1/small"] * 16
    assert [r.device for r in results] == [f"dev-{i:02d}" for i in range(32)]


def test_first_subrequest_needing_too_many_devices_is_skipped():
    out = _run([{"name": "r", "firstAvailable": [{"name": "huge", "class": "any", "count": 500},
                                                 {"name": "one", "class": "any", "count": 1}]}], n_devices=2)
    assert out.status == "allocated"
    assert [r.request for r in out.results[0].devices.results] == ["r/one"]


def test_a_search_deeper_than_the_default_recursion_limit_is_run_to_its_end():
    # 40 claims of 24 devices each: a path of some 1100 search nodes, deeper than Python's default limit of
    # 1000 frames, which dralloc leaves as it is until a search needs more
    import subprocess
    import sys
    script = (
        "import sys\n"
        "from cases_loader import expand\n"
        "from dralloc.allocator import Allocator\n"
        "from dralloc.api import codec\n"
        "assert sys.getrecursionlimit() == 1000, sys.getrecursionlimit()  # (importing dralloc raises nothing)\n"
        "objs = [{'kind': 'DeviceClass', 'name': 'any'}, {'kind': 'Node', 'name': 'node-1'}]\n"
        "objs += [{'kind': 'ResourceSlice', 'name': f's{s}', 'driver': 'd.example.com', 'pool': f'p{s}',\n"
        "          'nodeName': 'node-1', 'devices': [f'dev-{s}-{i}' for i in range(120)]}\n"
        "         for s in range(8)]\n"
        "claims = [{'kind': 'ResourceClaim', 'name': f'c{i}', 'requests': [{'name': 'r', 'class': 'any', 'count': 24}]}\n"
        "          for i in range(40)]\n"
        "objs = [codec.decode(expand(o)) for o in objs + claims]\n"
        "out = Allocator.from_objects(objs).allocate(objs[1], objs[-40:])\n"
        "assert out.status == 'allocated', out.status\n"
        "assert sum(len(r.devices.results) for r in out.results) == 960\n"
        "print('ok', sys.getrecursionlimit())\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=__import__("pathlib").Path(__file__).parent)
    assert proc.returncode == 0 and proc.stdout.startswith("ok"), proc.stderr[-3000:]
    assert int(proc.stdout.split()[1]) < 5000  # (raised only as far as the search needs)
