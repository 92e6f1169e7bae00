"""The typed run record: every accessor reads the record dict's field, and a missing field is one
line naming the record id and the key path."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from fake_records import record
from hypothesis import given
from hypothesis import strategies as st

from dpnotes.record import MissingField, Record, add_final, assemble

REPO = Path(__file__).resolve().parents[1]
CHECKED = ("dpnotes", "notebooks")


def test_identity_and_spec():
    r = Record.of(record("table3.mnist.eps1.dpis", seed=2, method="dpis"))
    assert (r.experiment, r.seed, r.method, r.profile, r.paper, r.dataset, r.model) == (
        "table3.mnist.eps1.dpis", 2, "dpis", "paper", "toy", "mnist", "cnn")
    assert r.id == r.data["id"] and len(r.id) == 16
    assert r.train["batch_size"] == 64 and r.method_config == {} and r.analysis_spec == {}
    assert Record.of(r) is r, "wrapping a Record again is the same view"


def test_final_and_per_epoch_metrics():
    r = Record.of(record(test_acc=0.75, final={"test_rmse": 0.9}))
    assert r.test_acc == 0.75 and r.accuracy() == 75.0
    assert r.metric("test_rmse") == 0.9 and r.metric_or("library") is None and r.has_metric("steps")
    assert [e["epoch"] for e in r.epochs] == [1, 2, 3] == r.series("epoch")
    assert r.accuracy_at_epoch(2) == pytest.approx(50.0) and r.accuracy_at_epoch(4) is None
    assert r.accuracy(r.epochs[0]) == pytest.approx(25.0)
    assert r.last_epoch["epoch"] == 3


def test_accuracy_at_eps_reads_the_named_accountant():
    r = Record.of(record(test_acc=0.6))
    assert r.accuracy_at_eps(1.0, "rdp") == pytest.approx(40.0)  # eps 0.5, 1.0, 1.5: epoch 2 is the last within
    assert r.accuracy_at_eps(1.0, "clt") == pytest.approx(40.0)  # 0.4, 0.8, 1.2
    assert r.accuracy_at_eps(1.25, "clt") == pytest.approx(60.0)
    assert r.accuracy_at_eps(0.3, "rdp") is None, "even the first epoch exceeds the budget"


def test_privacy_and_provenance():
    r = Record.of(record(devices=("cuda:0", "cpu"), wall=30.0))
    assert r.epsilon("rdp") == 1.5 and r.epsilon_entry("rdp")["order"] == 8.0 and r.accountants == ["rdp"]
    assert r.delta == 1e-5 and r.ledger == []
    assert r.devices == ["cuda:0", "cpu"] and r.wall_time_s == 30.0 and r.dirty is False


@pytest.mark.parametrize("path, read", [
    (("final", "test_acc"), lambda r: r.test_acc),
    (("final",), lambda r: r.accuracy()),
    (("spec", "seed"), lambda r: r.seed),
    (("spec",), lambda r: r.experiment),
    (("privacy", "epsilon", "rdp"), lambda r: r.epsilon("rdp")),
    (("epochs",), lambda r: r.accuracy_at_epoch(1)),
    (("provenance", "wall_time_s"), lambda r: r.wall_time_s),
])
def test_a_missing_field_is_one_line_naming_the_record_and_the_key(path, read):
    data = record()
    *parents, last = path
    target = data
    for key in parents:
        target = target[key]
    del target[last]
    with pytest.raises(MissingField) as err:
        read(Record.of(data))
    message = str(err.value)
    assert "\n" not in message and message.startswith(f"record {data['id']}: no ")
    assert ".".join(path) in message


def test_a_missing_per_epoch_metric_names_the_epoch():
    data = record()
    del data["epochs"][1]["test_acc"]
    with pytest.raises(MissingField, match=rf"record {data['id']}: no epochs\[2\]\.test_acc"):
        Record.of(data).series("test_acc")
    with pytest.raises(MissingField, match=r"no epochs\[2\]\.test_acc"):
        Record.of(data).accuracy_at_epoch(2)
    with pytest.raises(MissingField, match="no epochs.-1"):
        _ = Record.of(record(epochs=[])).last_epoch


def test_missing_field_is_a_key_error_and_not_a_mapping_is_refused():
    assert issubclass(MissingField, KeyError)
    with pytest.raises(TypeError, match="a run record is a mapping, not list"):
        Record.of([])
    with pytest.raises(MissingField, match="record <no id>: no final"):
        _ = Record.of({}).final


def test_the_view_is_read_only():
    r = Record.of(record())
    with pytest.raises(AttributeError):
        r.data = {}


def test_add_final_and_assemble_build_a_record_of_a_training_result():
    result = {"epochs": [{"epoch": 1}], "final": {"test_acc": 0.5}, "privacy": {"delta": None}}
    assert add_final(result, test_rmse=1.25) is result and result["final"] == {"test_acc": 0.5, "test_rmse": 1.25}
    built = assemble("abc", {"seed": 1}, result, {"wall_time_s": 3.0})
    assert list(built) == ["id", "spec", "epochs", "final", "privacy", "provenance"]
    assert Record.of(built).metric("test_rmse") == 1.25 and Record.of(built).seed == 1


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=6), st.floats(0, 10, allow_nan=False))
def test_accuracy_at_eps_is_the_last_epoch_within_budget(accs, budget):
    epochs = [{"epoch": i + 1, "test_acc": a, "epsilon": {"rdp": {"epsilon": 0.7 * (i + 1)}}}
              for i, a in enumerate(accs)]
    r = Record.of(record(epochs=epochs))
    within = [e for e in epochs if e["epsilon"]["rdp"]["epsilon"] <= budget]
    got = r.accuracy_at_eps(budget, "rdp")
    assert (got is None) == (not within)
    if within:
        assert math.isclose(got, 100 * within[-1]["test_acc"])


def test_only_the_record_module_indexes_final_by_string():
    hits = [f"{p.relative_to(REPO)}:{n}" for top in CHECKED for p in sorted((REPO / top).rglob("*"))
            if p.suffix in (".py", ".ipynb") and p.name != "record.py"
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if '["final"]' in line or '[\\"final\\"]' in line or "['final']" in line]
    assert not hits, f"read final metrics through dpnotes.record.Record: {hits}"
