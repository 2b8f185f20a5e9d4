"""`reproduce optimistic-spl`: what the model achieves against Tables 1-3.

The assertions pin what the model gives, with the paper's numbers beside
it, not a wish: Tables 1 and 2 are inputs and come back exactly; Table 3's
conventional column is the calibration and comes back exactly; the
predicted savings fall short of the paper's by the margins
docs/models/masking.md explains (most of the paper's saving is outside
anything Tables 1 and 2 count), and on the DECstation 5000/200 the sign is
wrong because Table 2's fast path is longer than Table 1's pair there.
"""

from __future__ import annotations

import math

import pytest

from irqsim import studies
from irqsim.studies import optimistic_spl

MACHINES = ("luna88k", "decstation_5000_120", "decstation_5000_200")


@pytest.fixture(scope="module")
def rows():
    return {(r.experiment, r.metric): r for r in studies.reproduce("optimistic-spl")}


def test_every_table3_row_exists(rows):
    """Each machine and cost model yields the four Table 3 metrics."""
    for machine in MACHINES:
        for costs in ("idealized", "modelled"):
            for metric in ("conventional_cycles (input)", "optimistic_cycles", "speedup", "cycles_saved"):
                assert (f"table3 {machine} ({costs})", metric) in rows


def test_tables_1_and_2_are_charged_exactly(rows):
    """The fast path the model charges per RPC is the table entry."""
    for (exp, metric), r in rows.items():
        if exp.startswith(("table1", "table2")):
            assert r.simulated == r.paper, r


def test_conventional_column_is_the_calibration(rows):
    for machine in MACHINES:
        for costs in ("idealized", "modelled"):
            r = rows[(f"table3 {machine} ({costs})", "conventional_cycles (input)")]
            assert r.simulated == r.paper


def test_idealized_savings_are_the_table_differences(rows):
    """Without interrupts, the idealized saving is Table 1 minus Table 2 exactly."""
    for machine, (t1, t2) in optimistic_spl.TABLE12.items():
        r = rows[(f"table3 {machine} (idealized)", "cycles_saved")]
        assert r.simulated == t1 - t2


def test_optimistic_cycles_within_the_models_error(rows):
    """Optimistic null-RPC cycles: within 14% idealized and 11% modelled (5000/120 worst)."""
    for machine in MACHINES:
        assert abs(rows[(f"table3 {machine} (idealized)", "optimistic_cycles")].rel_error) < 0.14
        assert abs(rows[(f"table3 {machine} (modelled)", "optimistic_cycles")].rel_error) < 0.11


def test_modelled_effects_move_savings_towards_the_paper(rows):
    """On the Luna88k and the 5000/120 the modelled effects roughly double the
    saving (45 -> 93 and 49 -> 106 cycles) yet stay below the paper's 175 and 300."""
    for machine in ("luna88k", "decstation_5000_120"):
        ideal = rows[(f"table3 {machine} (idealized)", "cycles_saved")]
        model = rows[(f"table3 {machine} (modelled)", "cycles_saved")]
        assert ideal.simulated < model.simulated < model.paper
        assert model.rel_error > -0.70
    r = rows[("table3 decstation_5000_200 (modelled)", "cycles_saved")]
    assert r.paper > 0 > r.simulated


def test_break_even_is_found_where_optimistic_pays():
    """Luna88k: optimistic pays at low interrupt rates and stops between 1,000 and 1,000,000 per second."""
    b = optimistic_spl.break_even("luna88k", "modelled")
    assert b.difference[0] < 0
    assert 1e3 < b.rate_per_s < 1e6
    never = optimistic_spl.break_even("decstation_5000_200", "idealized", rates_per_s=[100.0, 1000.0])
    assert never.rate_per_s == 0.0
    assert not math.isnan(never.difference[0])
