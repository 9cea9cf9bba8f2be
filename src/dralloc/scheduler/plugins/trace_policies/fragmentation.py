"""GPU fragmentation as the FGD paper measures it: the idle GPU capacity a target workload cannot use.

The target workload is a distribution of pod classes ("typical pods"): the most common (cpu, milli per GPU,
GPU count, allowed models) classes of a workload, up to 95 % of its pods, each with its share p of them.
For one class m on a node with free milli-CPU C and milli-GPU left gᵢ (I = Σgᵢ):

* a CPU-only class, or one whose models exclude the node's → every idle GPU milli is a fragment: f = I;
* the node fits the class (k GPUs with gᵢ ≥ u, and C ≥ c) → the GPUs too small for it: f = Σ_{gᵢ<u} gᵢ;
* otherwise → f = I.

The node's fragmentation is F = Σ_m p_m · f_m (milli-GPU); memory plays no part.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

POPULARITY = 0.95


@dataclass(frozen=True, slots=True)
class PodClass:
    cpu: int
    milli: int  # per GPU; 0 for CPU-only
    count: int
    models: frozenset[str] | None  # None: any model
    share: float = 0.0


def typical_pods(pods: Iterable[tuple[int, int, int, tuple[str, ...]]],
                 popularity: float = POPULARITY) -> tuple[PodClass, ...]:
    """The workload's typical pod classes from (cpu, milli per GPU, GPU count, allowed models) per pod:
    most frequent first (ties: more cpu, more milli, more GPUs, the larger model list), as many as cover
    ``popularity`` of the pods, with their shares renormalised over the kept classes."""
    counts = Counter((cpu, milli if count else 0, count, "|".join(models)) for cpu, milli, count, models in pods)
    ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0][0], kv[0][1], kv[0][2], kv[0][3]), reverse=True)
    total = sum(counts.values())
    kept: list[tuple[tuple[int, int, int, str], int]] = []
    covered = 0
    for key, n in ranked:
        kept.append((key, n))
        covered += n
        if covered >= popularity * total:
            break
    return tuple(PodClass(cpu, milli, count, frozenset(spec.split("|")) if spec else None, n / covered)
                 for (cpu, milli, count, spec), n in kept)


class Fragmentation:
    """F(model, C, gᵢ) for one target workload, cached by node state (order of the gᵢ does not matter)."""

    def __init__(self, classes: tuple[PodClass, ...]) -> None:
        self.classes = classes
        self._cache: dict[tuple[str, int, tuple[int, ...]], float] = {}
        self._by_model: dict[str, list[PodClass]] = {}
        self._all_share = sum(c.share for c in classes)

    def _fitting_classes(self, model: str) -> list[PodClass]:
        """The GPU classes that may run on a node of this model (the rest always count I)."""
        found = self._by_model.get(model)
        if found is None:
            found = self._by_model[model] = [c for c in self.classes if c.count and
                                             (c.models is None or model in c.models)]
        return found

    def of(self, model: str, cpu_left: int, free: tuple[int, ...]) -> float:
        key = (model, cpu_left, tuple(sorted(free)))
        found = self._cache.get(key)
        if found is not None:
            return found
        idle = sum(free)
        total = 0.0
        rest = self._all_share  # classes that count the whole idle capacity
        for m in self._fitting_classes(model):
            if cpu_left >= m.cpu:
                u = m.milli
                if sum(1 for g in free if g >= u) >= m.count:
                    rest -= m.share
                    total += m.share * sum(g for g in free if g < u)
        found = total + rest * idle
        if len(self._cache) > 500_000:
            self._cache.clear()
        self._cache[key] = found
        return found
