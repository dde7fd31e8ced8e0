"""Repeated session ids and reused names cost O(n) (formats/inputs.NameSet,
parallel/pool.SeenNames): counted in probes and pattern matches, not in seconds, so the
test holds on a loaded machine; the names are the ones the simple definition gives."""

from __future__ import annotations

import random

import pytest

from transcript_tools.formats.inputs import NameSet, unique_name
from transcript_tools.parallel import pool
from transcript_tools.parallel.pool import SeenNames


class CountingNames(NameSet):
    """A NameSet that counts its membership probes."""

    probes = 0

    def __contains__(self, name: object) -> bool:
        CountingNames.probes += 1
        return super().__contains__(name)


def test_the_kth_copy_of_a_name_costs_one_probe() -> None:
    taken = CountingNames()
    CountingNames.probes = 0
    names = [unique_name("same", taken, "#") for _ in range(5000)]
    assert names[:3] == ["same", "same#2", "same#3"] and names[-1] == "same#5000"
    assert CountingNames.probes <= 2 * 5000  # quadratic: 12.5 million


def test_names_are_the_first_free_candidate_as_before() -> None:
    rng = random.Random(7)
    plain: set[str] = set()
    fast = NameSet()
    for _ in range(3000):
        name = rng.choice(["a", "b", "a#2", "a#3", "b#2#2", "c"])
        sep = rng.choice(["#", "-"])
        expected = name if name not in plain else None
        if expected is None:  # the simple definition, probing from 2
            n = 2
            while f"{name}{sep}{n}" in plain:
                n += 1
            expected = f"{name}{sep}{n}"
        plain.add(expected)
        assert unique_name(name, fast, sep) == expected


def test_a_batchs_collision_seed_is_a_lookup_not_a_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    matches = 0
    numbered = pool._NUMBERED

    class Counting:
        def match(self, text: str) -> object:
            nonlocal matches
            matches += 1
            return numbered.match(text)

    monkeypatch.setattr(pool, "_NUMBERED", Counting())
    seen = SeenNames()
    folders = 2000
    for folder in range(folders):  # every folder reuses the names 0..9
        seen.update([f"{i}#{folder + 1}" if folder else str(i) for i in range(10)])
    assert matches == 10 * folders  # once per name, when it is merged
    for _ in range(folders):  # a batch per folder, each colliding
        seed = seen.collision_seed(["3", "7#2"])
        assert {"3", "3#2", "7", "7#2"} <= seed and "4" not in seed
    assert matches == 10 * folders  # none more: the old scan made 20,000 per batch
