"""Sampling against accounting: one (q, sigma, T) priced under four ways of forming batches.

Every DP-SGD paper here charges the Poisson-subsampled Gaussian, but code often forms batches
another way. For each paper's main-table setting (read from its experiments module, which reads
the claims registry) this module computes eps at the paper's delta under:

(a) **Poisson sampling** (Abadi et al. 2016; Mironov, Talwar, Zhang 2019): the tight PLD upper
    bound of the registry's ``pld`` accountant (:mod:`dpnotes.accounting.pld`), add/remove
    adjacency (equal here to zero-out adjacency: a zeroed example adds nothing whether sampled
    or not).
(b) **Sampling without replacement**, a fresh uniform batch of exactly B of the N examples each
    step: dp_accounting's ``SampledWithoutReplacementDpEvent`` under its RDP accountant (Wang,
    Balle, Kasiviswanathan, AISTATS 2019; Theorem 27 of arXiv 1808.00087, as dp_accounting
    cites it). It assumes **replace-one** adjacency (N is
    public), under which the sum of clipped gradients moves by up to 2C, so the event's Gaussian
    has noise multiplier sigma/2 (dp_accounting prices a ``GaussianDpEvent`` as sensitivity 1
    under either relation). An upper bound, under a different adjacency from the other columns.
(c) **Shuffled batches** (one random permutation per epoch cut into b = N // B batches): the
    LOWER bound of Chua et al., ICML 2024 ("How Private are DP-SGD Implementations?",
    arXiv 2403.17673). Under zero-out adjacency with the other examples' clipped
    gradients set to -C by an adaptive adversary, one epoch's output (b noisy sums, in units of
    C, minus the known part) is the pair ``P = MoG(2)``, ``Q = MoG(1)`` with
    ``MoG(m) = (1/b) sum_t N(m e_t, sigma^2 I_b)``: the differing example sits in one batch of
    the epoch, a mean shift 1/sigma (in noise units) at one of b positions. The statistic
    ``max_t x_t`` (the complements of their "cube" sets {max_t x_t <= C}) has closed-form laws,
    ``P(max <= c) = Phi((c - m) / sigma) Phi(c / sigma)^(b - 1)``; cut into slices, each slice's
    loss rounded down, it is a post-processing of the output, so its privacy-loss distribution,
    composed over the full epochs with dp_accounting's optimistic PLD, gives a lower bound on
    delta(eps) for every eps, hence on eps at delta. The shuffle lower bound can EXCEED the
    Poisson upper bound at the same q and sigma (their finding): then a Poisson eps reported for
    shuffled batches is wrong. Only full epochs are counted (dropping releases keeps a lower bound),
    and an epoch leaves the example out with chance (N - bB) / N (the examples left over).
(d) **Fixed batches, no amplification**: each of the T steps a Gaussian of multiplier sigma on
    the example, composed T times: mu-GDP with ``mu = sqrt(T) / sigma`` (Dong, Roth, Su 2022,
    Corollary 3.3), eps exact by Balle and Wang 2018, Theorem 8
    (:func:`dpnotes.audit.mechanisms.gaussian_epsilon` at sigma / sqrt(T)). No column under
    the same adjacency exceeds it: no sampling scheme leaks more than the unsampled step (for
    the replace-one column, compare ``fixed_batches_epsilon(..., sensitivity=2)``). An example
    in a known fixed batch joins only one step per epoch, which gives sqrt(epochs) / sigma; the
    T-fold charge is what knowing nothing about the batches costs.

:func:`monte_carlo_one_epoch` audits one epoch's worst-case pair by simulation: it draws the b
noisy outputs under P and Q (shuffled or Poisson), thresholds ``max_t x_t`` at a level chosen
from the exact laws (not from the draws), and turns Clopper-Pearson intervals on the two tail
frequencies into an eps lower bound at delta, ``log((P_lo(E) - delta) / Q_hi(E))``.

Which scheme each paper's public code used is :data:`CODE_SAMPLING`, ours :data:`ENGINE` (sources named).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from dpnotes import claims, validate

SHUFFLE_DISCRETIZATION = 1e-3  # loss grid of the shuffle lower bound (Chua et al.'s default)
SHUFFLE_LOG_TAIL = -40.0  # where the slices start and end: log of N(0)^b's mass beyond each end (kept as a slice)
SHUFFLE_SHIFTS = (2.0, 1.0)  # the means of MoG under P and Q (zero-out pair, module docstring)

# What our engine draws for each paper's private runs (dpnotes/train/sampling.py: poisson_batch,
# the default of TrainConfig.sampling; each experiments module sets "sampling" in its train config).
ENGINE = {
    "dplis": ("poisson", "dpnotes/experiments/dplis/runs.py train config"),
    "dpis": ("poisson", "dpnotes/experiments/dpis/runs.py train config (per-example probabilities for DPIS)"),
    "gdp": ("poisson", "dpnotes/experiments/gdp/runs.py train config"),
    "labeldp": ("not applicable", "dpnotes/experiments/labeldp/runs.py: non-private training on randomized labels, "
                                  "shuffled minibatches (TrainConfig.non_private)"),
    "sadpsgd": ("poisson", "dpnotes/experiments/sadpsgd/runs.py train config"),
}

# What each paper's public code does when it samples batches (REFERENCE.md and research notes).
CODE_SAMPLING = {
    "dplis": ("poisson", "REFERENCE.md 'DPlis (authors' PyTorch code)': exact Poisson sampling, "
                         "Binomial(N, B/N) size then a uniform subset"),
    "dpis": ("unknown", "REFERENCE.md 'DPIS': no code from the authors; the paper's Sec. 4.1 "
                        "describes Poisson (importance-weighted) sampling"),
    "gdp": ("poisson", "REFERENCE.md 'GDP (Bu et al.; TF Privacy research/GDP_2019 ...)': Poisson "
                       "sampling (stated for Adult; its Table 1 is reproduced by the Poisson CLT)"),
    "labeldp": ("not applicable", "REFERENCE.md 'LabelDP': labels are randomized once (RRWithPrior); "
                                  "how batches are drawn carries no privacy cost"),
    "sadpsgd": ("without replacement", "research/audits.md 'Sampling vs accounting': the public "
                                       "SA_DPSGD.py (authorship unconfirmed) draws fixed-size batches "
                                       "without replacement and charges Poisson RDP; REFERENCE.md "
                                       "'SA-DPSGD': no authors' code"),
}


@dataclass(frozen=True)
class Setting:
    """One accounted DP-SGD run: N examples, batch B (q = B/N), noise sigma, T steps (may be
    fractional where the paper's count is epochs * N / B), delta, and b = N // B steps per epoch."""

    paper: str
    run: str
    n: int
    batch_size: int
    sigma: float
    steps: float
    delta: float

    def __post_init__(self):
        validate.integer("n", self.n, minimum=2)
        validate.integer("batch_size", self.batch_size, minimum=1)
        if self.batch_size >= self.n:
            raise ValueError(f"batch_size must be < n, got {self.batch_size} >= {self.n}")
        validate.positive("sigma", self.sigma)
        validate.positive("steps", self.steps)
        validate.probability("delta", self.delta, high_open=True)

    @property
    def q(self) -> float:
        return self.batch_size / self.n

    @property
    def steps_per_epoch(self) -> int:
        return self.n // self.batch_size

    @property
    def dropped(self) -> float:
        """The share of examples that the b batches of an epoch leave out, (N - bB) / N."""
        return (self.n - self.steps_per_epoch * self.batch_size) / self.n

    @property
    def full_epochs(self) -> int:
        """Whole epochs in T steps (what the shuffle lower bound counts)."""
        return int(math.floor(self.steps / self.steps_per_epoch + 1e-9))


# --- per-paper settings (each read from the paper's experiments module) ------------------------

def dplis_settings() -> list[Setting]:
    """DPlis Table 2 (MNIST, CIFAR-10) at its last (largest) eps column: epochs from
    :func:`dpnotes.experiments.dplis.column_epoch`, N // L steps per epoch."""
    from dpnotes.experiments import dplis

    column = dplis.TABLE2_COLUMNS[-1]
    out = []
    for ds in dplis.TABLE2_DATASETS:
        s = dplis.setting(ds)
        steps = dplis.column_epoch(ds, column) * s.steps_per_epoch
        out.append(Setting("dplis", f"{s.label}, Table 2 {column}", s.n, s.batch_size, s.sigma, steps, dplis.DELTA))
    return out


def dpis_settings() -> list[Setting]:
    """DPIS Table 3's DP-SGD-HF cells we run: Tramer and Boneh's batch, our epochs per eps
    (:data:`dpnotes.experiments.dpis.PAPER_EPOCHS`, the paper prints none), sigma calibrated by
    the paper's accountant; T = epochs * N / b."""
    from dpnotes.experiments import dpis

    delta = claims.setting("dpis.setup.delta")
    out = []
    for data, keys in dpis.PAPER_EPSILONS.items():
        n = int(claims.setting(f"dpis.data.{dpis.DATASETS[data]}.n_train"))
        b = dpis.TRAMER_BONEH[data]["batch_size"]
        for key in keys:
            eps = claims.setting(f"dpis.{key}")
            epochs = dpis.PAPER_EPOCHS[eps]
            sigma = dpis.dpsgd_sigma(eps, b, n, epochs, delta)
            out.append(Setting("dpis", f"{data}, Table 3 DP-SGD-HF eps {eps:g}", n, b, sigma, epochs * n / b, delta))
    return out


def gdp_settings() -> list[Setting]:
    """GDP Table 1 rows 1-6 (MNIST): :func:`dpnotes.experiments.gdp.mechanism`."""
    from dpnotes.experiments import gdp

    n, b = int(claims.setting("gdp.mnist.train_size")), int(claims.setting("gdp.mnist.batch_size"))
    out = []
    for i in range(1, 7):
        m = gdp.mechanism(f"table1.row{i}")
        if not math.isclose(m.q, b / n):
            raise ValueError(f"gdp table1.row{i}: q {m.q} is not batch_size / train_size")
        out.append(Setting("gdp", f"MNIST, Table 1 row {i}", n, b, m.sigma, m.steps, m.delta))
    return out


def sadpsgd_settings() -> list[Setting]:
    """SA-DPSGD Table 2 (MNIST, FMNIST, CIFAR-10): T = the accepted steps at which Theorem 1's
    eps reaches Table 2's budget (:func:`dpnotes.experiments.sadpsgd.tau_at`)."""
    from dpnotes.experiments import sadpsgd

    out = []
    for ds in sadpsgd.DATASETS:
        s = sadpsgd.setting(ds)
        out.append(Setting("sadpsgd", f"{ds}, Table 2", int(s["n_train"]), int(s["batch_size"]), s["sigma"],
                           sadpsgd.tau_at(ds), s["delta"]))
    return out


SETTINGS = {"dplis": dplis_settings, "dpis": dpis_settings, "gdp": gdp_settings, "sadpsgd": sadpsgd_settings}


def paper_settings() -> list[Setting]:
    """Every DP-SGD paper's settings (LabelDP trains no DP-SGD: see :data:`CODE_SAMPLING`)."""
    return [s for f in SETTINGS.values() for s in f()]


# --- the four schemes ----------------------------------------------------------------------------

def poisson_epsilon(q: float, sigma: float, steps: float, delta: float) -> float:
    """(a) eps of T Poisson-subsampled Gaussian steps: the registry's ``pld`` upper bound."""
    from dpnotes.accounting.registry import price
    from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent

    ledger = Ledger().append(PoissonSampledDpEvent(q, GaussianDpEvent(sigma)), steps)
    return price(ledger, delta, "pld")["pld"]["epsilon"]


def without_replacement_epsilon(n: int, batch_size: int, sigma: float, steps: float, delta: float) -> float:
    """(b) eps of ceil(T) steps on uniform size-``batch_size`` subsets of ``n``: dp_accounting's
    RDP accountant, replace-one adjacency, Gaussian multiplier sigma/2 (module docstring)."""
    import dp_accounting
    from dp_accounting import rdp

    n = validate.integer("n", n, minimum=2)
    batch_size = validate.integer("batch_size", batch_size, minimum=1)
    if batch_size >= n:
        raise ValueError(f"batch_size must be < n, got {batch_size} >= {n}")
    sigma = validate.positive("sigma", sigma)
    event = dp_accounting.SampledWithoutReplacementDpEvent(n, batch_size, dp_accounting.GaussianDpEvent(sigma / 2))
    acct = rdp.RdpAccountant(neighboring_relation=dp_accounting.NeighboringRelation.REPLACE_ONE)
    acct.compose(event, int(math.ceil(validate.positive("steps", steps))))
    return float(acct.get_epsilon(validate.probability("delta", delta, high_open=True)))


def fixed_batches_epsilon(sigma: float, steps: float, delta: float, sensitivity: float = 1.0) -> float:
    """(d) exact eps of T composed Gaussians of multiplier sigma (mu = sensitivity sqrt(T) / sigma)."""
    from dpnotes.audit.mechanisms import gaussian_epsilon

    mu = validate.positive("sensitivity", sensitivity) * math.sqrt(validate.positive("steps", steps)) \
        / validate.positive("sigma", sigma)
    return gaussian_epsilon(1.0 / mu, delta)


def _log_cdf_max(c: np.ndarray, sigma: float, b: int, shift: float, dropped: float = 0.0) -> np.ndarray:
    """log P(max_t x_t <= c) under MoG(shift) with b positions (module docstring, (c)); with
    probability ``dropped`` the example is in no batch of the epoch (the N - bB examples left
    over by b = N // B batches), and then every position has mean 0."""
    log_mog = stats.norm.logcdf((c - shift) / sigma) + (b - 1) * stats.norm.logcdf(c / sigma)
    if dropped == 0:
        return log_mog
    return np.logaddexp(math.log1p(-dropped) + log_mog, math.log(dropped) + b * stats.norm.logcdf(c / sigma))


def _log_sf_max(c: np.ndarray, sigma: float, b: int, shift: float, dropped: float = 0.0) -> np.ndarray:
    """log P(max_t x_t > c), accurate where it is tiny (the complement of :func:`_log_cdf_max`)."""
    with np.errstate(divide="ignore"):
        log_mog = np.log(-np.expm1(_log_cdf_max(c, sigma, b, shift)))
        if dropped == 0:
            return log_mog
        log_null = np.log(-np.expm1(b * stats.norm.logcdf(c / sigma)))
    return np.logaddexp(math.log1p(-dropped) + log_mog, math.log(dropped) + log_null)


def _log_slices(cuts: np.ndarray, sigma: float, b: int, shift: float, dropped: float) -> np.ndarray:
    """log masses of (-inf, cuts[0]], (cuts[i], cuts[i+1]] and (cuts[-1], inf): from the CDF
    where it is below 1/2, from the survival function above (no cancellation either way)."""
    lf, ls = _log_cdf_max(cuts, sigma, b, shift, dropped), _log_sf_max(cuts, sigma, b, shift, dropped)
    with np.errstate(divide="ignore", invalid="ignore"):
        from_cdf = lf[:-1] + np.log(np.expm1(lf[1:] - lf[:-1]))
        from_sf = ls[1:] + np.log(np.expm1(ls[:-1] - ls[1:]))
    middle = np.where(lf[:-1] < math.log(0.5), from_cdf, from_sf)
    return np.concatenate([[lf[0]], middle, [ls[-1]]])


def _shuffle_epoch_pmf(sigma: float, b: int, dropped: float, discretization: float, log_tail: float) -> dict:
    """The rounded-down privacy-loss PMF (under P) of the sliced statistic max_t x_t for one
    epoch of the shuffle pair, on the grid ``k * discretization``. A slice whose Q-mass
    underflows to 0 is left out (its P-mass dropped: delta only shrinks, the bound stays one)."""
    hi_m, lo_m = SHUFFLE_SHIFTS
    tail = math.exp(log_tail)
    lower = sigma * stats.norm.ppf(math.exp(log_tail / b))  # P(all b below it) = tail under N(0)^b
    upper = hi_m + sigma * stats.norm.isf(-math.expm1(math.log1p(-tail) / b))
    gap = discretization * sigma**2  # the loss (hi-lo)(c - (hi+lo)/2)/sigma^2 moves ~ disc per slice
    cuts = np.arange(lower, upper + gap, gap)
    log_p = _log_slices(cuts, sigma, b, hi_m, dropped)
    log_q = _log_slices(cuts, sigma, b, lo_m, dropped)
    keep = np.isfinite(log_p) & np.isfinite(log_q)
    losses = np.floor((log_p[keep] - log_q[keep]) / discretization).astype(int)
    pmf: dict[int, float] = {}
    for k, mass in zip(losses.tolist(), np.exp(log_p[keep]).tolist()):
        pmf[k] = pmf.get(k, 0.0) + mass
    return pmf


def shuffle_lower_bound(sigma: float, steps_per_epoch: int, epochs: int, delta: float, dropped: float = 0.0,
                        discretization: float = SHUFFLE_DISCRETIZATION) -> float:
    """(c) Chua et al.'s lower bound on eps at ``delta`` of ``epochs`` shuffled epochs of
    ``steps_per_epoch`` batches each (module docstring); 0 when no full epoch is run.
    ``dropped``: the chance that an epoch leaves the example out (N - bB of N left over; a
    partial last batch is covered too, since ignoring its output is a post-processing)."""
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution

    sigma = validate.positive("sigma", sigma)
    b = validate.integer("steps_per_epoch", steps_per_epoch, minimum=1)
    epochs = validate.integer("epochs", epochs, minimum=0)
    delta = validate.probability("delta", delta, high_open=True)
    dropped = validate.probability("dropped", dropped, low_open=False, high_open=True)
    if epochs == 0:
        return 0.0
    pmf = _shuffle_epoch_pmf(sigma, b, dropped, discretization, SHUFFLE_LOG_TAIL - math.log(epochs))
    pld = privacy_loss_distribution.PrivacyLossDistribution(
        pld_pmf.SparsePLDPmf(pmf, discretization, 0.0, pessimistic_estimate=False))
    return float(max(pld.self_compose(epochs).get_epsilon_for_delta(delta), 0.0))


def schemes(s: Setting) -> dict[str, float]:
    """eps of setting ``s`` under (a)-(d) (keys ``poisson``, ``without_replacement``,
    ``shuffle_lower``, ``fixed``)."""
    return {"poisson": poisson_epsilon(s.q, s.sigma, s.steps, s.delta),
            "without_replacement": without_replacement_epsilon(s.n, s.batch_size, s.sigma, s.steps, s.delta),
            "shuffle_lower": shuffle_lower_bound(s.sigma, s.steps_per_epoch, s.full_epochs, s.delta, s.dropped),
            "fixed": fixed_batches_epsilon(s.sigma, s.steps, s.delta)}


TABLE_NOTE = ("Poisson, shuffled and fixed: add/remove (zero-out) adjacency. Without replacement: replace-one "
              "adjacency, multiplier sigma/2 (the clipped sum moves by 2C), so it is not comparable one to one "
              "with the other columns. Shuffled: a lower bound (full epochs only); the others are upper bounds "
              "(fixed: exact).")


def table(settings: list[Setting] | None = None):
    """One row per setting: q, sigma, T, delta, eps under each scheme, the paper's code's scheme, ours."""
    import pandas as pd

    rows = []
    for s in paper_settings() if settings is None else settings:
        eps = schemes(s)
        rows.append({"paper": s.paper, "run": s.run, "q": s.q, "sigma": s.sigma, "T": s.steps, "delta": s.delta,
                     "eps Poisson (PLD)": eps["poisson"],
                     "eps without replacement (RDP, replace-one)": eps["without_replacement"],
                     "eps shuffled (lower bound)": eps["shuffle_lower"], "eps fixed, no amplification": eps["fixed"],
                     "paper's code": CODE_SAMPLING[s.paper][0], "our engine": ENGINE[s.paper][0]})
    return pd.DataFrame(rows)


def code_frame():
    """Which batches each paper's code draws, and ours, with the source of each statement."""
    import pandas as pd

    return pd.DataFrame([{"paper": paper, "paper's code": scheme, "source": source, "our engine": ENGINE[paper][0],
                          "where": ENGINE[paper][1]} for paper, (scheme, source) in CODE_SAMPLING.items()])


# --- one-epoch Monte Carlo audit of the worst-case pair -----------------------------------------

def _tails(c: np.ndarray, sigma: float, b: int, scheme: str) -> tuple[np.ndarray, np.ndarray]:
    """Exact P(max > c) and Q(max > c) of one epoch's worst-case pair under ``scheme``."""
    if scheme == "shuffle":
        hi_m, lo_m = SHUFFLE_SHIFTS
        return -np.expm1(_log_cdf_max(c, sigma, b, hi_m)), -np.expm1(_log_cdf_max(c, sigma, b, lo_m))
    q = 1.0 / b  # Poisson at the shuffle's rate: P = ((1-q) N(0) + q N(1))^b, Q = N(0)^b
    step = np.logaddexp(math.log1p(-q) + stats.norm.logcdf(c / sigma), math.log(q) + stats.norm.logcdf((c - 1) / sigma))
    return -np.expm1(b * step), -np.expm1(b * stats.norm.logcdf(c / sigma))


def _sample_max(rng: np.random.Generator, sigma: float, b: int, shift, count: int, chunk: int = 4096) -> np.ndarray:
    """max_t x_t of ``count`` draws of the b outputs, x = sigma Z + shift-vector from ``shift(rng, k)``."""
    out = np.empty(count)
    for start in range(0, count, chunk):
        k = min(chunk, count - start)
        out[start:start + k] = (sigma * rng.standard_normal((k, b)) + shift(rng, k)).max(axis=1)
    return out


def _one_hot(rng: np.random.Generator, k: int, b: int, value: float) -> np.ndarray:
    x = np.zeros((k, b))
    x[np.arange(k), rng.integers(0, b, size=k)] = value
    return x


def _shifts(scheme: str, b: int):
    """(shift under P, shift under Q) of the simulated outputs."""
    if scheme == "shuffle":
        hi_m, lo_m = SHUFFLE_SHIFTS
        return (lambda r, k: _one_hot(r, k, b, hi_m)), (lambda r, k: _one_hot(r, k, b, lo_m))
    return (lambda r, k: (r.random((k, b)) < 1.0 / b).astype(float)), (lambda r, k: 0.0)


def _eps_of(p: float, q: float, delta: float) -> float:
    """log((p - delta) / q), the eps a test with P(E) = p, Q(E) = q certifies (0 if it certifies none)."""
    return max(math.log((p - delta) / q), 0.0) if p > delta and q > 0 else 0.0


def clopper_pearson(k: int, n: int, confidence: float) -> tuple[float, float]:
    """Two-sided Clopper-Pearson interval of a binomial proportion (each side (1 - confidence)/2)."""
    a = (1 - confidence) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return lo, hi


def monte_carlo_one_epoch(sigma: float, steps_per_epoch: int, delta: float, scheme: str = "shuffle",
                          samples: int = 50_000, confidence: float = 0.95, seed: int = 0) -> dict:
    """Simulate one epoch's worst-case pair under ``scheme`` ("shuffle" or "poisson", rate 1/b)
    and bound eps from below by the test {max_t x_t > c} (module docstring). The threshold c
    maximises the bound the exact laws predict at this sample size, so it does not depend on
    the draws and the intervals hold. Returns c, the exact and simulated tail masses, the exact
    eps of the test, the point estimate and the lower bound at ``confidence``."""
    scheme = validate.choice("scheme", scheme, ("shuffle", "poisson"))
    sigma = validate.positive("sigma", sigma)
    b = validate.integer("steps_per_epoch", steps_per_epoch, minimum=1)
    samples = validate.integer("samples", samples, minimum=100)
    delta = validate.probability("delta", delta, high_open=True)
    grid = np.linspace(0.0, 2.0 + 8 * sigma, 2001)
    pe, qe = (np.clip(t, 0.0, 1.0) for t in _tails(grid, sigma, b, scheme))
    z = stats.norm.isf((1 - confidence) / 2)
    p_lo = pe - z * np.sqrt(pe * (1 - pe) / samples)
    q_hi = qe + z * np.sqrt(qe * (1 - qe) / samples) + 3.0 / samples
    with np.errstate(divide="ignore", invalid="ignore"):
        predicted = np.where(p_lo > delta, np.log((p_lo - delta) / q_hi), 0.0)
    i = int(np.argmax(predicted))
    c = float(grid[i])
    rng = np.random.default_rng(seed)
    shift_p, shift_q = _shifts(scheme, b)
    k_p = int((_sample_max(rng, sigma, b, shift_p, samples) > c).sum())
    k_q = int((_sample_max(rng, sigma, b, shift_q, samples) > c).sum())
    lo_p, _ = clopper_pearson(k_p, samples, confidence)
    _, hi_q = clopper_pearson(k_q, samples, confidence)
    return {"scheme": scheme, "sigma": sigma, "steps_per_epoch": b, "delta": delta, "samples": samples,
            "threshold": c, "p_exact": float(pe[i]), "q_exact": float(qe[i]), "p_hat": k_p / samples,
            "q_hat": k_q / samples, "eps_test_exact": _eps_of(float(pe[i]), float(qe[i]), delta),
            "eps_estimate": _eps_of(k_p / samples, max(k_q, 1) / samples, delta),
            "eps_lower": _eps_of(lo_p, hi_q, delta)}


def one_epoch_gap(sigma: float, steps_per_epoch: int, delta: float, samples: int = 50_000, seed: int = 0) -> dict:
    """One epoch at rate 1/b: the Poisson PLD upper bound beside the exact shuffle lower bound and
    both schemes' Monte Carlo lower bounds (shuffle above the Poisson upper bound = a gap)."""
    b = validate.integer("steps_per_epoch", steps_per_epoch, minimum=1)
    return {"poisson_upper": poisson_epsilon(1.0 / b, sigma, b, delta),
            "shuffle_lower": shuffle_lower_bound(sigma, b, 1, delta),
            "shuffle_mc": monte_carlo_one_epoch(sigma, b, delta, "shuffle", samples, seed=seed),
            "poisson_mc": monte_carlo_one_epoch(sigma, b, delta, "poisson", samples, seed=seed + 1)}



def gap_frame(settings: list[Setting] | None = None, samples: int = 50_000, seed: int = 0):
    """One epoch of the first setting of each paper (b = N // B batches, rate 1/b): the Poisson
    PLD upper bound, the exact shuffle lower bound and both Monte Carlo lower bounds (95 %)."""
    import pandas as pd

    if settings is None:
        settings = [f()[0] for f in SETTINGS.values()]
    rows = []
    for s in settings:
        g = one_epoch_gap(s.sigma, s.steps_per_epoch, s.delta, samples, seed)
        rows.append({"paper": s.paper, "run": s.run, "sigma": s.sigma, "b": s.steps_per_epoch, "delta": s.delta,
                     "Poisson upper (PLD)": g["poisson_upper"], "shuffled lower (exact)": g["shuffle_lower"],
                     "shuffled lower (Monte Carlo)": g["shuffle_mc"]["eps_lower"],
                     "Poisson lower (Monte Carlo)": g["poisson_mc"]["eps_lower"],
                     "gap": g["shuffle_mc"]["eps_lower"] > g["poisson_upper"]})
    return pd.DataFrame(rows)
