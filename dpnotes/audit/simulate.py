"""The idealised canary audit: what the white-box audit of :mod:`dpnotes.audit.canaries` would
observe if the engine did exactly what its ledger says (Poisson sampling at q, a clipped
contribution of one sensitivity, N(0, sigma^2) noise in those units), simulated with numpy.

It is the reference the engine's audit is compared with (the same scores, the same test, a
simulated mechanism instead of the trained one), a planning tool (which (m, q, sigma, T) can
certify how much), and, through :func:`one_run_rejection_rate`, a check of the one-run test's
level (Steinke et al., Theorem 3.1): on a mechanism that is eps-DP the bound exceeds eps in at
most a fraction ``significance`` of the runs.
"""

from __future__ import annotations

import numpy as np

from dpnotes import validate
from dpnotes.audit.canaries import step_llr
from dpnotes.audit.one_run import bernoulli_one_run, one_run_audit

CHUNK = 256  # steps simulated at once (memory m x CHUNK)


def canary_scores(q: float, sigma: float, steps: int, m: int, rng: np.random.Generator,
                  sampled_rate: float | None = None, contribution: float = 1.0):
    """``(llr scores, included)`` of m canaries over ``steps`` steps of the subsampled Gaussian
    (q, sigma). ``sampled_rate`` and ``contribution`` say what the simulated mechanism really
    does (default: what it claims), for broken variants."""
    q = validate.probability("q", q)
    sigma = validate.positive("sigma", sigma)
    steps = validate.integer("steps", steps, minimum=1)
    m = validate.integer("m", m, minimum=1)
    rate = q if sampled_rate is None else validate.probability("sampled_rate", sampled_rate)
    included = rng.random(m) < 0.5
    scores = np.zeros(m)
    for start in range(0, steps, CHUNK):
        t = min(CHUNK, steps - start)
        hit = included[:, None] & (rng.random((m, t)) < rate)
        z = rng.standard_normal((m, t)) + hit * (contribution / sigma)
        scores += step_llr(z, q, sigma).sum(axis=1)
    return scores, included


def one_run_rejection_rate(eps: float, m: int, guesses: int, runs: int, rng: np.random.Generator,
                           delta: float = 0.0, significance: float = 0.05) -> float:
    """Fraction of ``runs`` simulated one-run audits of the extremal eps-DP randomized response
    (:func:`dpnotes.audit.one_run.bernoulli_one_run`) whose lower bound exceeds eps."""
    runs = validate.integer("runs", runs, minimum=1)
    over = 0
    for _ in range(runs):
        s, inc = bernoulli_one_run(eps, m, rng)
        over += one_run_audit(s, inc, delta, (guesses,), two_sided=False, significance=significance).epsilon > eps
    return over / runs
