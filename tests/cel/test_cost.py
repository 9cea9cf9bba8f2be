"""The estimated worst-case cost of DRA selectors: the figures kube-apiserver computes for its own
selector tests (cel-go's estimator with the DRA environment's declared size limits), so that the
"too complex, exceeds cost limit" verdicts are the same."""

from __future__ import annotations

import pytest

from dralloc.cel import compile_selector

ATTRIBUTE_VALUE = 64  # the largest size of an attribute value (64 characters or 48 list items)

UPSTREAM_COSTS = [
    ('device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))',
     6),
    ('device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))',
     6),
    ('"no-such-domain" in device.attributes',
     3),
    ('device.driver == ""',
     2),
    ('device.driver == "dra.example.com"',
     4),
    ('device.attributes["dra.example.com"].name',
     4),
    ('device.attributes["dra.example.com"]["name"]',
     4),
    ('cel.bind(dra, device.attributes["dra.example.com"], dra.name)',
     15),
    ('device.attributes["dra.example.com"].name > 0',
     5),
    ('device.attributes["dra.example.com"].name == "fish"',
     5),
    ('device.attributes["dra.example.com"].name.exists(x, x > 0)',
     5 + 6 * ATTRIBUTE_VALUE),
    ('device.attributes["dra.example.com"].names',
     4),
    ('device.attributes["dra.example.com"].name.includes("fish")',
     52),
    ('device.attributes["dra.example.com"].names.size() == 2',
     6),
    ('device.attributes["dra.example.com"].names.all(x, x != "")',
     5 + 4 * ATTRIBUTE_VALUE),
    ('device.attributes["dra.example.com"].names.all(x, x.isGreaterThan(semver("0.0.1")))',
     5 + 6 * ATTRIBUTE_VALUE),
    ('device.attributes["dra.example.com"].name.includes(semver("1.0.0"))',
     53),
    ('1 in device.attributes["dra.example.com"].names',
     4 + ATTRIBUTE_VALUE),
    ('device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1"))',
     6),
    ('device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)',
     7),
    ('device.attributes["dra.example.com"].name.exists(x, x.isGreaterThan(semver("0.0.1")))',
     5 + 7 * ATTRIBUTE_VALUE),
    ('device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
     6),
    ('"name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
     10),
    ('!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))',
     11),
    ('device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&\ndevice.attributes["dra.example.com"].bool &&\ndevice.attributes["dra.example.com"].int > 0 &&\ndevice.attributes["dra.example.com"].string == "fish" &&\ndevice.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&\ndevice.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&\ndevice.attributes["dra.example.com"]["bool"] &&\ndevice.attributes["dra.example.com"]["int"] > 0 &&\ndevice.attributes["dra.example.com"]["string"] == "fish" &&\ndevice.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))',
     52),
    ('device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c',
     12),
    ('device.attributes.exists_one(x, x == "dra.example.com")',
     164),
    ('device.attributes["dra.example.com"].exists_one(x, x == "services")',
     133),
    ('device.attributes["dra.example.com"].services.split("example").size() >= 2',
     19),
    ('device.attributes["dra.example.com"].services.matches("[^a]?sym")',
     18),
    ('device.capacity.exists_one(x, x == "dra.example.com")',
     164),
    ('device.capacity["dra.example.com"].exists_one(x, x == "memory")',
     133),
    ("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))",
     85555551),
    ('device.allowMultipleAllocations == true',
     3),
]


@pytest.mark.parametrize(("expression", "cost"), UPSTREAM_COSTS)
def test_the_estimated_cost_of_a_selector_is_kube_apiservers(expression, cost):
    assert compile_selector(expression).max_cost == cost


def test_seven_nested_comprehensions_exceed_the_selector_cost_limit():
    from dralloc.cel import CEL_SELECTOR_MAX_COST

    assert UPSTREAM_COSTS[-2][1] > CEL_SELECTOR_MAX_COST
