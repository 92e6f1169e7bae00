"""The privacy ledger: events, run-length compression, JSON round trip, bad input."""

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
from dp_accounting.dp_event import LaplaceDpEvent, UnsupportedDpEvent

from dpnotes.ledger import (
    CandidateStepDpEvent,
    ComposedDpEvent,
    DpisIterationDpEvent,
    GaussianDpEvent,
    LabelRandomizedResponseDpEvent,
    Ledger,
    NonPrivateDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    RandomizedResponseDpEvent,
    SelfComposedDpEvent,
    event_from_json,
    event_to_json,
)

STEP = PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1))
EVENTS = [
    GaussianDpEvent(2.0),
    STEP,
    SelfComposedDpEvent(STEP, 14062.5),
    ComposedDpEvent([GaussianDpEvent(3.0), SelfComposedDpEvent(STEP, 7)]),
    NonPrivateDpEvent(),
    NoOpDpEvent(),
    RandomizedResponseDpEvent(noise_parameter=0.1, num_buckets=10),
    LaplaceDpEvent(1.5),
    UnsupportedDpEvent(),
    DpisIterationDpEvent(batch_size=256, n_tilde=60000.3, ratio=0.37, sigma_g=0.9),
    CandidateStepDpEvent(STEP, accepted=False),
    LabelRandomizedResponseDpEvent(epsilon=1.0, num_classes=10, mechanism="rr-with-prior"),
    LabelRandomizedResponseDpEvent(epsilon=math.inf, num_classes=2, mechanism="rr"),
]


def test_run_length_compression():
    ledger = Ledger()
    ledger.append(STEP).append(STEP).append(STEP, 3)
    ledger.append(GaussianDpEvent(2.0))
    ledger.append(STEP, 2)
    ledger.append(PoissonSampledDpEvent(0.01, GaussianDpEvent(1.1)))  # equal, not identical
    assert ledger.entries == ((STEP, 5), (GaussianDpEvent(2.0), 1), (STEP, 3))
    assert len(ledger) == 3 and ledger.total_count == 9
    assert ledger.as_event() == ComposedDpEvent(
        [SelfComposedDpEvent(STEP, 5), GaussianDpEvent(2.0), SelfComposedDpEvent(STEP, 3)])


def test_as_event_of_small_ledgers():
    assert Ledger().as_event() == NoOpDpEvent() and Ledger().total_count == 0
    assert Ledger([(STEP, 1)]).as_event() == STEP
    assert Ledger([(STEP, 14062.5)]).as_event() == SelfComposedDpEvent(STEP, 14062.5)


def test_copy_and_equality():
    ledger = Ledger([(STEP, 2)])
    other = ledger.copy()
    other.append(GaussianDpEvent(1.0))
    assert ledger == Ledger([(STEP, 1), (STEP, 1)]) and ledger != other and ledger.entries == ((STEP, 2),)


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: type(e).__name__)
def test_event_json_round_trip(event):
    data = json.loads(json.dumps(event_to_json(event)))
    assert data["type"] == type(event).__name__
    back = event_from_json(data)
    assert back == event and type(back) is type(event)


def test_ledger_json_round_trip_is_exact():
    ledger = Ledger()
    for i, event in enumerate(EVENTS):
        ledger.append(event, 1 + i % 3)
    ledger.append(PoissonSampledDpEvent(0.1 + 0.2, GaussianDpEvent(1 / 3)), 439.453125)
    text = json.dumps(ledger.to_json())
    assert json.loads(text)[0] == {"count": 1, "event": {"type": "GaussianDpEvent", "noise_multiplier": 2.0}}
    assert Ledger.from_json(json.loads(text)) == ledger


def test_poisson_json_shape():
    assert event_to_json(STEP) == {"type": "PoissonSampledDpEvent", "sampling_probability": 0.01,
                                   "event": {"type": "GaussianDpEvent", "noise_multiplier": 1.1}}


def test_dpis_event_equivalent():
    e = DpisIterationDpEvent(batch_size=256, n_tilde=60000, ratio=0.5, sigma_g=1.2)
    assert e.sampling_probability == 256 / (60000 * 0.5) and e.noise_multiplier == 1.2 / 0.5
    assert e.as_subsampled_gaussian() == PoissonSampledDpEvent(256 / 30000, GaussianDpEvent(2.4))
    one = DpisIterationDpEvent(batch_size=256, n_tilde=60000, ratio=1, sigma_g=1.2)
    assert one.as_subsampled_gaussian() == PoissonSampledDpEvent(256 / 60000, GaussianDpEvent(1.2))


@pytest.mark.parametrize(
    "make, match",
    [
        (lambda: DpisIterationDpEvent(256, 60000, 256 / 60000, 1.0), "ratio"),
        (lambda: DpisIterationDpEvent(256, 60000, 1.01, 1.0), "ratio"),
        (lambda: DpisIterationDpEvent(256, 60000, 0.5, 0.0), "sigma_g"),
        (lambda: DpisIterationDpEvent(-1, 60000, 0.5, 1.0), "batch_size"),
        (lambda: CandidateStepDpEvent(STEP, accepted=1), "accepted"),
        (lambda: CandidateStepDpEvent("step", accepted=True), "event"),
        (lambda: LabelRandomizedResponseDpEvent(0.0, 10, "rr"), "epsilon"),
        (lambda: LabelRandomizedResponseDpEvent(1.0, 1, "rr"), "num_classes"),
        (lambda: LabelRandomizedResponseDpEvent(1.0, 10, "rr-top-k"), "mechanism"),
        (lambda: Ledger().append("a step"), "DpEvent"),
        (lambda: Ledger().append(STEP, 0), "count"),
        (lambda: Ledger().append(STEP, -2.5), "count"),
        (lambda: Ledger().append(STEP, math.nan), "count"),
        (lambda: Ledger().append(STEP, math.inf), "count"),
        (lambda: Ledger().append(STEP, True), "count"),
        (lambda: event_from_json({"type": "MomentsDpEvent", "sigma": 1.0}), "MomentsDpEvent"),
        (lambda: event_from_json({"noise_multiplier": 1.0}), "type"),
        (lambda: event_from_json({"type": "GaussianDpEvent", "sigma": 1.0}), "noise_multiplier"),
        (lambda: Ledger.from_json([{"count": 1}]), "entry"),
        (lambda: Ledger.from_json({"count": 1, "event": {}}), "list"),
    ],
)
def test_bad_input(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_events_are_frozen():
    with pytest.raises(AttributeError):
        DpisIterationDpEvent(256, 60000, 0.5, 1.0).ratio = 1.0


def test_no_torch_import():
    code = ("import sys, dpnotes.ledger, dpnotes.accounting.registry, dpnotes.accounting;"
            "print('torch' in sys.modules, 'opacus' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[1]).stdout
    assert out.split() == ["False", "False"]


def test_the_ledger_imports_no_scipy_and_its_events_are_dp_accountings_own():
    """dpnotes.ledger loads dp_accounting.dp_event without the package's __init__ (which imports
    scipy.signal, .stats and .optimize); importing dp_accounting afterwards, or before, gives
    the very same classes, and its accountants price them."""
    code = ("import sys, dpnotes.ledger as L; print('scipy' in sys.modules);"
            "import dp_accounting; from dp_accounting import rdp;"
            "print(dp_accounting.GaussianDpEvent is L.GaussianDpEvent, dp_accounting.dp_event.DpEvent is L.DpEvent);"
            "a = rdp.RdpAccountant(); a.compose(L.PoissonSampledDpEvent(0.01, L.GaussianDpEvent(1.0)), 100);"
            "print(a.get_epsilon(1e-5) > 0)")
    before = ("import dp_accounting, dpnotes.ledger as L;"
              "print(dp_accounting.PoissonSampledDpEvent is L.PoissonSampledDpEvent)")
    run = lambda c: subprocess.run([sys.executable, "-c", c], capture_output=True, text=True, check=True,  # noqa: E731
                                   cwd=Path(__file__).resolve().parents[1]).stdout.split()
    assert run(code) == ["False", "True", "True", "True"]
    assert run(before) == ["True"]


def test_totals_merge_interleaved_releases_and_price_the_same():
    from dpnotes.accounting.registry import price

    a = PoissonSampledDpEvent(0.01, GaussianDpEvent(1.0))
    b = CandidateStepDpEvent(a, False)
    ledger = Ledger()
    for i in range(50):
        ledger.append(a if i % 2 else b)
    totals = ledger.totals()
    assert len(ledger) == 50 and totals.entries == ((b, 25), (a, 25))
    names = ["rdp", "clt", "sadpsgd-accepted-only"]
    assert price(totals, 1e-5, names) == price(ledger, 1e-5, names)
