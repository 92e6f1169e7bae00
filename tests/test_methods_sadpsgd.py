"""SA-DPSGD (dpnotes.methods.sadpsgd): Alg. 2 / Eq. 3 of Fu, Chen, Ling (2022)."""

import json
import math

import pytest
import torch
from interrupt import Interrupted, StopAtEpoch
from scipy import stats
from toy_runs import data as _data
from toy_runs import model as _model
from toy_runs import run as _run
from toy_runs import strip as _strip

from dpnotes.accounting.registry import price
from dpnotes.accounting.sadpsgd import sadpsgd_epsilon, sadpsgd_epsilon_sound
from dpnotes.ledger import CandidateStepDpEvent, GaussianDpEvent, Ledger, PoissonSampledDpEvent
from dpnotes.methods import sadpsgd
from dpnotes.train import Plugin, TrainConfig, build_context, train

ALPHA = 1e-3  # false-alarm rate of each statistical test below
CFG = TrainConfig(epochs=2, batch_size=16, lr=2.0, noise_multiplier=1.0, clip=1.0,
                  accountants=("rdp", "sadpsgd-accepted-only"), seed=3)



def _plugin(**kw):
    return sadpsgd.hooks(sadpsgd.Config(**kw))[0]


def _started(**kw):
    """A plug-in after on_train_start on a small context."""
    plugin = _plugin(**kw)
    plugin.on_train_start(build_context(_model(), _data(), _data(40, seed=1), CFG))
    return plugin


def _flags(record) -> list[bool]:
    """The accepted flag of every step in the run's ledger (each entry a candidate step)."""
    flags = []
    for event, count in Ledger.from_json(record["privacy"]["ledger"]).entries:
        assert isinstance(event, CandidateStepDpEvent)
        flags += [event.accepted] * int(count)
    return flags


class Spy(sadpsgd.SADPSGD):
    """Records, per candidate: the energy before and after (evaluated independently), the
    state it was judged in, the number of evaluations the method asked for, the decision."""

    def __init__(self, config):
        super().__init__(config)
        self.log = []

    def accept_step(self, ctx, old_params, new_params, evaluate):
        calls = []

        def counted(params, split="test"):
            calls.append(1)
            return evaluate(params, split)

        split = self.config.energy  # the losses the rule should read
        before = {"t": ctx.step, "tau": self.tau, "mu": self.mu, "Q": self.Q,
                  "j_old": ctx.evaluate(old_params, split)["loss"], "j_new": ctx.evaluate(new_params, split)["loss"]}
        accepted = super().accept_step(ctx, old_params, new_params, counted)
        self.log.append({**before, "evals": len(calls), "accepted": accepted})
        return accepted


def test_q0_zero_accepts_every_step_and_is_dpsgd_exactly():
    base, base_model = _run(CFG)
    sa, sa_model = _run(CFG, [_plugin(Q0=0.0)])
    assert all(torch.equal(p, q) for p, q in zip(base_model.parameters(), sa_model.parameters()))
    assert _flags(sa) == [True] * 10 and sa["final"]["accepted_steps"] == 10
    for a, b in zip(base["epochs"], sa["epochs"]):
        for key in ("train_loss", "train_acc", "test_loss", "test_acc", "steps", "accepted_steps"):
            assert a[key] == b[key]
    assert sa["privacy"]["epsilon"]["rdp"] == base["privacy"]["epsilon"]["rdp"]


def test_huge_q0_without_forced_accepts_is_greedy():
    spy = Spy(sadpsgd.Config(Q0=1e12, mu0=math.inf))
    out, _ = _run(CFG.replace(epochs=4), [spy])
    log = spy.log
    assert [s["t"] for s in log] == list(range(20))
    assert [s["evals"] for s in log] == [2] + [1] * 19  # J of the accepted model is cached
    for s in log:
        if s["t"] >= 1 and s["tau"] == 0:  # Alg. 2: Q = Q0 * tau = 0 before any acceptance
            assert s["Q"] == 0 and s["accepted"]
        else:
            assert s["Q"] == 1e12 * max(s["tau"], 1)
            assert s["accepted"] == (s["j_new"] <= s["j_old"]), s
    decided_by_loss = [s["accepted"] for s in log if s["Q"] > 0]
    assert any(decided_by_loss) and not all(decided_by_loss)  # both branches were exercised
    assert _flags(out) == [s["accepted"] for s in log]


@pytest.mark.parametrize("mu0", [1, 3])
def test_forced_accept_exactly_after_mu0_rejections(mu0):
    plugin = _started(Q0=1e12, mu0=mu0)
    losses = iter(range(1000))  # the test loss rises at every evaluation
    evaluate = lambda params, split: float(next(losses))  # noqa: E731
    decisions = []
    for _ in range(2 + 3 * (mu0 + 1)):
        decisions.append(plugin.accept_step(None, {}, {}, evaluate))
        assert plugin.Q == 1e12 * plugin.tau  # Alg. 2 line 22
    # step 0 is judged with Q = Q0 and rejected; step 1 with Q = Q0 * 0 (Alg. 2 lines 1, 22):
    # accepted; from then on only the mu0-th consecutive rejection forces an accept
    assert decisions == [False, True] + ([False] * mu0 + [True]) * 3
    assert plugin.tau == 4 and plugin.mu == 0


@pytest.mark.parametrize("delta_e, tau", [(0.05, 5), (0.3, 1), (0.01, 40)])
def test_acceptance_probability_is_exp_minus_delta_e_q0_tau(delta_e, tau):
    q0, n = 2.0, 4000
    plugin = _started(Q0=q0, mu0=10)
    plugin.tau, plugin.Q = tau, q0 * tau
    accepted = sum(plugin.decide(delta_e) for _ in range(n))
    p = math.exp(-delta_e * q0 * tau)
    assert sadpsgd.acceptance_probability(delta_e, q0 * tau) == pytest.approx(p)
    assert stats.binomtest(accepted, n, p).pvalue > ALPHA
    assert (plugin.tau, plugin.mu) == (tau, 0)  # deciding changes no state but the generator
    assert all(plugin.decide(d) for d in (0.0, -1.0) for _ in range(100))  # Delta E <= 0: P = 1
    plugin.mu = 10  # mu >= mu0: accepted whatever Delta E
    assert all(plugin.decide(1e6) for _ in range(100))


def test_ledger_has_one_candidate_per_step_and_both_accountants_price_it():
    spy = Spy(sadpsgd.Config(Q0=10.0, mu0=2))
    out, _ = _run(CFG.replace(epochs=4), [spy])
    flags = _flags(out)
    assert flags == [s["accepted"] for s in spy.log] and len(flags) == out["final"]["steps"] == 20
    accepted = sum(flags)
    assert 0 < accepted < 20 and out["final"]["accepted_steps"] == accepted
    eps = out["privacy"]["epsilon"]
    q, sigma, delta = 16 / 80, 1.0, CFG.delta
    assert eps["sadpsgd-accepted-only"]["epsilon"] == pytest.approx(
        sadpsgd_epsilon(q, sigma, accepted, delta)[0], rel=1e-9)
    step = PoissonSampledDpEvent(q, GaussianDpEvent(sigma))
    every = Ledger().append(step, 20)
    assert eps["rdp"] == price(every, delta, "rdp")["rdp"]  # sound: every candidate charged
    # the same accountant with every candidate counted (the sound count, same orders and
    # conversion) is above the paper's; "rdp" itself uses another conversion, so it need not be
    all_counted = Ledger()
    for _ in flags:
        all_counted.append(CandidateStepDpEvent(step, True))
    sound = price(all_counted, delta, "sadpsgd-accepted-only")["sadpsgd-accepted-only"]["epsilon"]
    assert sound == pytest.approx(sadpsgd_epsilon_sound(q, sigma, 20, delta)[0], rel=1e-9)
    assert sound > eps["sadpsgd-accepted-only"]["epsilon"]


def test_resume_restores_tau_mu_q_j_and_the_generator(tmp_path):
    cfg = CFG.replace(epochs=3)
    full, full_model = _run(cfg, [_plugin(Q0=0.5, mu0=2)])

    path = tmp_path / "run.pt"
    with pytest.raises(Interrupted):
        _run(cfg, [_plugin(Q0=0.5, mu0=2), StopAtEpoch(2)], checkpoint=path)
    saved = torch.load(path, weights_only=False)
    state = saved["plugins"][0]
    assert state["tau"] == saved["accepted"] and state["Q"] == 0.5 * state["tau"]
    assert state["J"] is not None and set(state) == {"tau", "mu", "Q", "J", "generator"}
    resumed, resumed_model = _run(cfg, [_plugin(Q0=0.5, mu0=2), Plugin()], checkpoint=path,
                                  model_seed=9)
    assert _strip(resumed) == _strip(full)
    assert all(torch.equal(p, q) for p, q in zip(resumed_model.parameters(), full_model.parameters()))
    # the plug-in state alone: a fresh plug-in loaded from it continues identically
    first = _started(Q0=0.5, mu0=3)
    losses = iter([1.0, 1.2, 0.9, 1.1, 1.3, 1.0, 1.4])
    for _ in range(6):
        first.accept_step(None, {}, {}, lambda params, split: next(losses))
    second = _plugin(Q0=0.5, mu0=3)
    second.load_state_dict(first.state_dict())
    second.on_train_start(build_context(_model(), _data(), _data(40, seed=1), CFG))
    assert (second.tau, second.mu, second.Q, second.J) == (first.tau, first.mu, first.Q, first.J)
    assert first.mu > 0 and first.tau > 0
    assert [first.decide(0.3) for _ in range(50)] == [second.decide(0.3) for _ in range(50)]


@pytest.mark.parametrize("settings, name", [
    ({"Q0": -1.0}, "Q0"), ({"Q0": float("nan")}, "Q0"), ({"Q0": math.inf}, "Q0"),
    ({"mu0": 0}, "mu0"), ({"mu0": 2.5}, "mu0"), ({"mu0": -math.inf}, "mu0"), ({"mu0": "10"}, "mu0"),
    ({"energy": "train"}, "energy"), ({"energy": "val"}, "energy")])
def test_bad_settings_are_refused(settings, name):
    with pytest.raises(ValueError, match=name):
        sadpsgd.Config(**settings)


def test_resolve_is_json_safe_and_round_trips():
    assert sadpsgd.resolve({}) == {"Q0": 10.0, "mu0": 10}
    never = sadpsgd.resolve({"Q0": 10, "mu0": math.inf})
    assert never == {"Q0": 10.0, "mu0": None}
    json.dumps(never, allow_nan=False)
    assert sadpsgd.Config(**never) == sadpsgd.Config(Q0=10.0, mu0=math.inf)
    # the energy set appears only when it is not the paper's (specs from before it keep their ids)
    assert sadpsgd.resolve({"energy": "test"}) == {"Q0": 10.0, "mu0": 10}
    assert sadpsgd.resolve({"energy": "validation"})["energy"] == "validation"


def test_a_run_without_test_data_is_refused():
    with pytest.raises(ValueError, match="test"):
        train(_model(), _data(), None, CFG, plugins=[_plugin()], progress=False)


def test_a_validation_run_without_validation_data_is_refused():
    with pytest.raises(ValueError, match="validation_data"):
        train(_model(), _data(), _data(40, seed=1), CFG, plugins=[_plugin(energy="validation")], progress=False)


def test_validation_energy_judges_on_its_own_set_only():
    """energy="validation": J is the loss on the given set; with that set equal to the test set
    the run is the test-energy run exactly, with another set the decisions follow that set and
    the per-step test curve still reads the test set."""
    test, other = _data(40, seed=1), _data(40, seed=2)
    cfg = CFG.replace(epochs=4, eval_every=1)

    def run(plugin, validation):
        m = _model()
        out = train(m, _data(), test, cfg, plugins=[plugin], progress=False, validation_data=validation)
        return out, m

    same, _ = run(_plugin(), None)
    mirrored, _ = run(_plugin(energy="validation"), test)
    strip = lambda r: [{k: v for k, v in e.items() if not k.startswith(("energy_", "test_n"))}  # noqa: E731
                       for e in _strip(r)["epochs"]]
    assert strip(same) == strip(mirrored)
    spy = Spy(sadpsgd.Config(energy="validation"))
    out, m = run(spy, other)
    ctx = build_context(m, _data(), test, cfg, validation_data=other)
    energy, tested = ctx.evaluate(split="validation"), ctx.evaluate()
    assert spy.J == pytest.approx(energy["loss"], rel=1e-6) and spy.J != pytest.approx(tested["loss"], rel=1e-3)
    # a lower energy is always kept; the ledger's flags are the rule's decisions
    assert all(row["accepted"] for row in spy.log if row["j_new"] <= row["j_old"])
    assert any(not row["accepted"] for row in spy.log)
    assert _flags(out) == [row["accepted"] for row in spy.log]
    # the per-step curve is the test set's (not the energy set's), the epoch records both
    last = out["epochs"][-1]
    assert last["curve"][-1]["test_loss"] == pytest.approx(tested["loss"], rel=1e-6)
    assert (last["energy_loss"], last["energy_acc"]) == pytest.approx((energy["loss"], energy["acc"]), rel=1e-6)
    assert (last["energy_n"], last["test_n"]) == (40, 40)


def test_an_accept_rule_cannot_read_the_training_set():
    class Peek(sadpsgd.SADPSGD):
        def accept_step(self, ctx, old_params, new_params, evaluate):
            return evaluate(new_params, "train") < 1.0

    with pytest.raises(ValueError, match="split"):
        train(_model(), _data(), _data(40, seed=1), CFG, plugins=[Peek(sadpsgd.Config())], progress=False)
