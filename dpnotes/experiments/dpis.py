"""DPIS: the experiments behind DPIS's tables and figures (placeholder).

J. Wei, E. Bao, X. Xiao, Y. Yang. DPIS: An Enhanced Mechanism for Differentially Private SGD with
Importance Sampling. ACM CCS 2022.

No reproduction is implemented yet (see :mod:`dpnotes.experiments.placeholder`): every claim
of the paper is reported as not run, with the reason in :data:`NOT_RUN` where one is known
(data that is not available offline, values the extracted paper text lost).
"""

from __future__ import annotations

from dpnotes.experiments.placeholder import (  # noqa: F401  (the module contract)
    NOT_RUN_DEFAULT, configs, measure, not_run_reasons, unimplemented)

TITLE = (
    "J. Wei, E. Bao, X. Xiao, Y. Yang. "
    "DPIS: An Enhanced Mechanism for Differentially Private SGD with Importance Sampling. ACM CCS 2022."
)

# Claim-id prefixes whose reproduction needs data that is not in the offline mirror.
_OFFLINE = {
    "dpis.table3.imdb": "GloVe vectors (the IMDb model's frozen embedding)",
    "dpis.table4.imdb": "GloVe vectors (the IMDb model's frozen embedding)",
    "dpis.table5.imdb": "GloVe vectors (the IMDb model's frozen embedding)",
    "dpis.table6.imdb": "GloVe vectors (the IMDb model's frozen embedding)",
    "dpis.table7.imdb": "GloVe vectors (the IMDb model's frozen embedding)",
    "dpis.table8.imdb": "GloVe vectors (the IMDb model's frozen embedding)",
    "dpis.sec4_2.noise_drop.imdb": "GloVe vectors (the IMDb model's frozen embedding)",
    "dpis.sec5_4.imdb_gap_2_3": "GloVe vectors (the IMDb model's frozen embedding)",
    "dpis.sec5_5.imdb_grad_norm_range": "GloVe vectors (the IMDb model's frozen embedding)",
}

NOT_RUN = not_run_reasons("dpis", _OFFLINE)
execute = unimplemented("DPIS")
