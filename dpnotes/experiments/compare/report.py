"""What the comparison chapter shows (``notebooks/compare.ipynb``): the protocol, the price of
tuning, the plan with its cost, and the records' comparison with its answer. Every number comes
from the settings, the accountants, the cost model or the records; none is typed in."""

from __future__ import annotations

import math

from dpnotes.experiments.compare import answers, privacy, runs
from dpnotes.experiments.compare import settings as S


def records(profile: str, store=None) -> list[dict]:
    """The stored records of the comparison at ``profile`` (every one checked by :func:`answers.check`)."""
    from dpnotes.results import Store

    out = list((store or Store()).records(S.STUDY, profile))
    for r in out:
        answers.check(r)
    return out


def shown_profile(profile: str, store=None) -> str:
    """``paper`` once any paper-profile record exists, else the chapter's own ``profile``."""
    return "paper" if records("paper", store) else profile


def answer(profile: str, store=None) -> str:
    """The chapter's opening paragraph (:func:`answers.summary`) from the shown profile's records."""
    return answers.summary(records(shown_profile(profile, store), store), runs.plan("paper"))


QUESTION = "Which method should I train with, at my ε, and at what cost?"


def answer_box(profile: str, store=None) -> str:
    """The chapter's opening as the book's answer box (``.what-held``, as every chapter opens): the
    question and :func:`answer` in words."""
    from html import escape

    return ('<div class="what-held dpn-held" data-paper="compare" style="border:1px solid #d0d7de;'
            'border-radius:6px;padding:.6em .9em;margin:.6em 0">'
            f'<p class="dpn-question"><strong>{escape(QUESTION)}</strong></p>'
            f'<p class="dpn-answer">{escape(answer(profile, store))}</p></div>')


def protocol_frame():
    """One row per method: its search space, and the knobs fixed because they shape its releases."""
    import pandas as pd

    rows = []
    for m in S.METHODS:
        space = S.search_space(m, "mnist")
        rows.append({"method": S.LABELS[m], "search space (MNIST)": "; ".join(
            f"{k} in {{{', '.join(f'{v:g}' for v in vs)}}}" for k, vs in space.items()),
            "paper default": ", ".join(f"{k} {v:g}" for k, v in S.paper_defaults(m, "mnist").items())})
    return pd.DataFrame(rows)


def tuning_frame(profile: str = "paper", dataset: str = "mnist"):
    """The price of tuning per eps for DP-SGD: the noise of one untuned run and of a tuned one whose
    whole tuning meets the target, and the eps of one trial of the tuned run."""
    import pandas as pd

    from dpnotes.accounting.registry import price

    sh = privacy.shape(profile, dataset)
    rows = []
    for eps in S.EPSILONS:
        tuned = privacy.noise("dpsgd", eps, sh, tuned=True)
        trial = privacy.trial_ledger("dpsgd", tuned, sh["q"], sh["steps_per_epoch"], sh["epochs"])
        rows.append({"target eps": eps, "sigma, one untuned run": privacy.noise("dpsgd", eps, sh, tuned=False),
                     "sigma, tuned": tuned,
                     "eps of one trial": round(price(trial, S.DELTA, S.ACCOUNTANT)[S.ACCOUNTANT]["epsilon"], 3)})
    return pd.DataFrame(rows)


def plan_frame(where: str | None = None):
    """The plan per data set and model: runs, training runs with the trials, CPU-h and GPU-h, where."""
    import pandas as pd

    rows: dict = {}
    for r in runs.plan("paper"):
        if where is not None and r["where"] != where:
            continue
        key = (r["cell"].rsplit(".", 2)[0], r["where"])
        row = rows.setdefault(key, {"data, model": key[0], "where": key[1], "runs": 0, "training runs": 0,
                                    "CPU-h": 0.0, "GPU-h": 0.0})
        row["runs"] += r["runs"]
        row["training runs"] += r["trials"]
        row["CPU-h"] += r["cpu_h"]
        row["GPU-h"] += r["gpu_h"]
    frame = pd.DataFrame(list(rows.values()))
    return frame.round({"CPU-h": 1, "GPU-h": 2})


def results_frame(profile: str, store=None):
    """The comparison's rows (:func:`answers.compare`), or one line saying nothing has run yet."""
    import pandas as pd

    rows = answers.compare(records(shown_profile(profile, store), store))
    if not rows:
        return pd.DataFrame([{"comparison": "no tuned record stored yet: nothing to compare"}])

    def interval(d):
        return "" if d is None or math.isnan(d[1]) else f"{d[0]:+.2f} [{d[1]:+.2f}, {d[2]:+.2f}]"

    return pd.DataFrame([{"data": r["dataset"], "model": r["model"], "eps": r["eps"], "method": r["label"],
                          "seeds": r["seeds"], "accuracy %": round(r["acc"], 2),
                          "vs tuned DP-SGD (points, 95 %)": interval(r["diff"]),
                          "untuned %": None if r["default_acc"] is None else round(r["default_acc"], 2),
                          "eps (rdp, tuning included)": round(r["epsilon"], 3),
                          "trial bound": "/".join(sorted(r["trial_bound"])),
                          "CPU s per tuned run": None if r["seconds"] is None else round(r["seconds"])}
                         for r in rows])
