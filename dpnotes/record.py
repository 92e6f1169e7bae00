"""A run record, typed: the one place that knows the layout of a record dict.

A record (:mod:`dpnotes.results`) is the JSON object ``{"id", "spec", "epochs", "final",
"privacy", "provenance"}``: the resolved run spec (:mod:`dpnotes.spec`), one dict of metrics per
epoch (``epoch``, ``test_acc``, ``wall_s``, ``epsilon`` priced by each accountant after that
epoch, ...), the final metrics, the privacy block (the ledger, its delta and the eps each
accountant prices from it) and the provenance (segments, wall time, dirty tree). The store checks
records on the way in and out (:mod:`dpnotes.record_checks`); :class:`Record` wraps a checked one
and reads it through named accessors, so that no paper indexes a record dict by string.
A field that is not there raises :class:`MissingField`: one line naming the record id and the
key path (``record 0123abcd: no final.test_acc``).

Training results (the loop's ``{"epochs", "final", "privacy"}`` before they become a record) are
completed with :func:`add_final` and turned into a record by :func:`assemble`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# The sections of a record (RECORD_FIELDS in dpnotes.record_checks lists the same names).
SECTIONS = ("id", "spec", "epochs", "final", "privacy", "provenance")


class MissingField(KeyError):
    """A record lacks a field an accessor reads: one line naming the record and the key path."""

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class Record:
    """Read-only view of one run record dict (``data``), with the accessors every paper needs."""

    data: Mapping

    @classmethod
    def of(cls, record: "Record | Mapping") -> "Record":
        """``record`` itself if it is a :class:`Record`, else a view of the record dict."""
        if isinstance(record, Record):
            return record
        if not isinstance(record, Mapping):
            raise TypeError(f"a run record is a mapping, not {type(record).__name__}")
        return cls(record)

    # ---- reading with one-line errors -------------------------------------------------
    def get(self, *path: str | int) -> Any:
        """The value at ``path`` (``get("final", "test_acc")``); :class:`MissingField` naming the
        record id and the path if any step is missing."""
        value: Any = self.data
        for i, key in enumerate(path):
            try:
                value = value[key]
            except (KeyError, IndexError, TypeError):
                where = ".".join(str(k) for k in path[:i + 1])
                raise MissingField(f"record {self.data.get('id', '<no id>')}: no {where}") from None
        return value

    # ---- identity and spec --------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.get("id")

    @property
    def spec(self) -> Mapping:
        """The resolved run spec, as stored (a dict: :meth:`dpnotes.spec.RunSpec.from_dict` types it)."""
        return self.get("spec")

    @property
    def paper(self) -> str:
        return self.get("spec", "paper")

    @property
    def profile(self) -> str:
        return self.get("spec", "profile")

    @property
    def experiment(self) -> str:
        return self.get("spec", "experiment")

    @property
    def seed(self) -> int:
        return self.get("spec", "seed")

    @property
    def method(self) -> str:
        return self.get("spec", "method")

    @property
    def model(self) -> str | None:
        return self.get("spec", "model")

    @property
    def dataset(self) -> str | None:
        return self.get("spec", "dataset")

    @property
    def subset(self) -> Mapping:
        """The data subset the run used (e.g. ``train``, ``test``, ``validation`` sizes; empty: all)."""
        return self.get("spec", "subset")

    @property
    def method_config(self) -> Mapping:
        return self.get("spec", "method_config")

    @property
    def train(self) -> Mapping:
        """The spec's resolved train settings (``epochs``, ``batch_size``, ``noise_multiplier``, ...)."""
        return self.get("spec", "train")

    @property
    def analysis_spec(self) -> Mapping:
        """What the spec asks to measure on the trained model (empty: nothing)."""
        return self.get("spec").get("analysis", {})

    # ---- metrics ----------------------------------------------------------------------
    @property
    def final(self) -> Mapping:
        """Every final metric (``test_acc``, ``steps``, ``analysis``, ...)."""
        return self.get("final")

    def metric(self, name: str) -> Any:
        """The final metric ``name``; :class:`MissingField` if the run did not report it."""
        return self.get("final", name)

    def has_metric(self, name: str) -> bool:
        return name in self.final

    def metric_or(self, name: str, default: Any = None) -> Any:
        """The final metric ``name``, or ``default`` for a run that does not report it."""
        return self.final.get(name, default)

    @property
    def test_acc(self) -> float:
        """Final test accuracy as a fraction."""
        return self.metric("test_acc")

    @property
    def epochs(self) -> Sequence[Mapping]:
        """The per-epoch metrics, in order."""
        return self.get("epochs")

    def epoch(self, n: int) -> Mapping | None:
        """The metrics after epoch ``n`` (the entry whose ``epoch`` is ``n``; None if it stopped earlier)."""
        return next((e for e in self.epochs if e["epoch"] == n), None)

    @property
    def last_epoch(self) -> Mapping:
        if not self.epochs:
            raise MissingField(f"record {self.id}: no epochs.-1 (no epoch recorded)")
        return self.epochs[-1]

    def accuracy(self, epoch: Mapping | None = None) -> float:
        """Test accuracy in percent: at the end, or at one of this record's ``epoch`` entries."""
        if epoch is None:
            return 100 * self.test_acc
        if "test_acc" not in epoch:
            raise MissingField(f"record {self.id}: no epochs[{epoch.get('epoch')}].test_acc")
        return 100 * epoch["test_acc"]

    def accuracy_at_epoch(self, n: int) -> float | None:
        """Test accuracy (%) after ``n`` epochs (None if the run stopped earlier)."""
        e = self.epoch(n)
        return None if e is None else self.accuracy(e)

    @staticmethod
    def epoch_epsilon(epoch: Mapping, accountant: str) -> float:
        """The eps ``accountant`` priced after one epoch entry."""
        return epoch["epsilon"][accountant]["epsilon"]

    def accuracy_at_eps(self, budget: float, accountant: str) -> float | None:
        """Test accuracy (%) after the last epoch whose eps under ``accountant`` is within ``budget``
        (None if even the first epoch exceeds it)."""
        within = [e for e in self.epochs if self.epoch_epsilon(e, accountant) <= budget]
        return self.accuracy(within[-1]) if within else None

    def series(self, name: str) -> list:
        """The per-epoch metric ``name`` of every epoch, in order."""
        return [self._epoch_value(e, name) for e in self.epochs]

    def _epoch_value(self, epoch: Mapping, name: str) -> Any:
        if name not in epoch:
            raise MissingField(f"record {self.id}: no epochs[{epoch.get('epoch')}].{name}")
        return epoch[name]

    # ---- privacy ------------------------------------------------------------------------
    @property
    def privacy(self) -> Mapping:
        """The privacy block: ``ledger``, ``delta``, ``epsilon`` by accountant."""
        return self.get("privacy")

    @property
    def accountants(self) -> list[str]:
        """The accountants that priced this record's ledger."""
        return list(self.get("privacy", "epsilon"))

    def epsilon(self, accountant: str) -> float:
        """The ledger's eps under ``accountant`` (at :attr:`delta`)."""
        return self.get("privacy", "epsilon", accountant, "epsilon")

    def epsilon_entry(self, accountant: str) -> Mapping:
        """Everything ``accountant`` reported for the ledger (``epsilon``, and e.g. the RDP ``order``)."""
        return self.get("privacy", "epsilon", accountant)

    @property
    def delta(self) -> float:
        return self.get("privacy", "delta")

    @property
    def ledger(self) -> Any:
        return self.get("privacy", "ledger")

    # ---- provenance -------------------------------------------------------------------
    @property
    def wall_time_s(self) -> float:
        """Wall time of the whole run over all its segments, in seconds."""
        return self.get("provenance", "wall_time_s")

    @property
    def dirty(self) -> bool:
        """Whether any segment ran from uncommitted code."""
        return self.get("provenance", "dirty")

    @property
    def devices(self) -> list[str]:
        """The device of each segment (``cpu``, ``cuda:0``, ...), in order."""
        return [s["device"] for s in self.get("provenance").get("segments", [])]


def add_final(result: dict, **values) -> dict:
    """Add final metrics to a training result (``{"epochs", "final", "privacy"}``); returns it."""
    result["final"].update(values)
    return result


def assemble(run_id: str, spec: dict, result: Mapping, provenance: dict) -> dict:
    """The record dict of a finished run: its id and resolved spec, the training result's epochs,
    final metrics and privacy block, and the provenance."""
    return {"id": run_id, "spec": spec, "epochs": result["epochs"], "final": result["final"],
            "privacy": result["privacy"], "provenance": provenance}
