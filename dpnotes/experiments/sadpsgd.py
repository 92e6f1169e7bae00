"""SA-DPSGD: the experiments behind SA-DPSGD's tables and figures (placeholder).

J. Fu, Z. Chen, X. Ling. SA-DPSGD: Differentially Private Stochastic Gradient Descent based on Simulated
Annealing. 2022.

No reproduction is implemented yet (see :mod:`dpnotes.experiments.placeholder`): every claim
of the paper is reported as not run, with the reason in :data:`NOT_RUN` where one is known
(data that is not available offline, values the extracted paper text lost).
"""

from __future__ import annotations

from dpnotes.experiments.placeholder import (  # noqa: F401  (the module contract)
    NOT_RUN_DEFAULT, configs, measure, not_run_reasons, unimplemented)

TITLE = (
    "J. Fu, Z. Chen, X. Ling. "
    "SA-DPSGD: Differentially Private Stochastic Gradient Descent based on Simulated Annealing. 2022."
)

# Claim-id prefixes whose reproduction needs data that is not in the offline mirror (all of
# SA-DPSGD's datasets, MNIST, Fashion-MNIST and CIFAR-10, are in it).
_OFFLINE: dict[str, str] = {}

NOT_RUN = not_run_reasons("sadpsgd", _OFFLINE)
execute = unimplemented("SA-DPSGD")
