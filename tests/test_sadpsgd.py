"""The SA-DPSGD chapter (dpnotes.experiments.sadpsgd, dpnotes.report.sadpsgd): accounting, configs, runs.

Paper values and settings are read from the claims registry, never typed in here.
"""

from __future__ import annotations

import pytest
import torch

from dpnotes import claims
from dpnotes.accounting.sadpsgd import sadpsgd_epsilon, sadpsgd_epsilon_sound
from dpnotes.experiments import resolve
from dpnotes.experiments import sadpsgd as sa
from dpnotes.experiments.measurement import Measurement
from dpnotes.report.verdicts import judge
from dpnotes.results import PROFILES

DATASETS = sa.DATASETS


def q_sigma_delta(ds):
    size = "mnist" if ds == "fmnist" else ds  # Section 4.1 gives one size for both 28x28 sets
    b = claims.setting(f"sadpsgd.table2.{ds}.batch_size")
    n = claims.setting(f"sadpsgd.data.{size}.n_train")
    return b / n, claims.setting(f"sadpsgd.table2.{ds}.sigma"), claims.setting(f"sadpsgd.table2.{ds}.delta")


# --------------------------------------------------------------------------------------
# Theorem 1 at Table 2's settings.

@pytest.mark.parametrize("ds", DATASETS)
def test_tau_is_the_last_accepted_count_within_the_papers_budget(ds):
    tau, budget = sa.tau_at(ds), claims.setting(f"sadpsgd.table2.{ds}.epsilon")
    q, sigma, delta = q_sigma_delta(ds)
    # Independently of the registry accountant: the paper's formula, integer orders, classic.
    assert sadpsgd_epsilon(q, sigma, tau, delta)[0] <= budget < sadpsgd_epsilon(q, sigma, tau + 1, delta)[0]
    assert sa.eps_paper(ds, tau) == pytest.approx(sadpsgd_epsilon(q, sigma, tau, delta)[0], rel=1e-12)
    # The orders are the paper's (Sec. 3.3): an integer in alpha_min..alpha_max.
    order = sadpsgd_epsilon(q, sigma, tau, delta)[1]
    assert order == int(order)
    assert claims.setting("sadpsgd.accounting.alpha_min") <= order <= claims.setting("sadpsgd.accounting.alpha_max")


def test_tau_matches_the_research_notes_independent_count():
    # The research note (shared/research/dplis-sadpsgd.md, Sec. 2) counted, with other code,
    # the steps a loop `while eps < 3` makes: ours is the last count within the budget, one less.
    assert [sa.tau_at(ds) + 1 for ds in DATASETS] == [4699, 1158, 1436]


@pytest.mark.parametrize("ds", DATASETS)
def test_rejected_candidates_cost_nothing_under_theorem1_and_everything_under_sound_accounting(ds):
    tau = sa.tau_at(ds)
    q, sigma, delta = q_sigma_delta(ds)
    assert sa.eps_paper(ds, tau, 3 * tau) == sa.eps_paper(ds, tau)
    assert sa.eps_all(ds, tau, 3 * tau) == pytest.approx(sadpsgd_epsilon_sound(q, sigma, 4 * tau, delta)[0], rel=1e-12)


@pytest.mark.parametrize("ds", DATASETS)
@pytest.mark.parametrize("rate", [1.0, 0.9, 0.5, 0.25])
def test_sound_eps_is_never_below_the_papers(ds, rate):
    for tau in (1, 10, sa.tau_at(ds) // 3, sa.tau_at(ds)):
        rejected = round(tau / rate) - tau
        paper = sa.eps_paper(ds, tau, rejected)
        assert sa.eps_all(ds, tau, rejected) >= paper - 1e-12
        if rejected:
            assert sa.eps_all(ds, tau, rejected) > paper
            # the registry's sound accountants too (other orders or conversion; tight PLD aside)
            assert sa.eps_sound(ds, tau, rejected, ("rdp-classic",))["rdp-classic"] > paper


@pytest.mark.parametrize("ds", DATASETS)
def test_worst_case_is_mu0_rejections_before_each_accept(ds):
    tau, mu0 = sa.tau_at(ds), claims.setting(f"sadpsgd.table2.{ds}.mu0")
    assert sa.worst_case_candidates(ds) == (mu0 + 1) * tau
    worst = sa.eps_all(ds, tau, sa.worst_case_candidates(ds) - tau)
    assert worst > 2 * claims.setting(f"sadpsgd.table2.{ds}.epsilon")
    assert sa.eps_sound(ds, tau, sa.worst_case_candidates(ds) - tau, ("pld",))["pld"] < worst


# --------------------------------------------------------------------------------------
# Break-even acceptance rate.

def test_steps_for_inverts_the_formula():
    for ds in DATASETS:
        for eps in (1.0, 2.5, 6.0):
            assert sa.eps_all(ds, sa.steps_for(ds, eps)) == pytest.approx(eps, rel=1e-9)


@pytest.mark.parametrize("ds", DATASETS)
def test_break_even_rate_is_where_the_two_accountings_cross(ds):
    for level in sa.table3_levels(ds):
        row = sa.table3_break_even(ds, level)
        rate, tau = row["break_even_rate"], sa.steps_for(ds, row["eps_s"])
        assert 0 < rate < 1
        assert sa.eps_paper(ds, tau) == pytest.approx(row["eps_s"], rel=1e-9)
        # priced as a ledger: tau accepted and tau/rate - tau rejected candidates
        at = sa.eps_all(ds, tau, tau / rate - tau)
        assert at == pytest.approx(row["eps_baseline"], rel=1e-6)
        above = sa.eps_all(ds, tau, tau / (rate / 1.01) - tau)  # lower acceptance: more candidates
        below = sa.eps_all(ds, tau, tau / min(1.0, rate * 1.01) - tau)
        assert above > row["eps_baseline"] > below


def test_break_even_reads_the_lowest_numeric_baseline_of_each_row():
    for ds in DATASETS:
        for level in sa.table3_levels(ds):
            row = sa.table3_break_even(ds, level)
            base = f"sadpsgd.table3.{ds}.{level}"
            numbers = [claims.get(f"{base}.eps_{k}").number for k in "dha"]
            assert row["eps_baseline"] == min(n for n in numbers if n is not None)
            assert row["eps_s"] == claims.value(f"{base}.eps_s")


# --------------------------------------------------------------------------------------
# Verdicts.

def test_accounting_statements_are_decided_by_computation():
    evidence = {m.claim_id: judge(claims.get(m.claim_id), m) for m in sa.measure([])}
    assert evidence["sadpsgd.thm1.accepted_steps_only"].verdict == "not_reproduced"
    assert evidence["sadpsgd.sec3_3.classic_conversion"].verdict == "passes"  # an identity: a check
    assert all(e.verdict == "not_run" for cid, e in evidence.items()
               if cid not in ("sadpsgd.thm1.accepted_steps_only", "sadpsgd.sec3_3.classic_conversion"))


def test_measure_returns_only_registered_ids_once_and_every_other_claim_has_a_reason():
    registered = {c.id for c in claims.load("sadpsgd")}
    measured = sa.measure([])
    assert all(isinstance(m, Measurement) for m in measured)
    ids = [m.claim_id for m in measured]
    assert len(ids) == len(set(ids)) and set(ids) <= registered
    for cid in registered - set(ids):
        assert cid in sa.NOT_RUN, cid
    assert set(sa.NOT_RUN) <= registered


def test_training_claims_read_only_current_paper_profile_records():
    config = next(c for c in sa.configs("paper") if c["experiment"] == "table1.mnist.sa_dpsgd")
    spec = resolve(config)
    record = {"id": spec.id, "spec": spec.to_dict(), "epochs": [],
              "final": {"test_acc": 0.5, "steps": 10, "accepted_steps": 5}}
    stale = {**record, "id": "0" * 16}
    got = {m.claim_id: m for m in sa.measure([record, stale])}
    m = got["sadpsgd.table1.mnist.sa_dpsgd"]
    assert m.kind == "training" and m.values == (50.0,) and m.record_ids == (spec.id,)


# --------------------------------------------------------------------------------------
# Configs.

@pytest.mark.parametrize("profile", PROFILES)
def test_configs_resolve_to_valid_unique_specs(profile):
    specs = [resolve(c) for c in sa.configs(profile)]
    assert specs and len({s.id for s in specs}) == len(specs)
    assert len({(s.experiment, s.seed) for s in specs}) == len(specs)
    for s in specs:
        assert s.paper == "sadpsgd" and s.method in ("sadpsgd", "dpsgd")
        if not s.train["private"]:
            assert s.experiment.endswith(".non_dp")
            continue
        ds = s.experiment.split(".")[1]
        assert s.train["noise_multiplier"] == claims.setting(f"sadpsgd.table2.{ds}.sigma")
        assert s.train["clip"] == claims.setting(f"sadpsgd.table2.{ds}.clip")
        if s.method == "sadpsgd":
            energy = {"energy": "validation"} if s.experiment.startswith("energy.") else {}
            assert s.method_config == {"Q0": claims.setting(f"sadpsgd.table2.{ds}.q0"),
                                       "mu0": claims.setting(f"sadpsgd.table2.{ds}.mu0"), **energy}
            assert s.train["target_epsilon"] is not None or s.train["max_accepted_steps"] is not None


@pytest.mark.usefixtures("no_seeds_plan")
def test_paper_profile_runs_to_the_papers_budgets_with_enough_epochs():
    configs = sa.configs("paper")
    assert configs[-2:] == sa.figure4_configs()  # Figure 4's two runs: tests/test_paper_scale.py
    specs = [resolve(c) for c in configs[:-2]]
    assert {s.seed for s in specs} == set(range(int(claims.setting("sadpsgd.n_runs"))))
    for s in specs:
        ds, scheme = s.experiment.split(".")[1:]
        table = s.experiment.split(".")[0]
        assert s.train["batch_size"] == claims.setting(f"sadpsgd.table2.{ds}.batch_size")
        assert (s.train["optimizer"], s.train["momentum"]) == ("momentum", sa.MOMENTUM)
        lr = claims.setting(f"sadpsgd.table2.{ds}.lr")
        split = table == "energy"  # energy on part of the test set: the training set is the paper's
        assert s.subset == ({"energy": sa.ENERGY_SPLIT} if split else {})
        assert (s.method_config.get("energy") == "validation") == split
        n = sa.setting(ds)["n_train"]
        spe = int(n // s.train["batch_size"])
        if scheme == "non_dp":  # our recipe: lr x C (Table 2's lr is for gradients clipped at C)
            assert s.train["lr"] == pytest.approx(lr * claims.setting(f"sadpsgd.table2.{ds}.clip"))
            assert not s.train["private"] and s.model == sa.MODEL[ds]
            assert s.train["epochs"] * spe >= sa.steps_for(ds, claims.setting(f"sadpsgd.table2.{ds}.epsilon"))
            continue
        assert s.train["lr"] == lr
        budget = claims.setting("sadpsgd.table3.max_epsilon") if table == "table3" else \
            claims.setting(f"sadpsgd.table2.{ds}.epsilon")
        assert s.train["target_epsilon"] == budget and s.train["target_accountant"] == sa.ACCEPTED_ONLY
        if s.method == "sadpsgd":  # the worst case: mu0 + 1 candidates per accept
            assert s.train["epochs"] * spe >= sa.worst_case_candidates(ds)
        else:
            assert s.train["epochs"] * spe >= sa.steps_for(ds, budget)
        # Table 3 needs test accuracy at a step cadence: every candidate for SA-DPSGD (free), every
        # few steps for the baselines; Table 1's baseline runs need only their end
        want = (None if split else 1) if s.method == "sadpsgd" else sa.TABLE3_EVAL_EVERY if table == "table3" else None
        assert s.train.get("eval_every") == want
        # a Table 3 baseline may stop at the top level: nothing after it is read
        assert s.train.get("stop_accuracy") == (sa.top_level(ds) if want == sa.TABLE3_EVAL_EVERY else None)
        assert s.train["clip_mode"] == ("auto-s" if scheme == "dpsgd_auto_s" else "flat")
        assert (s.model_kwargs.get("activation") == "relu") == (scheme == "dpsgd")
    assert [s.experiment for s in specs if s.subset] == ["energy.mnist.sa_dpsgd"]
    # every Table 1 scheme we can run has a run on every dataset, the ReLU CIFAR-10 CNN included
    assert {s.experiment for s in specs if s.seed == 0} >= {
        f"table1.{ds}.{scheme}" for ds in sa.DATASETS for scheme in (*sa.SCHEMES, "non_dp")}


def _fake_run(points, seed=0, rid="r0"):
    return {"id": rid, "spec": {"seed": seed},
            "epochs": [{"curve": points[:2]}, {"curve": points[2:]}]}


def test_table3_reads_the_first_point_at_the_level_under_both_accountings():
    points = [{"step": 100, "accepted_steps": 60, "test_acc": 0.90, "test_loss": 0.4},
              {"step": 200, "accepted_steps": 120, "test_acc": 0.941, "test_loss": 0.3},
              {"step": 300, "accepted_steps": 170, "test_acc": 0.93, "test_loss": 0.3},
              {"step": 400, "accepted_steps": 230, "test_acc": 0.97, "test_loss": 0.2}]
    hit = sa.first_reaching(_fake_run(points), "mnist", 0.94)
    assert hit["step"] == 200 and hit["eps_paper"] == pytest.approx(sa.eps_paper("mnist", 120))
    assert hit["eps_sound"] == pytest.approx(sa.eps_all("mnist", 120, 80)) and hit["eps_sound"] > hit["eps_paper"]
    assert sa.first_reaching(_fake_run(points), "mnist", 0.99) is None
    runs = {"table1.mnist.sa_dpsgd": [_fake_run(points, 0, "a"), _fake_run(points[:1] * 4, 1, "b")]}
    got = {m.claim_id: m for m in sa._table3_claims(runs)}
    m = got["sadpsgd.table3.mnist.acc0_94.eps_s"]
    assert m.kind == "training" and m.values[0] == pytest.approx(hit["eps_paper"]) and m.values[1] is None
    assert m.record_ids == ("a", "b") and "never reached (best 90.00%)" in m.detail
    assert got["sadpsgd.table3.mnist.acc0_94.eps_d"].kind == "missing"
    assert got["sadpsgd.table3.cifar10.acc0_52.eps_s"].kind == "missing"
    # a printed '-' (never within eps <= 6) is a statement: every run ended at its budget below the level
    cid = "sadpsgd.table3.mnist.acc0_98.eps_d"
    claim = claims.get(cid)
    assert claim.number is None

    def ended(stopped_by, pts=points):
        return {**_fake_run(pts, 0, "d"), "final": {"stopped_by": stopped_by}}

    for run, holds in ((ended("target_epsilon"), True), (ended("epochs"), False),
                       (ended("stop_accuracy", points + [{**points[-1], "step": 500, "test_acc": 0.99}]), False)):
        m = {m.claim_id: m for m in sa._table3_claims({"table3.mnist.dpsgd": [run]})}[cid]
        assert m.kind == "statement" and m.values == (holds,) and m.record_ids == ("d",)
        # the fact is computed either way, but one seed cannot decide it (verdicts v2)
        assert m.seeds == 1 and judge(claim, m).verdict == "inconclusive" and judge(claim, m).seeds == 1


def _sa_record(rows, mu0=2, rid="sa"):
    """A fake SA-DPSGD record from (accepted, test_loss) per candidate, one test point per step."""
    points, tau = [], 0
    for step, (accepted, loss) in enumerate(rows, 1):
        tau += accepted
        points.append({"step": step, "accepted_steps": tau, "test_loss": loss, "test_acc": 0.5})
    return {"id": rid, "spec": {"seed": 0, "method_config": {"Q0": 10.0, "mu0": mu0}},
            "epochs": [{"curve": points[:3]}, {"curve": points[3:]}]}


def test_decisions_classify_every_candidate_from_the_test_losses():
    rows = [(1, 1.0), (0, 1.0), (0, 1.0), (1, 1.2), (1, 1.1), (1, 1.15), (0, 1.15), (1, 1.25)]
    got = sa.decisions(_sa_record(rows))
    assert [d["kind"] for d in got] == ["first", "rejected", "rejected", "forced", "downhill", "uphill",
                                        "rejected", "uphill"]
    assert [d["mu"] for d in got] == [0, 0, 1, 2, 0, 0, 0, 1]
    assert [None if d["delta_e"] is None else round(d["delta_e"], 6) for d in got] == \
        [None, None, None, 0.2, -0.1, 0.05, None, 0.1]
    assert sa.last_uphill(_sa_record(rows)) == 4  # judged at tau 4, the 5th accepted step
    assert sa.last_uphill(_sa_record(rows[:5])) is None
    # a first candidate rejected: the second's Delta E is measured against J(w_0), now known
    assert [d["kind"] for d in sa.decisions(_sa_record([(0, 2.0), (1, 1.9)]))] == ["rejected", "downhill"]
    # mu0 = None (never forced): an uphill accept after many rejections is Eq. 3's draw
    assert sa.decisions(_sa_record(rows, mu0=None))[3]["kind"] == "uphill"
    sparse = _sa_record(rows)
    sparse["epochs"][1]["curve"].pop(0)
    with pytest.raises(ValueError, match="eval_every=1"):
        sa.decisions(sparse)


def test_acceptance_frame_and_findings_come_from_the_records():
    from dpnotes.report import sadpsgd as report

    rows = [(1, 1.0), (0, 1.0), (0, 1.0), (1, 1.2), (1, 1.1), (1, 1.15), (0, 1.15), (1, 1.25)]
    config = next(c for c in sa.configs("paper") if c["experiment"] == "table1.mnist.sa_dpsgd" and c["seed"] == 0)
    spec = resolve(config)
    record = {**_sa_record(rows), "id": spec.id, "spec": spec.to_dict()}  # mu0 10: nothing forced
    record["final"] = {"steps": 8, "accepted_steps": 5, "test_acc": 0.5}
    record["privacy"] = {"epsilon": {sa.ACCEPTED_ONLY: {"epsilon": sa.eps_paper("mnist", 5)}}}
    quick = {**record, "spec": {**record["spec"], "profile": "quick"}}
    frame = report.acceptance_frame([record, quick])
    assert len(frame) == 1
    row = frame.loc[("mnist", 0)]
    assert (row["acceptance rate"] == 5 / 8
            and (row["downhill"], row["uphill"], row["forced"], row["rejected"]) == (1, 3, 0, 3))
    stale = {**record, "id": "stale"}  # not a current config: left out
    assert len(report.acceptance_frame([record, stale])) == 1
    assert row["all candidates (Thm 1 formula)"] == pytest.approx(sa.eps_all("mnist", 5, 3), abs=1e-4)
    assert row["pld (sound)"] <= row["all candidates (Thm 1 formula)"]
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 3)
    report.acceptance_figure(axes[0], [record], window=3)
    report.figure(axes[1], [record])
    assert len(axes[0][0].lines) == 3 and axes[0][1].get_title() == "fmnist: not run"
    assert axes[1][0].lines[0].get_label() == "our run, seed 0: all candidates"
    plt.close(fig)
    text = " ".join(report.measured_findings(frame))
    assert ("measured acceptance 62.5%" in text and "(1 / 0 / 1 / 1 in the four quarters" in text
            and "median Delta E 1.0e-01" in text)
    assert report.measured_findings(report.acceptance_frame([quick])) == []


def test_energy_finding_compares_the_two_parts_of_the_test_set_at_the_end():
    from dpnotes.report import sadpsgd as report

    spec = resolve(next(c for c in sa.configs("paper") if c["experiment"] == "energy.mnist.sa_dpsgd"))
    last = {"test_acc": 0.97, "energy_acc": 0.98, "energy_n": 5000, "test_n": 5000}
    run = {"id": spec.id, "spec": spec.to_dict(), "epochs": [{"test_acc": 0.5}, last]}
    assert report.energy_finding([]).startswith("Not measured yet")
    text = report.energy_finding([run])
    se = 100 * (0.98 * 0.02 / 5000 + 0.97 * 0.03 / 5000) ** 0.5
    assert "accuracy 98.00% on the 5,000 test images that judged the candidates and 97.00% on the other 5,000" in text
    assert (f"gap of +1.00 points (sampling error of the gap {se:.2f}: beyond twice it)" in text
            and "Single seed" in text)
    last["energy_acc"] = 0.9705
    assert "+0.05 points" in report.energy_finding([run]) and "no optimism measurable" in report.energy_finding([run])
    # it is not one of Table 1's runs: it stays out of the acceptance table
    assert report.sa_runs([run]) == []


def test_table3_frame_reads_current_paper_records_under_both_accountings():
    import pandas as pd

    from dpnotes.report import sadpsgd as report

    def record(experiment, reach_step, accepted_share):
        config = next(c for c in sa.configs("paper") if c["experiment"] == experiment and c["seed"] == 0)
        spec = resolve(config)
        points = [{"step": st, "accepted_steps": int(st * accepted_share), "test_loss": 0.1,
                   "test_acc": 0.99 if st >= reach_step else 0.5} for st in range(10, 3000, 10)]
        return {"id": spec.id, "spec": spec.to_dict(), "epochs": [{"curve": points}]}

    records = [record("table1.mnist.sa_dpsgd", 1000, 0.5), record("table3.mnist.dpsgd", 2000, 1.0),
               record("table3.mnist.dpsgd_tanh", 1500, 1.0)]
    frame = report.table3_frame(records)
    row = frame.loc[("mnist", 0.94)]
    assert row["sa_dpsgd ours"] == pytest.approx(sa.eps_paper("mnist", 500), abs=1e-3)
    assert row["sa_dpsgd ours, sound"] == pytest.approx(sa.eps_all("mnist", 500, 500), abs=1e-3)
    assert row["dpsgd ours"] == pytest.approx(sa.eps_paper("mnist", 2000), abs=1e-3)
    assert row["dpsgd_tanh (paper)"] == claims.get("sadpsgd.table3.mnist.acc0_94.eps_h").number
    assert pd.isna(row["dpsgd_auto_s ours"])  # no run
    assert ("fmnist", 0.82) not in frame.index and len(report.table3_frame([])) == 0


def _acc_run(acc, rid):
    return {"id": rid, "spec": {"seed": 0}, "final": {"test_acc": acc}}


def test_beats_sota_fails_on_one_dataset_and_waits_for_the_others_otherwise():
    def runs(ds, sa_acc):
        accs = {"sa_dpsgd": sa_acc, "dpsgd_tanh": 0.90, "dpsgd": 0.80, "dpsgd_auto_s": 0.91}
        return {f"table1.{ds}.{k}": [_acc_run(a, f"{ds}.{k}")] for k, a in accs.items()}

    fails = sa._beats_sota({**runs("mnist", 0.95), **runs("fmnist", 0.905)})
    assert fails.kind == "statement" and fails.values == (False,)
    assert "auto_s 91.00%" in fails.detail and len(fails.record_ids) == 8
    waits = sa._beats_sota({**runs("mnist", 0.95), **runs("fmnist", 0.95)})
    assert waits.kind == "missing" and "(cifar10)" in waits.basis and "mnist: SA-DPSGD 95.00%" in waits.detail
    holds = sa._beats_sota({**runs("mnist", 0.95), **runs("fmnist", 0.95), **runs("cifar10", 0.95)})
    assert holds.values == (True,)
    # only seeds every scheme has are compared
    extra = {"table1.mnist.sa_dpsgd": [_acc_run(0.95, "a"), {**_acc_run(0.10, "b"), "spec": {"seed": 1}}]}
    paired = sa._beats_sota({**runs("mnist", 0.95), **extra, **runs("fmnist", 0.8)})
    assert "b" not in paired.record_ids and "mnist: SA-DPSGD 95.00%" in paired.detail


def test_lowest_privacy_cost_is_judged_on_paired_seeds_per_level_and_gap():
    levels = [claims.setting(f"sadpsgd.table3.mnist.{lv}.accuracy_level") for lv in sa.table3_levels("mnist")]

    def run(reach, seed, end=6000):  # reaches level i after reach[i] steps (all accepted), ends at step `end`
        points = [{"step": st, "accepted_steps": st, "test_loss": 0.1, "test_acc": lv} for st, lv in zip(reach, levels)]
        points.append({"step": end, "accepted_steps": end, "test_loss": 0.1, "test_acc": 0.5})
        return {"id": f"r{seed}.{reach}", "spec": {"seed": seed}, "epochs": [{"curve": points}]}

    def runs(sa_reach, base_reach, sa_end=6000, seeds=(0, 1, 2)):
        out = {f"table3.mnist.{k}": [run([r + 10 * s for r in base_reach], s) for s in seeds]
               for k in ("dpsgd", "dpsgd_tanh", "dpsgd_auto_s")}
        return {**out, "table1.mnist.sa_dpsgd": [run([r + 7 * s for r in sa_reach], s, sa_end) for s in seeds]}

    def verdict(m):
        return judge(claims.get(m.claim_id), m)

    m = sa._lowest_privacy_cost(runs([700, 1300, 2500], [800, 1500, 3000]))  # lower everywhere, gap grows
    assert m.kind == "statement" and len(m.comparisons) == 5 and all(len(v) == 3 for _, v in m.comparisons)
    assert m.substitute == "judged on MNIST only: Fashion-MNIST, CIFAR-10 Table 3 runs not run (GPU)"
    e = verdict(m)
    assert e.verdict == "reproduced" and e.paired and e.seeds == 3 and e.fidelity == "substitute"
    gap = dict(m.comparisons)["MNIST 94 %: best baseline - SA"]
    assert gap == pytest.approx([sa.eps_paper("mnist", 800 + 10 * s) - sa.eps_paper("mnist", 700 + 7 * s)
                                 for s in range(3)])
    assert verdict(sa._lowest_privacy_cost(runs([900, 1600, 3200], [800, 1500, 3000]))).verdict == "not_reproduced"
    assert verdict(sa._lowest_privacy_cost(runs([700, 1450, 2500], [800, 1500, 3000]))).verdict == "not_reproduced"
    # only the seeds every scheme has are compared
    extra = runs([700, 1300, 2500], [800, 1500, 3000])
    extra["table1.mnist.sa_dpsgd"].append(run([9000, 9000, 9000], 3))
    assert all(len(v) == 3 for _, v in sa._lowest_privacy_cost(extra).comparisons)
    # a baseline that never reaches 98 % counts from the eps its run ended at (a lower bound)
    m = sa._lowest_privacy_cost(runs([700, 1300, 2500], [800, 1500, 3000]) | {
        "table3.mnist.dpsgd": [run([800 + 10 * s, 1500 + 10 * s], s, end=5000) for s in range(3)]})
    assert "dpsgd never reached 98 % on seed(s) 0, 1, 2" in m.detail
    # SA-DPSGD's run ends (eps 3) before 98 %: the baselines needed more, so no seed can say;
    # had a baseline got there below SA-DPSGD's end, its bound (< 0) would decide against it
    m = sa._lowest_privacy_cost(runs([700, 1300], [800, 1500, 12000], sa_end=2000))
    assert dict(m.comparisons)["MNIST 98 %: best baseline - SA"] == () and "cannot say" in m.detail
    assert verdict(m).verdict == "inconclusive" and "no seed can say" in verdict(m).detail
    m = sa._lowest_privacy_cost(runs([700, 1300], [800, 1500, 1800], sa_end=2000))
    assert all(v < 0 for v in dict(m.comparisons)["MNIST 98 %: best baseline - SA"])
    assert verdict(m).verdict == "not_reproduced"
    assert sa._lowest_privacy_cost({}).kind == "missing"


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ValueError, match="profile"):
        sa.configs("huge")
    with pytest.raises(ValueError, match="dataset"):
        sa.setting("svhn")
    with pytest.raises(ValueError, match="epsilon"):
        sa.tau_at("mnist", -1.0)
    with pytest.raises(ValueError, match="epsilon"):
        sa.tau_at("mnist", 1e-3)
    with pytest.raises(ValueError, match="tau"):
        sa.worst_case_candidates("mnist", 0)
    with pytest.raises(ValueError, match="dataset"):
        sa.load("svhn")
    for size in (0, 10_000, 2.5):
        with pytest.raises(ValueError, match=r"subset\['energy'\]"):
            sa.load("mnist", {"energy": size})
    energy_run = next(c for c in sa.configs("paper") if c["experiment"].startswith("energy."))
    with pytest.raises(ValueError, match="energy='validation'"):
        sa.execute(resolve({**energy_run, "subset": {}}), progress=False)
    with pytest.raises(ValueError, match="accounting"):
        sa.level_eps([], "mnist", 0.9, "eps_rdp")
    assert sa.level_eps([], "mnist", 0.9) is None


def test_energy_split_sets_fixed_test_examples_apart():
    train, test, energy = sa.load("mnist", {"energy": 5000})
    full, full_test, none = sa.load("mnist")
    assert none is None and torch.equal(train[0], full[0])
    assert (len(test[1]), len(energy[1])) == (5000, 5000)
    # a partition of the test set, the same for every call
    key = lambda x: (x.flatten(1).mul(255).round().to(torch.int64) * torch.arange(1, 785)).sum(1)  # noqa: E731
    assert torch.equal(torch.sort(torch.cat([key(test[0]), key(energy[0])])).values,
                       torch.sort(key(full_test[0])).values)
    assert torch.equal(sa.load("mnist", {"energy": 5000})[2][1], energy[1])


# --------------------------------------------------------------------------------------
# A smoke run end to end.

def test_smoke_execute_end_to_end():
    for config in sa.configs("smoke"):
        spec = resolve(config)
        out = sa.execute(spec, progress=False)
        final, privacy = out["final"], out["privacy"]
        assert 0 <= final["test_acc"] <= 1 and final["steps"] >= final["accepted_steps"] >= 1
        eps = privacy["epsilon"]
        assert eps["rdp-classic"]["epsilon"] > 0
        if spec.method == "sadpsgd":
            assert final["stopped_by"] == "max_accepted_steps"
            assert final["accepted_steps"] == spec.train["max_accepted_steps"]
            # the record's Theorem 1 eps is that of its accepted steps; its ledger holds candidates
            assert eps[sa.ACCEPTED_ONLY]["epsilon"] == pytest.approx(sadpsgd_epsilon(
                privacy["q"], privacy["noise_multiplier"], final["accepted_steps"], privacy["delta"])[0], rel=1e-12)
            assert all(e["event"]["type"] == "CandidateStepDpEvent" for e in privacy["ledger"])
