"""Bu, Dong, Long, Su: Deep Learning with Gaussian Differential Privacy (HDSR 2020).

The runs behind Tables 1-4 and Figure 4, and the accounting behind Tables 1-4, Figures 2-3
and the Appendix A figure (see :mod:`dpnotes.report.gdp` for the chapter's tables
and plots). Every paper number is read from the claims registry (``dpnotes/claims/gdp.toml``).

Accounting as in the paper's code (REFERENCE.md, "Accounting"): Poisson subsampling at rate
q = B/n, ``steps = epochs * n / B`` (fractional), delta 1e-5 (1e-6 for MovieLens). The
"CLT" columns are mu-GDP by the privacy CLT (Eq. 5) converted with Eq. 6; the "MA" columns
are the moments accountant: RDP with TF Privacy's tutorial orders and the classic conversion.

Profiles: ``paper`` = the paper's settings (Table 1 at three seeds); ``quick`` = the same
q, sigma, eta and R but only a few dozen steps per run (scaled down: never compared with the
paper's accuracies); ``smoke`` = a few steps on a few hundred examples (CI).
MovieLens-1M is not available offline; MovieLens-100k runs as a labelled substitute.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from dpnotes import claims, validate
from dpnotes.accounting.calibrate import noise_multiplier
from dpnotes.accounting.gdp import epsilon_from_mu, mu_poisson
from dpnotes.accounting.prv import prv_epsilon
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.accounting.registry import price
from dpnotes.accounting.tradeoff import (
    composed_subsampled_gaussian_tradeoff,
    epsdelta_tradeoff,
    gaussian_tradeoff,
    min_error_sum,
)
from dpnotes.data import prepare
from dpnotes.experiments import gdp_data, measurement, not_run
from dpnotes.experiments.gdp_data import ML_SUBSTITUTE
from dpnotes.experiments.measurement import Measurement
from dpnotes.ledger import GaussianDpEvent, Ledger, PoissonSampledDpEvent
from dpnotes.record import Record, add_final
from dpnotes.results import PROFILES

TITLE = ("Z. Bu, J. Dong, Q. Long, W. J. Su. Deep Learning with Gaussian Differential Privacy. "
         "Harvard Data Science Review, 2020.")
PAPER = "gdp"
MA_ORDERS = "tf-tutorial"  # TF Privacy's MNIST tutorial orders, classic conversion
MA_ACCOUNTANT = "rdp-classic"  # the registry's accountant with exactly those orders and conversion
# delta of Tables 3 and 4: not in the extracted text; registered from the authors' code
# (REFERENCE.md: 1e-5 for IMDb, 1e-6 for MovieLens), which reproduces the printed eps.
# Adult: not stated either ("delta < 1/n" only); 1e-5 is our choice, not a paper value.
ADULT_DELTA = 1e-5
DELTA = {"mnist": claims.setting("gdp.mnist.delta"), "adult": ADULT_DELTA,
         "imdb": claims.setting("gdp.table3.delta"), "movielens": claims.setting("gdp.table4.delta")}
ALPHA = np.linspace(0.0, 1.0, 2001)  # type I error grid of the trade-off curves (plots)
# min_alpha alpha + f(alpha) on a grid over-estimates by up to |f'| * spacing (e^eps * spacing
# for f_eps,delta): a fine grid keeps that below 1e-4 for the paper's eps.
ALPHA_FINE = np.linspace(0.0, 1.0, 400_001)
SEEDS = {"paper": (0, 1, 2), "quick": (0,), "smoke": (0,)}
DATA_VERSION = gdp_data.VERSION
METHOD_VERSIONS = {"baseline": gdp_data.BASELINE_VERSION}  # Table 4's non-DP recommenders

NOT_RUN_DEFAULT = not_run.DEFAULT
NOT_RUN_TABLE = (
    ("gdp.table4.*.rmse",
     "MovieLens-1M is not available offline; the MovieLens-100k substitute is shown in the chapter"),
)
NOT_RUN = not_run.reasons(PAPER, NOT_RUN_TABLE)


def _s(name: str) -> float:
    return claims.setting(f"gdp.{name}")


# --------------------------------------------------------------------------------------
# The mechanisms as the paper accounts them.

@dataclass(frozen=True)
class Mechanism:
    """T Poisson-subsampled Gaussian steps: rate q, noise multiplier sigma, delta; priced as a
    one-entry ledger by the accountant registry (the same accountants that price run records)."""

    q: float
    sigma: float
    steps: float
    delta: float

    @property
    def ledger(self) -> Ledger:
        """The paper's T (fractional: epochs * n / B) steps as a ledger."""
        return Ledger().append(PoissonSampledDpEvent(self.q, GaussianDpEvent(self.sigma)), self.steps)

    @property
    def mu(self) -> float:
        """mu of the privacy CLT (Bu et al., Eq. 5)."""
        return price(self.ledger, self.delta, "clt")["clt"]["mu"]

    @property
    def eps_clt(self) -> float:
        """eps(delta; mu) of mu-GDP (Eq. 6)."""
        return price(self.ledger, self.delta, "clt")["clt"]["epsilon"]

    @property
    def eps_ma(self) -> float:
        """The moments accountant's eps (TF Privacy before 2020: tutorial orders, classic)."""
        return price(self.ledger, self.delta, MA_ACCOUNTANT)[MA_ACCOUNTANT]["epsilon"]

    def eps_prv(self) -> tuple[float, float, float]:
        """A tight accountant's (estimate, lower, upper) eps (PRV, Gopi et al. 2021), to within
        0.5% of the MA eps or 0.01, whichever is larger (finer is slow at large eps)."""
        return _prv(self.q, self.sigma, self.steps, self.delta, max(0.01, self.eps_ma / 200))


@lru_cache(maxsize=None)
def _prv(q, sigma, steps, delta, eps_error) -> tuple[float, float, float]:
    return tuple(prv_epsilon(q, sigma, steps, delta, eps_error=eps_error))


@lru_cache(maxsize=None)
def rdp_per_step(q: float, sigma: float) -> np.ndarray:
    """RDP of one step at the MA orders (cached: RDP composes linearly in the steps)."""
    return subsampled_gaussian_rdp(q, sigma, 1, resolve_orders(MA_ORDERS))


def ma_epsilons(q: float, sigma: float, steps, delta: float) -> list[float]:
    """Moments-accountant eps after each entry of ``steps`` (RDP is linear in T): the
    ``rdp-classic`` accountant's computation, vectorised over T for the figures' curves."""
    orders = resolve_orders(MA_ORDERS)
    return [rdp_to_epsilon(t * rdp_per_step(q, sigma), orders, delta, "classic")[0] for t in steps]


def _mnist(sigma: float, epochs: float) -> Mechanism:
    b, n = _s("mnist.batch_size"), _s("mnist.train_size")
    return Mechanism(b / n, sigma, epochs * n / b, DELTA["mnist"])


def table1_row(i: int) -> dict:
    """Settings of Table 1, row ``i`` (1-6): eta, clip R, sigma, epochs."""
    validate.integer("i", i, minimum=1)
    if i > 6:
        raise ValueError(f"i must be in 1..6 (Table 1 has six rows), got {i}")
    return {k: _s(f"table1.row{i}.{k}") for k in ("eta", "clip", "sigma", "epochs")}


@lru_cache(maxsize=None)
def adult_epochs() -> int:
    """Our choice for Table 2, whose epochs are lost in the extracted text: the most epochs
    that keep mu_CLT <= 2, the budget the paper states for Tables 2-4."""
    q = _s("table2.batch_size") / _s("table2.train_size")
    per_epoch = _s("table2.train_size") / _s("table2.batch_size")
    epochs = 1
    while mu_poisson(q, _s("table2.sigma"), (epochs + 1) * per_epoch) <= _s("table2.mu_budget"):
        epochs += 1
    return epochs


SIGMA_DIGITS = 4  # a calibrated sigma in a run config: the smallest 4-digit one meeting the budget


@lru_cache(maxsize=None)
def figure4_sigma_clt(part: str, digits: int | None = SIGMA_DIGITS) -> float:
    """sigma~ of Figure 4 (``part`` "top" or "bottom"): the noise at which the CLT gives the
    moments accountant's eps of sigma_MA at the same epoch (Eqs. 7-8), by calibration. The
    runs use the smallest sigma of ``digits`` significant digits whose CLT eps is at most it;
    ``digits=None``: the root itself (to 1e-6), the number the paper prints."""
    ma = mechanism(f"figure4.{validate.choice('part', part, ('top', 'bottom'))}.ma")
    return noise_multiplier(ma.eps_ma, ma.q, ma.steps, ma.delta, accountant="clt", digits=digits)


def mechanism(name: str) -> Mechanism:
    """How the paper accounts the run ``name`` (an experiment name such as ``table1.row2``)."""
    if name.startswith("table1.row"):
        row = table1_row(int(name.removeprefix("table1.row")))
        return _mnist(row["sigma"], row["epochs"])
    if name == "table2.private":
        b, n = _s("table2.batch_size"), _s("table2.train_size")
        return Mechanism(b / n, _s("table2.sigma"), adult_epochs() * n / b, DELTA["adult"])
    if name == "table3.private":
        b, n = _s("table3.batch_size"), _s("table3.train_size")
        return Mechanism(b / n, _s("table3.sigma"), _s("table3.private.epochs") * n / b, DELTA["imdb"])
    if name == "table4.private":
        k = _s("table4.sample_rate_inverse")
        return Mechanism(1 / k, _s("table4.sigma"), _s("table4.epochs") * k, DELTA["movielens"])
    if name in ("figure4.top.ma", "figure4.bottom.ma"):
        part = name.split(".")[1]
        return _mnist(_s(f"figure4.{part}.sigma_ma"), _s(f"figure4.{part}.epochs"))
    if name in ("figure4.top.clt", "figure4.bottom.clt"):
        part = name.split(".")[1]
        return _mnist(figure4_sigma_clt(part), _s(f"figure4.{part}.epochs"))
    raise ValueError(f"no accounted mechanism named {name!r}")


TABLE_MODELS = tuple(f"table1.row{i}" for i in range(1, 7)) + (
    "table2.private", "table3.private", "table4.private")
PRIVATE_MODELS = TABLE_MODELS + ("figure4.top.ma", "figure4.top.clt", "figure4.bottom.ma",
                                 "figure4.bottom.clt")


# --------------------------------------------------------------------------------------
# Run configs.

def _train(epochs, batch_size, lr, optimizer, clip, sigma, delta, **extra) -> dict:
    return {"epochs": epochs, "batch_size": batch_size, "lr": lr, "optimizer": optimizer,
            "clip": clip, "noise_multiplier": sigma, "sampling": "poisson",
            "normalize": "expected", "steps_per_epoch": "round", "delta": delta, **extra}


def _nonprivate(epochs, batch_size, lr, optimizer) -> dict:
    return {"epochs": epochs, "batch_size": batch_size, "lr": lr, "optimizer": optimizer,
            "private": False, "clip": None, "noise_multiplier": 0.0, "sampling": "shuffle",
            "accountants": [], "steps_per_epoch": "floor"}  # fixed batches: at most n // B


# How each profile scales a run down: epochs, steps per epoch (None: n/B) and data subsets.
SCALE = {
    "paper": {"epochs": None, "steps": None, "train": None, "test": None},
    "quick": {"epochs": 1, "steps": 40, "train": None, "test": 2000},
    "smoke": {"epochs": 1, "steps": 2, "train": 512, "test": 256},
}
# Table 3's LSTM-RNN baseline (Bu et al. Sec. 4.1, ref. [1]): TensorFlow's text-classification
# RNN tutorial trains it with Adam at lr 1e-4 on batches of 64 (not paper numbers: the tutorial's).
TF_RNN_TUTORIAL = {"lr": 1e-4, "batch_size": 64}
FIGURE4_QUICK_EPOCHS = 3  # quick Figure 4 runs: a short accuracy/eps curve
SMOKE_BATCH = 64


def _config(profile, experiment, seed, model, dataset, train, *, model_kwargs=None, method="dpsgd"):
    scale = SCALE[profile]
    train = dict(train)
    if scale["epochs"] is not None and method != "baseline":
        epochs = FIGURE4_QUICK_EPOCHS if experiment.startswith("figure4") and profile == "quick" else 1
        train.update(epochs=min(train["epochs"], epochs), steps_per_epoch=scale["steps"])
    if profile == "smoke" and method != "baseline":
        train["batch_size"] = SMOKE_BATCH  # q = 64/512 on the smoke subsets
    if profile == "paper" and train.get("noise_multiplier"):
        train["accountants"] = ["rdp", "rdp-classic", "clt", "prv"]  # prv: at the end only
    return {"paper": PAPER, "profile": profile, "experiment": experiment, "seed": seed,
            "model": model, "model_kwargs": model_kwargs or {}, "dataset": dataset,
            "subset": {"train": scale["train"], "test": scale["test"]}, "method": method,
            "train": {**train, "seed": seed} if method != "baseline" else train}


def _mnist_train(eta, clip, sigma, epochs) -> dict:
    return _train(int(epochs), int(_s("mnist.batch_size")), eta, "sgd", clip, sigma, DELTA["mnist"])


def configs(profile: str) -> list[dict]:
    """The run configs of ``profile``, seed-major so that one full seed completes first:
    Table 1 (rows by increasing epochs) for every seed; then Adult, IMDb and MovieLens-100k
    (seed 0 of each, then the further seeds of Adult and IMDb); then Figure 4."""
    validate.choice("profile", profile, PROFILES)
    seeds = SEEDS[profile]
    rows = sorted(range(1, 7), key=lambda i: table1_row(i)["epochs"])
    out = [_config(profile, f"table1.row{i}", seed, "tf-mnist-cnn", "mnist",
                   _mnist_train(**{k: table1_row(i)[k] for k in ("eta", "clip", "sigma", "epochs")}))
           for seed in seeds for i in rows]
    imdb = {"vocab_size": int(_s("table3.num_words")), "seq_len": int(_s("table3.maxlen"))}

    def adult(seed):
        return _config(profile, "table2.private", seed, "gdp-adult", "adult",
                       _train(adult_epochs(), int(_s("table2.batch_size")), _s("table2.eta"), "sgd",
                              _s("table2.clip"), _s("table2.sigma"), DELTA["adult"]))

    def imdb_private(seed):
        return _config(profile, "table3.private", seed, "gdp-imdb", "imdb",
                       _train(int(_s("table3.private.epochs")), int(_s("table3.batch_size")),
                              _s("table3.eta"), "adam", _s("table3.clip"), _s("table3.sigma"),
                              DELTA["imdb"]), model_kwargs=imdb)

    out += [adult(seeds[0]), imdb_private(seeds[0])]

    def imdb_nonprivate(seed):
        # The paper gives only the epochs; we keep NoisyAdam's lr and batch size.
        return _config(profile, "table3.nonprivate", seed, "gdp-imdb", "imdb",
                       _nonprivate(int(_s("table3.nonprivate.epochs")), int(_s("table3.batch_size")),
                                   _s("table3.eta"), "adam"), model_kwargs=imdb)

    def figure4(seed):
        runs = []
        for part in ("top", "bottom"):
            for acc in ("ma", "clt"):
                sigma = _s(f"figure4.{part}.sigma_ma") if acc == "ma" else figure4_sigma_clt(part)
                train = _mnist_train(_s("figure4.eta"), _s("figure4.clip"), sigma,
                                     _s(f"figure4.{part}.epochs"))
                # Each run tracks the accountant it was calibrated with (plus the others).
                runs.append(_config(profile, f"figure4.{part}.{acc}", seed, "tf-mnist-cnn", "mnist", train))
        return runs

    out.append(imdb_nonprivate(seeds[0]))
    out += _movielens_configs(profile, seeds[0])
    out += [make(seed) for seed in seeds[1:] for make in (adult, imdb_private)]
    out += figure4(seeds[0])
    # The further seeds of the cheap runs first, then of Figure 4 (about 50 CPU-min a seed).
    out += [imdb_nonprivate(seed) for seed in seeds[1:]]
    out += [c for seed in seeds[1:] for c in _movielens_configs(profile, seed, baselines=False)]
    out += [c for seed in seeds[1:] for c in figure4(seed)]
    # Appended last, so that no earlier config moves: Table 3's LSTM baseline, every seed.
    out += [_config(profile, "table3.lstm", seed, "tf-text-rnn", "imdb",
                    _nonprivate(int(_s("table3.lstm.epochs")), TF_RNN_TUTORIAL["batch_size"],
                                TF_RNN_TUTORIAL["lr"], "adam"), model_kwargs=imdb)
            for seed in seeds]
    return out


def _movielens_configs(profile: str, seed: int, *, baselines: bool = True) -> list[dict]:
    """MovieLens-100k substitute runs: NeuMF private and not at ``seed``, and (``baselines``)
    the deterministic non-private baselines (:data:`gdp_data.BASELINES`; quick: the global
    average only)."""
    n_train = gdp_data.movielens_split_sizes()[0]
    batch = round(n_train / _s("table4.sample_rate_inverse"))  # q = 1/80 as in the paper
    epochs = int(_s("table4.epochs"))
    sizes = dict(zip(("num_users", "num_items"), prepare.movielens_sizes()))
    out = [_config(profile, "table4.private", seed, "neumf", ML_SUBSTITUTE,
                   _train(epochs, batch, _s("table4.eta"), "adam", _s("table4.clip"),
                          _s("table4.sigma"), DELTA["movielens"]), model_kwargs=sizes),
           _config(profile, "table4.nonprivate", seed, "neumf", ML_SUBSTITUTE,
                   _nonprivate(epochs, batch, _s("table4.eta"), "adam"), model_kwargs=sizes)]
    if not baselines:
        return out
    # The library baselines need the optional scikit-surprise: paper profile only.
    names = gdp_data.BASELINES if profile == "paper" else ("global_average",)
    out += [_config(profile, f"table4.{b}", 0, b, ML_SUBSTITUTE, {"epochs": 1}, method="baseline")
            for b in names]
    return out


# --------------------------------------------------------------------------------------
# Execution.

def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Run one resolved spec (see :func:`configs`); returns ``{"epochs", "final", "privacy"}``."""
    from dpnotes.experiments import train_spec
    from dpnotes.ledger import Ledger, NonPrivateDpEvent

    train_data, test_data = gdp_data.load(spec.dataset, spec.subset)
    if spec.method == "baseline":
        rmse = gdp_data.baseline_rmse(spec.model, train_data, test_data)
        library = {} if spec.model == "global_average" else {
            "library": f"scikit-surprise {gdp_data.surprise_version()}"}
        ledger = Ledger()
        ledger.append(NonPrivateDpEvent())
        return {"epochs": [], "final": {"test_rmse": rmse, **library},
                "privacy": {"private": False, "delta": None, "ledger": ledger.to_json(), "epsilon": {}}}
    from dpnotes.train.rating_metrics import rmse_plugin

    extra = (rmse_plugin(*test_data),) if spec.model == "neumf" else ()
    out = train_spec(spec, train_data, test_data, device=device, progress=progress, checkpoint=checkpoint,
                     extra_plugins=extra)
    if spec.model == "neumf":
        add_final(out, test_rmse=out["epochs"][-1]["test_rmse"])
    return out


# --------------------------------------------------------------------------------------
# Evaluation: our answer to every claim.

def current_runs(records: list[dict], profile: str) -> dict[str, list[dict]]:
    """Records of the current configs of ``profile``, by experiment (stale configs ignored)."""
    from dpnotes.experiments import current

    return current(records, configs(profile))


def _exact_claims() -> list[Measurement]:
    out = []
    for name in TABLE_MODELS:
        m = mechanism(name)
        for field, value in (("mu", m.mu), ("eps_clt", m.eps_clt), ("eps_ma", m.eps_ma)):
            out.append(measurement.exact(f"gdp.{name}.{field}", value))
    for part in ("top", "bottom"):
        out.append(measurement.exact(f"gdp.figure4.{part}.eps", mechanism(f"figure4.{part}.ma").eps_ma))
        out.append(measurement.exact(f"gdp.figure4.{part}.mu", mechanism(f"figure4.{part}.clt").mu))
        out.append(measurement.exact(f"gdp.figure4.{part}.sigma_clt", figure4_sigma_clt(part, digits=None)))
    for acc, value in min_errors(mechanism("table1.row2")).items():
        out.append(measurement.exact(f"gdp.figure3.row2.min_error_{acc}", 100 * value))
    # Section 4.1 computes e^eps from the eps printed in Table 1, row 3.
    row3 = mechanism("table1.row3")
    for acc, eps in (("ma", row3.eps_ma), ("clt", row3.eps_clt)):
        printed = round(eps, claims.get(f"gdp.table1.row3.eps_{acc}").decimals)
        out.append(measurement.exact(f"gdp.section4.likelihood_ratio_{acc}", math.exp(printed),
                                     f"exp({printed}) from our Table 1 row 3"))
    return out


def min_errors(m: Mechanism, mu: float | None = None) -> dict[str, float]:
    """Smallest sum of type I and II errors (Section 4.1, Figure 3) under mu-GDP ("clt"; the
    mechanism's mu unless ``mu`` is given) and under the MA's (eps, delta) ("ma")."""
    a = ALPHA_FINE
    return {"clt": min_error_sum(a, gaussian_tradeoff(m.mu if mu is None else mu, a)),
            "ma": min_error_sum(a, epsdelta_tradeoff(m.eps_ma, m.delta, a))}


FIGURE2_EPOCHS = np.r_[1:10, 10:101:5]


@lru_cache(maxsize=None)
def figure2_curves() -> dict[float, tuple[np.ndarray, np.ndarray]]:
    """eps_CLT and eps_MA after each of ``FIGURE2_EPOCHS`` at every Table 1 noise level."""
    out = {}
    for sigma in sorted({table1_row(i)["sigma"] for i in range(1, 7)}):
        m = _mnist(sigma, 1)
        steps = FIGURE2_EPOCHS * m.steps
        clt = np.array([epsilon_from_mu(mu_poisson(m.q, sigma, t), m.delta) for t in steps])
        out[sigma] = clt, np.array(ma_epsilons(m.q, sigma, steps, m.delta))
    return out


@lru_cache(maxsize=1)
def appendix_a_curves() -> dict[str, np.ndarray]:
    """Appendix A: (p G_{1/sigma} + (1-p) Id)^{(x)T} composed numerically at T = 234 with p
    enlarged so that p sqrt(T) (hence mu) equals Table 1 row 2's, against G_mu; and, beyond
    the paper, the same composition at the real T of row 2 (14,063 steps)."""
    row2 = mechanism("table1.row2")
    t = _s("appendixA.steps")
    p = row2.q * math.sqrt(row2.steps / t)
    return {"alpha": ALPHA, "clt": gaussian_tradeoff(row2.mu, ALPHA),
            "numeric": composed_subsampled_gaussian_tradeoff(p, row2.sigma, t, ALPHA),
            "numeric_full": composed_subsampled_gaussian_tradeoff(row2.q, row2.sigma, row2.steps, ALPHA)}


def _statement_claims() -> list[Measurement]:
    curves = figure2_curves()
    worst = max(float((clt - ma).max()) for clt, ma in curves.values())
    out = [measurement.statement(
        "gdp.figure2.clt_below_ma", worst < 0, f"max eps_CLT - eps_MA = {worst:.3f}",
        "eps_CLT < eps_MA at every Table 1 sigma, epochs 1-9 and 10-100 in steps of 5")]
    a = appendix_a_curves()
    gap = float(np.abs(a["numeric"] - a["clt"]).max())
    out.append(measurement.statement("gdp.appendixA.clt_close", gap <= 0.03,
                                     f"max |f - G_mu| = {gap:.4f}", "largest vertical gap <= 0.03"))
    ma, clt = mechanism("figure4.top.ma"), mechanism("figure4.top.clt")
    budget_epoch = _s("figure4.top.epochs")
    steps = np.arange(1, int(budget_epoch)) * ma.steps / budget_epoch  # after epochs 1..19
    eps_ma = ma_epsilons(ma.q, ma.sigma, steps, ma.delta)
    eps_clt = [epsilon_from_mu(mu_poisson(clt.q, clt.sigma, t), clt.delta) for t in steps]
    margin = float(min(np.array(eps_ma) - np.array(eps_clt)))
    out.append(measurement.statement("gdp.figure4.top.clt_less_eps_before_20", margin > 0,
                                     f"min eps_MA - eps_CLT = {margin:.3f}",
                                     "eps_CLT(sigma~) < eps_MA(sigma) at every epoch before the 20th"))
    return out


def accuracy(record: dict, epoch: dict | None = None) -> float:
    """Test accuracy in percent of a run record, at its end or at one of its ``epoch`` entries."""
    return Record.of(record).accuracy(epoch)


def _scaled_down(claim_id: str, quick: list[dict], describe) -> Measurement:
    """A training claim without a paper-profile record; quick runs are described, never compared."""
    if not quick:
        return measurement.missing(claim_id, "no run record")
    return measurement.missing(claim_id, "paper-profile run missing",
                               f"scaled-down quick run: {describe(quick)} (not comparable)")


def _training_claim(claim_id: str, paper: list[dict], quick: list[dict], value, describe,
                    why_none: str | None = None) -> Measurement:
    """``value(record)`` of each paper-profile record; ``None`` where a run never produced one,
    and then ``why_none`` (formatted with their number ``n``) says why. Without paper-profile
    records: the scaled-down ``quick`` ones, described by ``describe``."""
    if not paper:
        return _scaled_down(claim_id, quick, describe)
    values = [value(r) for r in paper]
    n = values.count(None)
    return measurement.training(claim_id, values, [Record.of(r).id for r in paper],
                                why_none.format(n=n) if n and why_none else None)


def _first_epoch(record: dict, threshold: float) -> float | None:
    return next((e["epoch"] for e in Record.of(record).epochs if accuracy(record, e) >= threshold), None)


EPS_KEY = {"ma": "rdp-classic", "clt": "clt"}  # the accountant each Figure 4 run is read with


def _acc_at_eps(record: dict, acc: str, budget: float) -> float | None:
    return Record.of(record).accuracy_at_eps(budget, EPS_KEY[acc])


FIGURE4_EPOCHS_TO = ("epochs_to_95", "epochs_to_96", "epochs_to_97")  # claim-id suffixes


def figure4_target(name: str) -> float:
    """The test accuracy (%) the claims ``gdp.figure4.bottom.{ma,clt}.<name>`` count epochs to."""
    return _s(f"figure4.bottom.{validate.choice('name', name, FIGURE4_EPOCHS_TO)}.target")


def _figure4_claims(paper: dict, quick: dict) -> list[Measurement]:
    out = []
    budget = _s("figure4.bottom.acc_at_eps4.budget")
    for acc in ("ma", "clt"):
        runs, qruns = paper.get(f"figure4.bottom.{acc}", []), quick.get(f"figure4.bottom.{acc}", [])
        for name in FIGURE4_EPOCHS_TO:
            target = figure4_target(name)
            out.append(_training_claim(
                f"gdp.figure4.bottom.{acc}.{name}", runs, qruns,
                lambda r, t=target: _first_epoch(r, t),
                lambda rs: f"best {max(accuracy(r, e) for r in rs for e in Record.of(r).epochs):.1f}% in "
                           f"{Record.of(rs[0]).train['epochs']} short epoch(s)",
                f"{{n}} run(s) never reached {target:g}%"))
        out.append(_training_claim(f"gdp.figure4.bottom.{acc}.acc_at_eps4", runs, qruns,
                                   lambda r, a=acc: _acc_at_eps(r, a, budget),
                                   lambda rs: f"{accuracy(rs[0]):.1f}% at the end",
                                   f"eps exceeds {budget:g} after the first epoch"))
    out.append(_compare_runs("gdp.figure4.bottom.clt_faster", paper, "bottom", _faster, 1.0,
                             "per seed: min over 95/96/97% of (MA epochs - CLT epochs) > 0"))
    out.append(_compare_runs("gdp.figure4.top.clt_more_accurate", paper, "top", _more_accurate, 0.0,
                             "per seed: mean over epochs of (CLT accuracy - MA accuracy) > 0"))
    return out


def _reached(record: dict, target: float) -> float:
    """Epoch at which ``record`` first reaches ``target``%; one past its end if never (censored)."""
    first = _first_epoch(record, target)
    return Record.of(record).last_epoch["epoch"] + 1 if first is None else first


def _faster(ma: dict, clt: dict) -> tuple[list[float], str]:
    """Per seed: the smallest, over the targets, of MA's minus CLT's epochs to the target."""
    per_seed, text = [], []
    for seed in sorted(ma):
        gaps = [(_reached(clt[seed], figure4_target(n)), _reached(ma[seed], figure4_target(n)))
                for n in FIGURE4_EPOCHS_TO]
        per_seed.append(min(m - c for c, m in gaps))
        text.append(f"seed {seed}: " + ", ".join(f"{figure4_target(n):g}%: {c:g} vs {m:g}"
                                                  for n, (c, m) in zip(FIGURE4_EPOCHS_TO, gaps)))
    return per_seed, "epochs CLT vs MA, " + "; ".join(text)


def _more_accurate(ma: dict, clt: dict) -> tuple[list[float], str]:
    """Per seed: the mean over epochs of CLT's minus MA's test accuracy (points)."""
    per_seed, text = [], []
    for seed in sorted(ma):
        gap = np.array([accuracy(clt[seed], e) for e in Record.of(clt[seed]).epochs]) - np.array(
            [accuracy(ma[seed], e) for e in Record.of(ma[seed]).epochs])
        per_seed.append(float(gap.mean()))
        text.append(f"seed {seed}: {gap.mean():+.2f} points, ahead at {100 * (gap > 0).mean():.0f}% of epochs")
    return per_seed, "CLT minus MA accuracy, " + "; ".join(text)


def _compare_runs(claim_id: str, paper: dict, part: str, compare, floor: float, rule: str) -> Measurement:
    """A trend between the MA and CLT runs of ``part``, paired by seed (seeds with both runs)."""
    ma = {Record.of(r).seed: r for r in paper.get(f"figure4.{part}.ma", [])}
    clt = {Record.of(r).seed: r for r in paper.get(f"figure4.{part}.clt", [])}
    seeds = sorted(set(ma) & set(clt))
    if not seeds:
        return measurement.missing(claim_id, "paper-profile runs missing")
    per_seed, text = compare({s: ma[s] for s in seeds}, {s: clt[s] for s in seeds})
    return measurement.trend(claim_id, per_seed, floor, text, rule,
                             [Record.of(r).id for s in seeds for r in (ma[s], clt[s])])


def _final_acc_text(rs: list[dict]) -> str:
    return f"{np.mean([accuracy(r) for r in rs]):.1f}% after {Record.of(rs[0]).metric('steps')} steps"


def measure(records: list[dict]) -> list[Measurement]:
    """Our value for every GDP claim we answer (verdicts: :mod:`dpnotes.report.verdicts`): the
    accounting claims computed directly, training claims from paper-profile records of the
    current configs only."""
    paper, quick = current_runs(records, "paper"), current_runs(records, "quick")
    out = _exact_claims() + _statement_claims()
    trained = [f"table1.row{i}" for i in range(1, 7)] + ["table2.private", "table3.private",
                                                         "table3.nonprivate", "table3.lstm"]
    for name in trained:
        out.append(_training_claim(f"gdp.{name}.accuracy", paper.get(name, []),
                                   quick.get(name, []), accuracy, _final_acc_text))
    return out + _figure4_claims(paper, quick)
