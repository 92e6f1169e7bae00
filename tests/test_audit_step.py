"""The per-step audit (:mod:`dpnotes.audit.per_step`, :mod:`dpnotes.audit.step_run`): its intervals
cover the true factors in >= 95 % of simulated audits at the audit's size; its lower bound stays
below the true eps of a correct mechanism and reaches most of it; and on the real loop at the
audit's real size (N = 20,000 rows, 5,000 canaries, 100 steps, eps 1: the hardest eps for a noise
error) every broken variant is caught and the correct step is not."""

import logging

import numpy as np
import pytest

from dpnotes.audit import campaign, per_step, step_run

Q, STEPS, M, DELTA = 0.1, 100, 5000, 1e-5
SIGMA = {1.0: 4.278, 8.0: 0.9935}  # campaign._sigma("paper", "dpsgd", eps): checked below


def test_sigmas_are_the_campaigns():
    for eps, sigma in SIGMA.items():
        assert campaign._sigma("paper", "dpsgd", eps) == sigma


@pytest.mark.parametrize("sigma", [SIGMA[1.0], SIGMA[8.0]])
def test_intervals_cover_the_true_factors_at_the_audits_size(sigma):
    rng = np.random.default_rng(49)
    reps, held = 1500, 0
    for _ in range(reps):
        f = per_step.factors(per_step.simulate([Q] * STEPS, [sigma] * STEPS, M, rng))
        held += f.a_low <= 1 and f.b_high >= 1 and f.c_low <= 1
    assert held / reps >= 0.95


def test_summaries_from_rows_match_the_exact_laws():
    rng = np.random.default_rng(1)
    f = per_step.factors(per_step.simulate([Q] * 20, [2.0] * 20, M, rng, a=1.5, b=0.8, c=0.5, raw=True))
    assert abs(f.a - 1.5) < 0.1 and abs(f.b - 0.8) < 0.01 and abs(f.c - 0.5) < 0.05


def test_bad_input_names_the_parameter():
    with pytest.raises(ValueError, match="steps"):
        per_step.factors([])
    with pytest.raises(ValueError, match="variant"):
        step_run.config("paper", "dpsgd", 1.0, 0, "noise0.7")


def test_lower_bound_of_a_correct_mechanism_is_below_and_near_its_eps():
    rng = np.random.default_rng(3)
    true = per_step.composed_epsilon([(Q, SIGMA[1.0], STEPS)], DELTA)
    bound = per_step.lower_bound(per_step.simulate([Q] * STEPS, [SIGMA[1.0]] * STEPS, M, rng), DELTA)
    assert 0.8 * true < bound["epsilon"] <= true


def test_optimistic_pld_is_below_the_accountant():
    from dpnotes.accounting.registry import price
    from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent

    ledger = Ledger().append(PoissonSampledDpEvent(Q, GaussianDpEvent(SIGMA[1.0])), STEPS)
    claimed = price(ledger, DELTA, ["pld"])["pld"]["epsilon"]
    low = per_step.composed_epsilon([(Q, SIGMA[1.0], STEPS)], DELTA)
    assert 0.97 * claimed < low <= claimed


def _run(method, variant, eps=1.0, seed=1):
    from dpnotes import experiments

    logging.disable(logging.WARNING)
    spec = experiments.resolve(step_run.config("paper", method, eps, seed, variant))
    return step_run.execute(spec, progress=False)["final"]["audit"]


@pytest.mark.slow
@pytest.mark.parametrize("variant", step_run.VARIANTS)  # every broken variant, on the method it breaks
def test_real_step_at_the_audits_size(variant):
    audit = _run(step_run.BROKEN_ON.get(variant, "dpsgd"), variant)
    assert audit["caught"] == (variant != "correct"), audit
    if variant == "correct":
        assert audit["lower_bound"] >= 0.8 * audit["claimed"]
