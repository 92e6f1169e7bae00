"""The audit campaign as a runnable study: its paper profile is the issue's 40 runs, every run
has a cost estimate before any record exists, the runs split into groups of similar cost whose
command lines select each run exactly once, an audit trains without an evaluation pass (except
SA-DPSGD, whose accept rule reads the test loss), and a smoke run goes through the executor that
the campaign uses (device resolved, record stored as the run finishes, a second call skips it)."""

import shlex

import pytest
from interrupt import Interrupted, StopAtEpoch

from dpnotes import executors, experiments, runner
from dpnotes.audit import campaign, report
from dpnotes.audit.training import audited_train
from dpnotes.cli import main
from dpnotes.executors.cost import estimate
from dpnotes.results import Store
from dpnotes.train import Plugin


def _specs(profile="paper"):
    return [experiments.resolve(c) for c in campaign.configs(profile)]


def test_paper_profile_is_every_method_at_every_eps_and_seed():
    specs = _specs()
    assert len(specs) == len(campaign.METHODS) * len(campaign.EPSILONS) * 2 == 40
    assert len({s.id for s in specs}) == 40
    assert {(s.method, s.analysis["target_epsilon"], s.seed) for s in specs} == {
        (m, e, seed) for m in campaign.METHODS for e in campaign.EPSILONS for seed in (0, 1)}


def test_only_sadpsgd_reads_test_images():
    for spec in _specs():
        assert ("test" in spec.subset) == (spec.method == "sadpsgd"), spec.experiment
    train, test = campaign.load({"train": 10})
    assert len(train[1]) == 10 and test is None


def test_every_run_has_a_cost_estimate_without_records(tmp_path):
    for spec in _specs():
        seconds, basis = estimate(spec, [])
        assert seconds is not None and seconds > campaign.START_SECONDS and "cost model" in basis
    slow = {s.method: campaign.estimate_seconds(s) for s in _specs()}
    assert slow["dplis"] > slow["dpsgd"]  # K = 10 gradient passes a step


def test_estimate_is_steps_times_the_timed_step_at_both_profiles():
    for profile, point in (("smoke", 0), ("paper", 1)):
        for spec in _specs(profile):
            assert campaign.estimate_seconds(spec) == pytest.approx(
                campaign.START_SECONDS + campaign.STEP_SECONDS[spec.method][point] * campaign.shape(profile)["steps"])
    quick = next(s for s in _specs("quick") if s.method == "dpsgd")
    lo, hi = campaign.STEP_SECONDS["dpsgd"]
    assert lo < campaign.step_seconds("dpsgd", quick.train["batch_size"]) < hi
    with pytest.raises(ValueError, match="audit spec"):
        campaign.estimate_seconds(experiments.resolve(experiments.module("gdp").configs("smoke")[0]))


def test_list_prints_an_estimate_for_every_run(tmp_path, capsys):
    assert main(["run", "audit", "--profile", "paper", "--list", "--results", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    runs = [line for line in lines if " to run " in line]
    assert len(runs) == 40 and not any("       ? s" in line for line in runs)
    assert "40 to run" in lines[-1] and "without an estimate" not in lines[-1]


def test_worker_groups_cover_each_run_once_with_similar_costs():
    groups = campaign.worker_groups("paper", 14)
    ids = [s.id for g in groups for s in g]
    assert len(groups) == 14 and sorted(ids) == sorted(s.id for s in _specs())
    costs = [sum(map(campaign.estimate_seconds, g)) for g in groups]
    assert max(costs) <= 1.5 * min(costs)
    assert campaign.worker_groups("smoke", 14) and len(campaign.worker_groups("smoke", 14)) == 2


def test_worker_commands_select_each_run_exactly_once():
    selected = []
    for line in campaign.worker_commands("paper", 14, "cuda"):
        for command in line.split("; "):
            argv = shlex.split(command)
            assert argv[:3] == ["dpnotes", "run", "audit"] and "--device" in argv and "cuda" in argv
            only, seeds = argv[argv.index("--only") + 1], argv[argv.index("--seeds") + 1]
            (spec,) = runner.specs("audit", "paper", only, (int(seeds),))
            selected.append(spec.id)
    assert sorted(selected) == sorted(s.id for s in _specs())
    with pytest.raises(ValueError, match="device"):
        campaign.worker_commands("paper", 14, "tpu")


def test_smoke_run_stores_its_record_once_on_the_resolved_device(tmp_path):
    spec = next(s for s in _specs("smoke") if s.method == "dpsgd")
    store = Store(tmp_path)
    (record,) = executors.create("local").run([spec], device="cpu", store=store, progress=False)
    assert store.get(spec)["id"] == record["id"] == spec.id
    assert record["provenance"]["segments"][0]["device"].startswith("cpu")
    assert record["final"]["test_acc"] is None  # no evaluation pass: the audit needs no accuracy
    audit = record["final"]["audit"]
    assert audit["m"] == campaign.SCALE["smoke"]["canaries"] and audit["steps_observed"] == record["final"]["steps"]
    (again,) = runner.run_paper("audit", "smoke", only=spec.experiment, store=store, progress=False)
    assert again["provenance"] == record["provenance"]  # stored, not run again
    # the chapter and the scoreboard read it: recorded cost, estimate for the other run, the note
    costs = report.cost_frame("smoke", store).set_index("method")
    assert costs.loc["dpsgd", "with record"] == 1 and costs.loc["dpsgd", "recorded CPU core-h"] >= 0
    assert costs.loc["dpsgd", "estimated CPU-h (runs without record)"] == 0
    assert costs.loc["sadpsgd", "with record"] == 0
    assert costs.loc["sadpsgd", "estimated CPU-h (runs without record)"] > 0
    text = report.cost_markdown("smoke", store)
    assert "1 of them have records" in text and "The other 1 are estimated" in text
    assert "1 of 2 runs have records" in repr(report.scoreboard_note(store, "smoke"))
    assert report.shown_profile("smoke", store) == "smoke"


def test_chapter_and_scoreboard_say_nothing_is_recorded_in_an_empty_store(tmp_path):
    store = Store(tmp_path)
    assert "none of its 40 runs has a record" in repr(report.scoreboard_note(store))
    text = report.cost_markdown("paper", store)
    total = sum(campaign.estimate_seconds(s) for s in _specs()) / 3600
    assert "None has a record yet" in text and f"{total:.1f} CPU-hours" in text
    assert report.shown_profile("quick", store) == "quick"


def test_an_interrupted_audit_resumes_to_the_same_scores(tmp_path):
    """A run killed after its first epoch resumes from the checkpoint with the canary scores
    (and SA-DPSGD's accept state) of an uninterrupted run: the observer's state is checkpointed."""
    spec = next(s for s in _specs("smoke") if s.method == "sadpsgd")
    spec = type(spec)(**{**spec.to_dict(), "train": dict(spec.train, epochs=2), "analysis": dict(spec.analysis)})
    data = campaign.load(spec.subset)
    full, observer, _ = audited_train(spec, *data, extra_plugins=(Plugin(),))
    path = tmp_path / "audit.pt"
    with pytest.raises(Interrupted):
        audited_train(spec, *data, checkpoint=path, extra_plugins=(StopAtEpoch(1),))
    resumed, again, _ = audited_train(spec, *data, checkpoint=path, extra_plugins=(Plugin(),))
    assert again.scores() == observer.scores() and again.steps == full["final"]["steps"] == 2 * (
        campaign.shape("smoke")["steps_per_epoch"])
    assert resumed["privacy"]["ledger"] == full["privacy"]["ledger"]


def _frame(rows):
    cols = ["method", "target eps", "seed", "eps (pld)", "one-run LB", "f-DP one-run LB"]
    return report.pd.DataFrame(rows, columns=cols)


def test_implications_flag_a_bound_above_the_accountant_and_name_the_twins_of_dpsgd():
    frame = _frame([("dpsgd", 1.0, 0, 0.9, 0.3, 0.4), ("dplis", 1.0, 0, 0.9, 0.3, 0.4),
                    ("dpis", 1.0, 0, 0.9, 0.2, 0.95)])  # dpis: the f-DP bound is above its eps
    same = {"dpsgd": 0.0, "dplis": 1e-6, "dpis": 2.0}
    imp = report.implications_frame(frame, same).set_index("method")
    assert imp.loc["dpis", "any LB above eps"] and not imp.loc["dplis", "any LB above eps"]
    assert imp.loc["dplis", "release seen = DP-SGD's"] and not imp.loc["dpis", "release seen = DP-SGD's"]
    assert abs(imp.loc["dpis", "largest LB / eps (pld)"] - 0.2 / 0.9) < 1e-12  # the one-run bound's share only
    text = report.implications_markdown(frame, same)
    assert "EXCEEDS the accountant for dpis" in text and "The canaries of dplis read exactly" in text
    fine = report.implications_markdown(frame[frame["method"] != "dpis"], same)
    assert "No run's bound exceeds its accountant" in fine and "dpis" not in fine
    assert "largest one-run lower bound (Steinke et al.) is 33%" in fine and "reaches 44%" in fine


def test_implications_of_no_record_claim_nothing():
    empty = _frame([])
    assert report.implications_frame(empty, {}).empty
    assert report.implications_markdown(empty, {}).startswith("No audit record yet")


class _FakeRecord:
    def __init__(self, method, eps, seed, llr):
        self.method, self.seed, self.analysis_spec, self._llr = method, seed, {"target_epsilon": eps}, llr

    def metric(self, name):
        return {"llr": self._llr}


def test_same_release_is_measured_against_dpsgd_at_the_same_eps_and_seed(monkeypatch):
    monkeypatch.setattr(report.Record, "of", staticmethod(lambda r: r))
    recs = [_FakeRecord("dpsgd", 1.0, 0, [0.1, -0.2]), _FakeRecord("dplis", 1.0, 0, [0.1, -0.2]),
            _FakeRecord("dpis", 1.0, 0, [0.5, -0.2]),
            _FakeRecord("dpis", 2.0, 0, [9.0, 9.0])]  # no DP-SGD run at eps 2: not compared
    same = report.same_release_as_dpsgd(recs)
    assert same["dplis"] == 0.0 and abs(same["dpis"] - 0.4) < 1e-12 and same["dpsgd"] == 0.0
