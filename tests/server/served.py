"""A `dralloc serve` process for end-to-end tests, and small helpers to drive it."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
KUBECTL = shutil.which("kubectl")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`dralloc serve` with its data directory under ``tmp/data/dralloc``: HTTPS with the generated CA unless
    ``--insecure-http`` or ``--tls-cert`` is among the extra flags (default: ``--anonymous``)."""

    def __init__(self, tmp: Path, db: Path | None = None, extra: list[str] | None = None) -> None:
        extra = ["--anonymous"] if extra is None else extra
        self.port = free_port()
        self.data_dir = tmp / "data" / "dralloc"
        scheme = "http" if "--insecure-http" in extra else "https"
        self.url = f"{scheme}://127.0.0.1:{self.port}"
        self.env = {**os.environ, "XDG_DATA_HOME": str(tmp / "data")}  # the default data directory
        self.proc = subprocess.Popen([sys.executable, "-m", "dralloc", "serve", "--data-dir", str(self.data_dir),
                                      "--port", str(self.port), *(["--db", str(db)] if db else []), *extra],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=self.env)
        self.context: ssl.SSLContext | None = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if scheme == "https" and self.context is None:
                    self.context = (ssl._create_unverified_context() if "--tls-cert" in extra
                                    else ssl.create_default_context(cafile=str(self.data_dir / "pki" / "ca.crt")))
                urllib.request.urlopen(f"{self.url}/healthz", timeout=1, context=self.context).read()
                return
            except (OSError, ssl.SSLError):
                if self.proc.poll() is not None:
                    raise RuntimeError(self.proc.stderr.read().decode())
                self.context = None
                time.sleep(0.1)
        raise RuntimeError("server did not start")

    def open(self, path: str, data: bytes | None = None, method: str | None = None,
             headers: dict[str, str] | None = None, timeout: float = 10) -> Any:
        req = urllib.request.Request(f"{self.url}{path}", data=data, method=method, headers=headers or {})
        return urllib.request.urlopen(req, timeout=timeout, context=self.context)

    def kubeconfig(self, path: Path, *flags: str) -> Path:
        subprocess.run([sys.executable, "-m", "dralloc", "kubeconfig", "--data-dir", str(self.data_dir),
                        "-o", str(path), *flags], check=True, env=self.env)
        return path

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)


def create_class(server: Server, name: str) -> str:
    body = json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name}})
    with server.open("/apis/resource.k8s.io/v1/deviceclasses", body.encode(), "POST",
                     {"content-type": "application/json"}) as r:
        return json.load(r)["metadata"]["resourceVersion"]


Kubectl = Callable[..., subprocess.CompletedProcess[str]]

# One ready-to-use node for the end-to-end modules whose workloads need somewhere to run (8 CPUs, 16Gi).
NODE = """apiVersion: v1
kind: Node
metadata: {name: node-1}
status:
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
"""


def kubectl_session(tmp_path: Path, manifest: str, extra: tuple[str, ...] = ("--fake-kubelet",)) -> Iterator[Kubectl]:
    """A served cluster (``extra``: serve's flags) with ``manifest`` applied, and the real kubectl against it:
    ``run(*args, stdin=..., check=True)`` (a fixture's body: skips without kubectl, stops the server after)."""
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    server = Server(tmp_path, tmp_path / "db.sqlite", extra=list(extra))
    cfg = server.kubeconfig(tmp_path / "kubeconfig")
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(cfg)}

    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        proc = subprocess.run([KUBECTL, *args], check=False, input=stdin, capture_output=True, text=True, env=env,
                              timeout=90)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    run("apply", "-f", "-", stdin=manifest)
    try:
        yield run
    finally:
        server.stop()


def eventually(check: Callable[[], bool], seconds: float = 60) -> None:
    """Wait (polling) until ``check()`` holds: what the controllers write comes a pass or two later, later still
    on a loaded machine."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("not reached in time")
        time.sleep(0.2)
