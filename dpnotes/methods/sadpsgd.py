"""SA-DPSGD (Fu, Chen, Ling 2022): DP-SGD candidates screened by simulated annealing, Alg. 2.

Each step the engine makes a DP-SGD candidate w_new from the accepted model w_t (Alg. 2
lines 3-9). Its energy is the TEST loss, J(w_new) (line 10; or another set, ``Config.energy``),
and Delta E = J(w_new) - J(w_t) (line 11). The candidate is accepted if U <= P or mu >= mu0
(line 13), with U ~ U(0, 1) and

    P = 1 if Delta E <= 0,   P = exp(-Delta E * Q) if Delta E > 0        (Eq. 3)

On accept: w_{t+1} = w_new, tau += 1, mu = 0 (lines 14-16); on reject: w_{t+1} = w_t,
mu += 1 (lines 18-19; the engine restores the parameters and the optimizer state). After
every step Q = Q0 * tau (line 22). Alg. 2 line 1 starts from tau = mu = 0 and Q = Q0: the first
candidate is judged with Q = Q0, later ones with Q = Q0 * tau, tau counting accepted steps from
0, so while no step has been accepted after the first, Q = 0 and P = 1 (followed literally).

J(w_t) changes only on acceptance, so it is cached: one evaluation of the energy set per
candidate (plus one of w_0 before the first). U comes from the method's own generator
(:mod:`dpnotes.methods._rng`). tau, mu, Q, the cached J and the generator state are the
plug-in state, restored on resume.

Energy set (``Config.energy``, ours): the paper's ``test`` set, or ``validation``: a separate
set given to ``train`` as ``validation_data`` (the chapter sets part of the test set apart, so
that the rest measures accuracy untouched by the selection). With ``validation`` each epoch
record also holds ``energy_loss`` and ``energy_acc``, the model's loss and accuracy on that set,
and the sizes ``energy_n`` and ``test_n`` of the two sets.

Privacy: the energy reads only data outside the training set, which the paper treats as public,
so the decision costs nothing beyond the candidate step itself; the method writes no event. An
energy set drawn from private training examples would be used without noise: the guarantee
covers only the training set, so it must not be. The loop
writes each step as ``CandidateStepDpEvent(event, accepted)``: sound accountants charge every
candidate, ``sadpsgd-accepted-only`` prices the paper's Theorem 1 (accepted steps only, not a
sound bound; :mod:`dpnotes.accounting.sadpsgd`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import torch

from dpnotes import validate
from dpnotes.methods._rng import method_generator
from dpnotes.train import Plugin

VERSION = 1
ENERGY_SPLITS = ("test", "validation")
LATER_FIELDS = {"energy": "test"}  # field -> default: left out of resolved specs when default


@dataclass(frozen=True)
class Config:
    """SA-DPSGD settings (Sec. 3.1-3.2, Alg. 2; Table 2).

    Q0   initial temperature (>= 0); Q = Q0 * tau multiplies Delta E in Eq. 3, so a larger
         Q0 rejects worse candidates more often; Q0 = 0 accepts every step (DP-SGD).
         Table 2: 10.
    mu0  rejection threshold (integer >= 1): after mu0 consecutive rejections the next
         candidate is accepted anyway (Alg. 2 line 13). ``math.inf`` or None: never forced
         (stored as None, since run specs are JSON without inf). Table 2: 10 (MNIST,
         Fashion-MNIST), 5 (CIFAR-10).
    energy  the set J is the mean loss on: "test" (Alg. 2 line 10) or "validation" (the
         set given to ``train`` as ``validation_data``, never private training data; ours).
    """

    Q0: float = 10.0
    mu0: int | None = 10
    energy: str = "test"

    def __post_init__(self):
        object.__setattr__(self, "Q0", validate.nonnegative("Q0", self.Q0))
        if self.mu0 is None or (isinstance(self.mu0, float) and self.mu0 == math.inf):
            object.__setattr__(self, "mu0", None)
        else:
            validate.integer("mu0", self.mu0, minimum=1)
        validate.choice("energy", self.energy, ENERGY_SPLITS)


def resolve(settings: dict) -> dict:
    d = dataclasses.asdict(Config(**settings))
    return {k: v for k, v in d.items() if k not in LATER_FIELDS or v != LATER_FIELDS[k]}


def hooks(config: Config) -> tuple:
    return (SADPSGD(config),)


def acceptance_probability(delta_e: float, Q: float) -> float:
    """P of Eq. 3: 1 if Delta E <= 0, else exp(-Delta E * Q) (1 when Q = 0, even for an
    infinite Delta E)."""
    return 1.0 if delta_e <= 0 or Q == 0 else math.exp(-delta_e * Q)


class SADPSGD(Plugin):
    """The ``accept_step`` hook of SA-DPSGD (module docstring)."""

    name = "sadpsgd"

    def __init__(self, config: Config):
        if not isinstance(config, Config):
            raise ValueError(f"config must be a sadpsgd.Config, got {type(config).__name__}")
        self.config = config
        self.tau = self.mu = 0
        self.Q = config.Q0
        self.J: float | None = None
        self.generator: torch.Generator | None = None
        self._restored: dict | None = None

    def on_train_start(self, ctx) -> None:
        if self.config.energy == "test" and ctx.test_targets is None:
            raise ValueError("SA-DPSGD's energy is the test loss (Alg. 2 line 10): test_data must be given")
        if self.config.energy == "validation" and ctx.validation_targets is None:
            raise ValueError("energy='validation' judges candidates on a set of its own: "
                             "validation_data must be given")
        self.generator = method_generator(ctx.config.seed, self.name)
        state = self._restored or {"tau": 0, "mu": 0, "Q": self.config.Q0, "J": None,
                                   "generator": self.generator.get_state()}
        self._restored = None
        self.tau, self.mu, self.Q, self.J = state["tau"], state["mu"], state["Q"], state["J"]
        self.generator.set_state(state["generator"].cpu())

    def decide(self, delta_e: float) -> bool:
        """Alg. 2 line 13 at the current state: U <= P(Delta E, Q) (Eq. 3) or mu >= mu0.
        Draws U from the method's generator; changes no other state."""
        u = float(torch.rand((), generator=self.generator, dtype=torch.float64))
        forced = self.config.mu0 is not None and self.mu >= self.config.mu0
        return u <= acceptance_probability(delta_e, self.Q) or forced

    def accept_step(self, ctx, old_params, new_params, evaluate) -> bool:
        if self.J is None:
            self.J = float(evaluate(old_params, self.config.energy))  # J(w_0), once
        j_new = float(evaluate(new_params, self.config.energy))
        accepted = self.decide(j_new - self.J)
        if accepted:  # lines 14-16
            self.J, self.tau, self.mu = j_new, self.tau + 1, 0
        else:  # line 19
            self.mu += 1
        self.Q = self.config.Q0 * self.tau  # line 22
        return accepted

    def on_epoch_end(self, ctx, record: dict) -> dict | None:
        if self.config.energy == "test":
            return None  # the epoch's test metrics are the energy set's
        metrics = ctx.evaluate(split=self.config.energy)
        return {"energy_loss": metrics["loss"], "energy_acc": metrics["acc"],
                "energy_n": len(ctx.validation_targets),
                "test_n": None if ctx.test_targets is None else len(ctx.test_targets)}

    def state_dict(self) -> dict:
        return {"tau": self.tau, "mu": self.mu, "Q": self.Q, "J": self.J,
                "generator": self.generator.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self._restored = dict(state)
