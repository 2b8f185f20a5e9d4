"""`make validate`'s oracles: each passes on the model, and each can fail."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from irqsim import oracles


def test_lindley_by_hand():
    # Service 10: arrivals 0, 5, 30, 31 leave at 10, 20, 40, 50.
    assert oracles.lindley(np.array([0, 5, 30, 31]), 10).tolist() == [10, 15, 10, 19]


def test_md1_latencies_follow_lindley_and_pk():
    rows = oracles.md1(loads={0.6: (200_000, 1)})
    exact = [c for c in rows if "Lindley" in c.check]
    assert exact and all(c.passed for c in exact)
    pk = next(c for c in rows if "Pollaczek" in c.check)
    # 200 k frames: within a few standard errors (0.4% each at rho 0.6), not make validate's 0.5%.
    assert abs(pk.error) < 0.02, pk


def test_cache_matches_lru_and_not_fifo(monkeypatch):
    assert all(c.passed for c in oracles.cache())

    def fifo(addresses, size, ways, line):
        sets, misses = size // (ways * line), 0
        cache = [OrderedDict() for _ in range(sets)]
        for a in addresses:
            s = cache[(a // line) % sets]
            if a // line not in s:
                misses += 1
                if len(s) == ways:
                    s.popitem(last=False)
                s[a // line] = True
        return misses

    monkeypatch.setattr(oracles, "lru_misses", fifo)
    assert sum(not c.passed for c in oracles.cache()) >= 3


def test_knee_and_napi_plateau():
    rows, protocol = oracles.knee()
    assert protocol == 14_921 and all(c.passed for c in rows)
    napi = oracles.napi(protocol)
    assert all(c.passed for c in napi)
    # A protocol cost short by the driver's receive (2,228 cycles) puts the plateau 15% off.
    assert not any(c.passed for c in oracles.napi(protocol - 2_228))
