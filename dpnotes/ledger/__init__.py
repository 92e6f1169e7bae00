"""The privacy ledger: every private release of a run, as dp_accounting events.

The training loop appends one event per release to a :class:`Ledger`;
:func:`dpnotes.accounting.registry.price` prices it under any accountant.
"""

from dpnotes.ledger.events import (
    EVENT_TYPES,
    CandidateStepDpEvent,
    ComposedDpEvent,
    DpEvent,
    DpisIterationDpEvent,
    GaussianDpEvent,
    LabelRandomizedResponseDpEvent,
    NonPrivateDpEvent,
    NoOpDpEvent,
    PoissonSampledDpEvent,
    RandomizedResponseDpEvent,
    RepeatAndSelectDpEvent,
    SelfComposedDpEvent,
    event_from_json,
    event_to_json,
)
from dpnotes.ledger.ledger import Ledger, check_count

__all__ = [
    "EVENT_TYPES", "CandidateStepDpEvent", "ComposedDpEvent", "DpEvent", "DpisIterationDpEvent",
    "GaussianDpEvent", "LabelRandomizedResponseDpEvent", "Ledger", "NoOpDpEvent", "NonPrivateDpEvent",
    "PoissonSampledDpEvent", "RandomizedResponseDpEvent", "RepeatAndSelectDpEvent",
    "SelfComposedDpEvent", "check_count",
    "event_from_json", "event_to_json",
]
