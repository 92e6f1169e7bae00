"""The white-box canary audit through the real training loop: canaries are exact Dirac
gradients, the audit of the correct step stays below its accountant, and three deliberately
broken steps (noise halved, canary not clipped, sampling rate under-reported to the ledger) are
caught: their lower bound exceeds the eps their ledger claims. Tiny size: one full-batch step
(q = 1) of a 2-class MLP on 100 synthetic rows plus m canary slots."""

from types import SimpleNamespace

import numpy as np
import torch

from dpnotes.audit import campaign
from dpnotes.audit.canaries import CanaryModel, canary_loss, inclusion, with_canaries
from dpnotes.audit.training import audited_train
from dpnotes.ledger import GaussianDpEvent, PoissonSampledDpEvent
from dpnotes.train import Plugin
from dpnotes.train import loop as engine
from dpnotes.train.grads import FuncGrads

M, N_REAL, SIGMA, DELTA = 5000, 100, 1.0, 1e-5
GUESSES = (100, 500, 1000, 2500)


def _data(n=N_REAL, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(n, 123, generator=g).round(), torch.randint(0, 2, (n,), generator=g)


def _spec(sigma=SIGMA, magnitude=2.0, m=M):
    n = N_REAL + m
    train = {"epochs": 1, "batch_size": n, "lr": 0.1, "grad_backend": "func", "clip": 1.0, "noise_multiplier": sigma,
             "delta": DELTA, "accountants": ("pld",), "seed": 3}
    return SimpleNamespace(method="dpsgd", method_config={}, model="gdp-adult", model_kwargs={}, seed=3,
                           train=train, analysis={"canaries": m, "magnitude": magnitude})


def _audit(spec, extra=()):
    out, observer, included = audited_train(spec, _data(), _data(50, 1), extra_plugins=extra, num_classes=2)
    summary = campaign.audit_summary(observer.scores(), included, DELTA)
    claimed = out["privacy"]["epsilon"]["pld"]["epsilon"]
    return summary, claimed


class HalvedNoise(Plugin):
    """Adds sigma/2 of noise and tells the ledger it added sigma."""

    name = "halved-noise"

    def noise_multiplier(self, ctx):
        return ctx.config.noise_multiplier / 2

    def step_event(self, ctx, noise_multiplier):
        return PoissonSampledDpEvent(ctx.q, GaussianDpEvent(ctx.config.noise_multiplier))


class UnderReportedRate(Plugin):
    """Samples at q but writes q / 20 into the ledger."""

    name = "under-reported-rate"

    def step_event(self, ctx, noise_multiplier):
        return PoissonSampledDpEvent(ctx.q / 20, GaussianDpEvent(noise_multiplier))


def test_canary_gradients_are_dirac():
    model = CanaryModel(torch.nn.Linear(3, 2), 4, 2, 2.5)
    xs, ids, y = with_canaries((torch.randn(3, 3), torch.tensor([0, 1, 1])), np.array([True, False, True, False]), 2)
    grads, _, _ = FuncGrads(model, canary_loss(2))(dict(model.named_parameters()), (xs, ids), y)
    canary = grads["canary"]
    assert torch.equal(canary[:3], torch.zeros(3, 4))  # real examples never touch the canary coordinates
    assert torch.equal(canary[3], torch.tensor([2.5, 0, 0, 0])) and torch.equal(canary[5], torch.tensor([0, 0, 2.5, 0]))
    for k, g in grads.items():  # blanks (slots 1 and 3 out): no gradient at all
        assert torch.count_nonzero(g[4]) == 0 and torch.count_nonzero(g[6]) == 0, k
        if k != "canary":  # canaries: nothing outside their coordinate
            assert torch.count_nonzero(g[3]) == 0 and torch.count_nonzero(g[5]) == 0, k
    assert torch.count_nonzero(grads["base.weight"][:3]) > 0


def test_inclusion_is_seeded_fair_coins():
    a, b = inclusion(4000, 0), inclusion(4000, 1)
    assert np.array_equal(a, inclusion(4000, 0)) and not np.array_equal(a, b)
    assert abs(a.mean() - 0.5) < 0.03


def test_correct_step_stays_below_its_accountant():
    summary, claimed = _audit(_spec())
    assert summary["steps_observed"] == 1
    for key in ("one_run_llr", "one_run_linear", "one_run_fdp_llr"):
        assert summary[key]["epsilon"] < claimed, key
    assert summary["one_run_fdp_llr"]["epsilon"] > 0.3 * claimed  # the audit sees the canaries at all


def test_halved_noise_is_caught():
    summary, claimed = _audit(_spec(), (HalvedNoise(),))
    assert summary["one_run_fdp_llr"]["epsilon"] > claimed


def test_unclipped_canary_is_caught(monkeypatch):
    original = engine.clip_factors
    monkeypatch.setattr(engine, "clip_factors", lambda grads, clip, mode="flat", weights=None:
                        original(grads, None, mode, weights))
    summary, claimed = _audit(_spec(magnitude=4.0))
    assert summary["one_run_llr"]["epsilon"] > claimed


def test_under_reported_rate_is_caught():
    summary, claimed = _audit(_spec(), (UnderReportedRate(),))
    assert summary["one_run_llr"]["epsilon"] > claimed
