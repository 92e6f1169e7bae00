"""The comparison study: its configs, the tuning charge in its privacy, the plan, and the
comparison's refusal of a tuned record whose ledger lacks the tuning event."""

import copy

import pytest

from dpnotes import campaign
from dpnotes.accounting.registry import price
from dpnotes.experiments import compare, module, resolve
from dpnotes.experiments.compare import privacy as P
from dpnotes.experiments.compare import runs
from dpnotes.experiments.compare import settings as S
from dpnotes.ledger import Ledger


def test_the_study_is_registered_and_its_modules_are_small():
    from pathlib import Path

    assert module("compare") is compare
    for path in Path(compare.__file__).parent.glob("*.py"):
        assert len(path.read_text().splitlines()) <= 300, path


def test_quick_configs_pair_the_seeds_and_declare_the_tuning():
    configs = compare.configs("quick")
    tuned = [c for c in configs if c["experiment"].endswith(".tuned")]
    assert {c["experiment"].split(".")[-2] for c in tuned} == set(S.METHODS)
    ks = {len(c["analysis"]["tuning"]["candidates"]) for c in tuned}
    assert ks == {runs.trials(0)}  # one K per seed, every method (paired)
    for c in tuned:
        method = c["experiment"].split(".")[-2]
        space = S.search_space(method, c["dataset"])
        assert all(set(k) == set(space) and all(v in space[n] for n, v in k.items())
                   for k in c["analysis"]["tuning"]["candidates"])
        assert c["train"]["accountants"] == ["rdp"]
    assert [c["experiment"] for c in compare.configs("smoke")] == [c["experiment"] for c in configs]


@pytest.mark.parametrize("method", ["dpsgd", "dpsgd_decay"])
def test_the_whole_tuning_meets_the_target_and_a_single_run_gets_more_noise_free(method):
    sh = P.shape("paper", "mnist")
    tuned, single = P.noise(method, 1.0, sh, tuned=True), P.noise(method, 1.0, sh, tuned=False)
    assert tuned > single  # the selection is paid for with noise
    trial = P.trial_ledger(method, tuned, sh["q"], sh["steps_per_epoch"], sh["epochs"])
    eps = price(Ledger().append(P.tuning_event(trial)), S.DELTA, "rdp")["rdp"]["epsilon"]
    assert 0.99 < eps <= 1.0
    assert price(trial, S.DELTA, "rdp")["rdp"]["epsilon"] < 0.8  # a trial alone spends much less


def test_cpu_part_and_campaign_tiers():
    assert campaign.tier("compare", "mnist.tf-mnist-cnn.eps1.dplis.tuned") == campaign.LAST_TIER
    assert campaign.tier("compare", "cifar-10.dplis-cifar-cnn.eps8.dpis.tuned") == 1.5
    assert campaign.tier("compare", "mnist.scatternet-cnn.eps2.dpsgd.default") == 1.5
    # the fidelity runs (issue #47) come before the comparison; the papers' other runs after it
    fidelity = {(paper, glob) for paper, glob in (("labeldp", "table4.*.appb"), ("dpis", "*.dpsgd_decay*.rate*"))}
    assert {t for t, paper, glob in campaign.PLAN if (paper, glob) in fidelity} == {1}
    assert 1.5 < min(t for t, paper, glob in campaign.PLAN if paper == "dpis" and (paper, glob) not in fidelity)
    cpu_part = {glob for t, paper, glob in campaign.PLAN if paper == "compare" and t == campaign.LAST_TIER}
    assert cpu_part == set(S.CPU_PART)
    spec = resolve(runs.config("paper", "mnist", "tf-mnist-cnn", 1.0, "dpsgd", "tuned", 0))
    assert compare.estimate_seconds(spec) > compare.estimate_seconds(spec, "cuda") > 0


def _record(kind="tuned", charged=True, acc=0.9, method="dpsgd", seed=0):
    trial = P.trial_ledger("dpsgd", 1.3, 0.01, 10, 1)
    ledger = Ledger().append(P.tuning_event(trial)) if charged else trial
    experiment = f"mnist.tf-mnist-cnn.eps1.{method}.{kind}"
    return {"id": f"{method}{seed}{kind}", "spec": {"experiment": experiment, "seed": seed},
            "privacy": {"ledger": ledger.to_json(), "epsilon": price(ledger, S.DELTA, "rdp")},
            "final": {"analysis": {"report_acc": acc}, "tuning": {"trial_bound": "planned"}},
            "provenance": {"wall_time_s": 10.0}}


def test_the_comparison_refuses_a_tuned_record_without_the_tuning_event():
    records = [_record(method=m, seed=s, acc=a) for m, a in (("dpsgd", 0.90), ("dplis", 0.92)) for s in range(3)]
    rows = compare.compare(records + [_record("default", charged=False)])  # an untuned run needs no event
    assert [r["method"] for r in rows] == ["dpsgd", "dplis"]
    assert rows[1]["diff"][0] == pytest.approx(2.0)
    bad = copy.deepcopy(records)
    bad[4] = _record(method="dplis", seed=1, charged=False)
    with pytest.raises(compare.TuningNotChargedError) as err:
        compare.compare(bad)
    assert "\n" not in str(err.value) and "no RepeatAndSelectDpEvent" in str(err.value)


def test_with_no_records_the_answer_says_nothing_has_run_and_what_it_costs():
    plan = [{"cell": "a", "runs": 6, "trials": 15, "cpu_h": 1.25, "gpu_h": 0.1, "where": "cpu"},
            {"cell": "b", "runs": 6, "trials": 15, "cpu_h": 9.0, "gpu_h": 0.5, "where": "gpu"}]
    text = compare.summary([], plan)
    assert text.startswith("Nothing has run yet")
    assert "6 runs (15 training runs with the trials) on the CPU, about 1 CPU-hours" in text
    assert "0.5 GPU-hours" in text
