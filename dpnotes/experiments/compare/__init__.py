"""The comparison study (beyond the papers): the five methods and DP-SGD with a tanh network on
equal footing -- the same data, model, batch, epochs and (eps, delta), each tuned over a declared
search space with the tuning charged (Papernot and Steinke 2022), 3 paired seeds.

Run like a paper (:data:`dpnotes.experiments.STUDIES`): ``dpnotes run compare --profile paper``;
records under ``results/compare/<profile>/``. Modules: ``settings`` (the protocol as data),
``privacy`` (trial releases, calibration, the tuning event), ``runs`` (configs, cost, the CPU/GPU
plan), ``training`` (one run: the trials and the selection), ``answers`` (the comparison, which
refuses a tuned record without its tuning event, and the chapter's answer).
"""

from dpnotes.experiments.compare.answers import TuningNotChargedError, compare, summary
from dpnotes.experiments.compare.runs import configs, estimate_seconds, plan
from dpnotes.experiments.compare.settings import DATA_VERSION, STUDY, TITLE
from dpnotes.experiments.compare.training import execute

PAPER = STUDY

__all__ = ["DATA_VERSION", "PAPER", "STUDY", "TITLE", "TuningNotChargedError", "compare", "configs", "estimate_seconds",
           "execute", "plan", "summary"]
