"""``dralloc cel``: per-device results from the shell."""

from __future__ import annotations

import subprocess

import pytest


def run(cmd, *args):
    return subprocess.run([*cmd, "cel", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.slow
def test_prints_true_false_or_the_error_per_device(dralloc_cmd, examples_dir):
    res = run(dralloc_cmd, 'device.attributes["gpu.nvidia.com"].profile == "3g.40gb"',
              "-f", str(examples_dir / "20-gpu-slices.yaml"))
    assert res.returncode == 0
    lines = res.stdout.splitlines()
    assert "gpu.nvidia.com/gpu-node-1/gpu-0-mig-3g-40gb-0: true" in lines
    assert "gpu.nvidia.com/gpu-node-1/gpu-0-mig-1g-10gb-0: false" in lines
    assert "gpu.nvidia.com/gpu-node-1/gpu-0: CEL runtime error: no such key: profile" in lines


@pytest.mark.slow
def test_a_compile_error_shows_the_caret_and_exits_2(dralloc_cmd, examples_dir):
    res = run(dralloc_cmd, "device.driver ==", "-f", str(examples_dir))
    assert res.returncode == 2
    assert "Syntax error" in res.stderr and "^" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow
def test_no_matching_device_exits_1(dralloc_cmd, examples_dir):
    res = run(dralloc_cmd, 'device.driver == "none.example.com"', "-f", str(examples_dir / "21-nic-slices.yaml"))
    assert res.returncode == 1


@pytest.mark.slow
def test_every_issue_of_an_expression_is_printed(dralloc_cmd, examples_dir):
    res = run(dralloc_cmd, "has(device) || device.attributes.all(1, true)", "-f", str(examples_dir))
    assert res.returncode == 2
    assert "ERROR: <input>:1:5: invalid argument to has() macro" in res.stderr
    assert "ERROR: <input>:1:38: argument must be a simple name" in res.stderr
    assert "Traceback" not in res.stderr
