"""generateName on the server: the base cut to 58 characters, as the simulator's name generator cuts it, and
five characters of upstream's alphabet (util/rand's consonants and digits) after it."""

from __future__ import annotations

import collections
import re
import warnings

warnings.filterwarnings("ignore", message="Using `httpx`")
from cluster import api_client  # noqa: E402

from dralloc.controllers.names import ALPHANUMS  # noqa: E402
from dralloc.server.names import random_suffix  # noqa: E402
from dralloc.server.verbs.writes import generated_name  # noqa: E402

SUFFIX = re.compile(f"[{ALPHANUMS}]{{5}}")


def test_generate_name_bases_are_cut_to_58_characters() -> None:
    name = generated_name("x" * 70)
    assert len(name) == 63 and name.startswith("x" * 58)
    assert len(generated_name("web-")) == 9


def test_a_suffix_is_five_characters_of_the_alphabet_each_drawn_evenly() -> None:
    # 27 characters in each of 5 places: 27 000 draws give each (place, character) about 1000 times;
    # a place that never varies, or a character never drawn, is far outside 700..1300.
    counts: collections.Counter[tuple[int, str]] = collections.Counter()
    for _ in range(27_000):
        suffix = random_suffix()
        assert SUFFIX.fullmatch(suffix), suffix
        counts.update(enumerate(suffix))
    assert len(counts) == 5 * len(ALPHANUMS)
    assert all(700 < n < 1300 for n in counts.values()), counts


def test_the_token_volume_is_named_kube_api_access_and_five_characters_of_the_alphabet() -> None:
    client = api_client()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"},
           "spec": {"containers": [{"name": "app", "image": "nginx:1"}]}}
    created = client.post("/api/v1/namespaces/default/pods", json=pod)
    assert created.status_code == 201, created.text
    [volume] = created.json()["spec"]["volumes"]
    assert re.fullmatch(f"kube-api-access-{SUFFIX.pattern}", volume["name"]), volume["name"]
    mount = created.json()["spec"]["containers"][0]["volumeMounts"]
    assert mount == [{"name": volume["name"], "readOnly": True,
                      "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]
