"""How the planner chooses between templates when several could host pending pods: Cluster Autoscaler's
expanders, made deterministic (CA breaks the last tie at random; here the fewer nodes, then the template name).

* ``least-waste`` (default): the option leaving the smallest fraction of the added nodes' CPU and memory
  unrequested (wasted CPU fraction + wasted memory fraction, as CA's least-waste expander).
* ``most-pods``: the option that places the most pending pods.
* ``priority``: the template with the highest ``--priority NAME=N`` (CA's priority expander; unlisted: 0).
* ``price``: the option with the lowest total ``--price NAME=X`` per node × nodes (unlisted templates cost 0).

Expanders chain as CA's ``--expander=priority,least-waste``: each narrows the options to its best ones.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from dralloc.errors import InputError

EXPANDERS = ("least-waste", "most-pods", "priority", "price")


@dataclass(frozen=True)
class Option:
    """Adding ``count`` nodes of ``template`` places ``pods`` more pending pods, requesting ``cpu_milli`` and
    ``memory`` bytes of the ``node_cpu_milli`` / ``node_memory`` each added node offers."""

    template: str
    count: int
    pods: int
    cpu_milli: int
    memory: int
    node_cpu_milli: int
    node_memory: int

    def waste(self) -> Fraction:
        total_cpu = self.node_cpu_milli * self.count
        total_mem = self.node_memory * self.count
        cpu = Fraction(total_cpu - self.cpu_milli, total_cpu) if total_cpu else Fraction(0)
        mem = Fraction(total_mem - self.memory, total_mem) if total_mem else Fraction(0)
        return cpu + mem


def _best(options: list[Option], key: Callable[[Option], object]) -> list[Option]:
    values = [key(o) for o in options]
    top = min(values)  # type: ignore[type-var]
    return [o for o, v in zip(options, values) if v == top]


def parse_expander(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    for n in names:
        if n not in EXPANDERS:
            raise InputError(f"--expander: unknown expander {n!r}: one of {', '.join(EXPANDERS)}")
    if not names:
        raise InputError("--expander: name at least one expander")
    return names


def choose(options: list[Option], expanders: list[str], priorities: Mapping[str, int],
           prices: Mapping[str, Fraction]) -> Option:
    """The option the expander chain picks (``options`` non-empty)."""
    left = list(options)
    for name in expanders:
        if len(left) == 1:
            break
        if name == "least-waste":
            left = _best(left, lambda o: o.waste())
        elif name == "most-pods":
            left = _best(left, lambda o: -o.pods)
        elif name == "priority":
            left = _best(left, lambda o: -priorities.get(o.template, 0))
        elif name == "price":
            left = _best(left, lambda o: prices.get(o.template, Fraction(0)) * o.count)
    return min(left, key=lambda o: (o.count, o.template))
