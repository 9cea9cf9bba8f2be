"""End to end: `kubectl create token` against `dralloc serve`, and kubectl authenticating with the token it
printed; the signing key outlives a restart."""

from __future__ import annotations

import base64
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from served import KUBECTL, Server

pytestmark = pytest.mark.e2e
ISSUER = "https://kubernetes.default.svc.cluster.local"


def claims(token: str) -> dict[str, Any]:
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


def test_kubectl_creates_tokens_that_authenticate_as_the_service_account(tmp_path: Path) -> None:
    if KUBECTL is None:
        pytest.skip("kubectl is not installed")
    server = Server(tmp_path, extra=[])  # the admin token of the data directory
    env = {**os.environ, "HOME": str(tmp_path), "KUBECONFIG": str(server.data_dir / "kubeconfig")}

    def kubectl(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run([KUBECTL, *args], capture_output=True, text=True, env=env, timeout=60)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
        return proc

    def whoami(token: str) -> dict[str, Any]:
        return json.loads(kubectl("--token", token, "auth", "whoami", "-o", "json").stdout)["status"]["userInfo"]

    try:
        token = kubectl("create", "token", "default").stdout.strip()
        assert claims(token)["exp"] - claims(token)["iat"] == 3600 and claims(token)["aud"] == [ISSUER]
        user = whoami(token)
        assert user["username"] == "system:serviceaccount:default:default"
        assert user["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]
        assert user["extra"] == {"authentication.kubernetes.io/credential-id": [f"JTI={claims(token)['jti']}"]}
        table = kubectl("--token", token, "auth", "whoami").stdout
        assert "system:serviceaccount:default:default" in table and "system:serviceaccounts:default" in table
        assert kubectl("--token", token, "get", "pods").returncode == 0  # no allow list: it may do everything

        twenty = kubectl("create", "token", "default", "--duration", "20m").stdout.strip()
        assert claims(twenty)["exp"] - claims(twenty)["iat"] == 1200

        elsewhere = kubectl("create", "token", "default", "--audience", "x").stdout.strip()
        assert claims(elsewhere)["aud"] == ["x"]
        refused = kubectl("--token", elsewhere, "auth", "whoami", check=False)
        assert refused.returncode == 1 and "Unauthorized" in refused.stderr  # not for the API server

        kubectl("run", "p", "--image=registry.k8s.io/pause:3.10", "--restart=Never")
        pod_uid = kubectl("get", "pod", "p", "-o", "jsonpath={.metadata.uid}").stdout
        bound = kubectl("create", "token", "default", "--bound-object-kind", "Pod",
                        "--bound-object-name", "p").stdout.strip()
        assert claims(bound)["kubernetes.io"]["pod"] == {"name": "p", "uid": pod_uid}
        extra = whoami(bound)["extra"]
        assert (extra["authentication.kubernetes.io/pod-name"], extra["authentication.kubernetes.io/pod-uid"]) == (
            ["p"], [pod_uid])
        kubectl("delete", "pod", "p", "--grace-period=0", "--force")
        gone = kubectl("--token", bound, "auth", "whoami", check=False)
        assert gone.returncode == 1 and "Unauthorized" in gone.stderr  # the pod went, and its token with it

        short = kubectl("create", "token", "default", "--duration", "1m", check=False)
        assert short.returncode == 1
        assert short.stderr.strip() == (
            'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: '
            "spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes")
        missing = kubectl("create", "token", "nobody", check=False)
        assert missing.returncode == 1
        assert missing.stderr.strip() == 'error: failed to create token: serviceaccounts "nobody" not found'

        key = server.data_dir / "pki" / "sa.key"
        assert key.stat().st_mode & 0o077 == 0
        server.stop()
        server = Server(tmp_path, extra=[])  # the same key after a restart: the token still authenticates
        env["KUBECONFIG"] = str(server.data_dir / "kubeconfig")
        assert whoami(token)["username"] == "system:serviceaccount:default:default"
    finally:
        server.stop()
