"""/healthz, /livez, /readyz and their checks, in kube-apiserver's format."""

from __future__ import annotations

import warnings

import pytest

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402


@pytest.fixture
def client() -> TestClient:
    return api_client()


def test_each_root_answers_ok_or_lists_its_checks_when_asked(client: TestClient) -> None:
    for root in ("healthz", "livez", "readyz"):
        r = client.get(f"/{root}")
        assert (r.status_code, r.text, r.headers["x-content-type-options"]) == (200, "ok", "nosniff")
    assert client.get("/readyz?verbose").text == "[+]ping ok\n[+]store ok\n[+]shutdown ok\nreadyz check passed\n"
    assert client.get("/livez", params={"verbose": "", "exclude": ["store", "etcd"]}).text == (
        '[+]ping ok\n[+]store excluded: ok\nwarn: some health checks cannot be excluded: no matches for "etcd"\n'
        "livez check passed\n")
    assert client.get("/readyz/ping").text == "ok" and client.get("/livez/store").text == "ok"
    assert client.get("/livez/shutdown").status_code == 404  # a readiness check only


def test_readiness_fails_once_the_server_shuts_down_and_always_says_which_check(client: TestClient) -> None:
    client.app.state.api.closing = True  # what begin_shutdown sets
    r = client.get("/readyz")
    assert r.status_code == 500
    assert r.text == "[+]ping ok\n[+]store ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"
    assert client.get("/readyz/shutdown").text == "internal server error: process is shutting down\n"
    assert client.get("/livez").text == "ok"  # still alive: it finishes the requests in flight
    assert client.get("/readyz?exclude=shutdown").status_code == 200


def test_a_store_that_cannot_be_read_fails_liveness(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    api = client.app.state.api

    def broken() -> int:
        raise OSError("disk I/O error")

    monkeypatch.setattr(api.store, "current_rv", broken)
    r = client.get("/livez?verbose")
    assert r.status_code == 500 and "[-]store failed: reason withheld\nlivez check failed\n" in r.text
    assert client.get("/livez/store").text == "internal server error: the store cannot be read: disk I/O error\n"
