"""The SA-DPSGD chapter's tables, all computed (:mod:`dpnotes.experiments.sadpsgd`): the stopping and
break-even rates, the runs, the acceptance per quarter of training, Table 3, the coverage and the settings.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from dpnotes.experiments import sadpsgd as sa
from dpnotes.record import Record

RATES = (1.0, 2 / 3, 1 / 2, 1 / 3)  # acceptance rates drawn in the figure (plus 1/(mu0+1))


def stopping_frame(tight: bool = True) -> pd.DataFrame:
    """Per dataset: Table 2's q and sigma, tau at the budget, Theorem 1's eps there, and the sound
    eps of the same run at acceptance rate 1/2 and in the worst case (mu0 rejections per accept).
    ``tight`` adds the PLD accountant's worst-case eps (about a second per dataset)."""
    rows = []
    for ds in sa.DATASETS:
        s, tau = sa.setting(ds), sa.tau_at(ds)
        t_max = sa.worst_case_candidates(ds, tau)
        row = {"dataset": ds, "q": s["q"], "sigma": s["sigma"], "mu0": int(s["mu0"]),
               "tau (eps <= budget)": tau, "Thm 1 eps": sa.eps_paper(ds, tau),
               "Thm 1 eps at tau + 1": sa.eps_paper(ds, tau + 1),
               "all candidates, rate 1/2": sa.eps_all(ds, tau, tau),
               "T_max = (mu0+1) tau": t_max,
               "all candidates, T_max": sa.eps_all(ds, tau, t_max - tau)}
        sound = sa.eps_sound(ds, tau, t_max - tau, ("rdp-classic", "rdp") + (("pld",) if tight else ()))
        row.update({f"{name}, T_max": v for name, v in sound.items()})
        rows.append(row)
    return pd.DataFrame(rows).set_index("dataset").round(4)


def break_even_frame() -> pd.DataFrame:
    """Every Table 3 row: SA-DPSGD's printed eps, the lowest printed baseline eps, and the
    acceptance rate above which SA-DPSGD's sound eps is the lower one."""
    rows = [sa.table3_break_even(ds, level) for ds in sa.DATASETS for level in sa.table3_levels(ds)]
    for row in rows:  # the baseline by its name (eps_a: the eps of DP-SGD, AUTO-S)
        row["best_baseline"] = sa.TABLE3_SCHEME.get(row["best_baseline"].removeprefix("eps_"), row["best_baseline"])
    return pd.DataFrame(rows).set_index(["dataset", "level"]).round({"break_even_rate": 3})


def sa_runs(records: list[dict]) -> list[dict]:
    """The paper-profile SA-DPSGD records of Table 1's current configs (stale specs left out),
    each with a test point at every candidate."""
    from dpnotes.experiments import current

    paper = current([r for r in records if Record.of(r).profile == "paper"], sa.configs("paper"))
    return [r for exp, runs in paper.items() if exp.startswith("table1.") for r in runs
            if Record.of(r).method == "sadpsgd" and Record.of(r).train.get("eval_every") == 1]


def _dataset_of(record: dict) -> str:
    return Record.of(record).experiment.split(".")[1]


def runs_frame(records: list[dict]) -> pd.DataFrame:
    """The runs at hand: accuracy, steps, acceptance rate, and eps under Theorem 1 and the
    registry's sound accountants (from each record's ledger, priced when it ended)."""
    rows = []
    for r in map(Record.of, records):
        rows.append({"profile": r.profile, "experiment": r.experiment,
                     "seed": r.seed, "test acc %": sa.accuracy(r.data),
                     "candidates": r.metric("steps"), "accepted": r.metric("accepted_steps"),
                     "acceptance rate": sa.acceptance_rate(r.data),
                     **{f"eps {k}": r.epsilon(k) for k in r.accountants}})
    return pd.DataFrame(rows)


KINDS = ("downhill", "uphill", "forced", "rejected")


def _uphill_by_quarter(decided: list[dict], accepted: int) -> dict:
    """Worse candidates kept by Eq. 3's draw in each quarter of the run's accepted steps, and the
    median Delta E of those in the last quarter."""
    ups = [d for d in decided if d["kind"] == "uphill"]
    quarter = [sum(q * accepted / 4 <= d["tau"] - 1 < (q + 1) * accepted / 4 for d in ups) for q in range(4)]
    late = [d["delta_e"] for d in ups if d["tau"] - 1 >= 3 * accepted / 4]
    return {"uphill by the draw, per quarter of tau": " / ".join(map(str, quarter)),
            "median uphill dE, last quarter": float(np.median(late)) if late else np.nan}


def acceptance_frame(records: list[dict]) -> pd.DataFrame:
    """Per SA-DPSGD paper-profile run: candidates, accepted steps, acceptance rate, how each
    candidate was decided (:func:`dpnotes.experiments.sadpsgd.decisions`), tau at the last
    uphill candidate Eq. 3's draw accepted, Theorem 1's eps and the sound eps of the same run."""
    rows = []
    for r in sa_runs(records):
        ds, rec = _dataset_of(r), Record.of(r)
        decided = sa.decisions(r)
        steps, accepted = rec.metric("steps"), rec.metric("accepted_steps")
        rejected = steps - accepted
        row = {"dataset": ds, "seed": rec.seed, "test acc %": sa.accuracy(r),
               "candidates": steps, "accepted": accepted, "acceptance rate": accepted / steps,
               **{k: sum(d["kind"] == k for d in decided) for k in KINDS},
               "last Eq. 3 uphill accept (tau)": sa.last_uphill(r),
               **_uphill_by_quarter(decided, accepted),
               "Thm 1 eps": rec.epsilon(sa.ACCEPTED_ONLY),
               "all candidates (Thm 1 formula)": sa.eps_all(ds, accepted, rejected),
               **{f"{k} (sound)": v for k, v in sa.eps_sound(ds, accepted, rejected).items()}}
        rows.append(row)
    if not rows:
        return pd.DataFrame()
    frame = pd.DataFrame(rows).set_index(["dataset", "seed"])
    return frame.round({c: 4 for c in frame.columns if c != "median uphill dE, last quarter"})


def table3_frame(records: list[dict]) -> pd.DataFrame:
    """Table 3 from our runs: per dataset and level, the eps at which each scheme's test
    accuracy first reaches the level (mean over seeds; inf = never within its budget), under
    the paper's accounting, SA-DPSGD's sound eps beside it, and the paper's values (registry)."""
    from dpnotes import claims
    from dpnotes.experiments import current

    paper = current([r for r in records if Record.of(r).profile == "paper"], sa.configs("paper"))
    rows = []
    for ds in sa.DATASETS:
        runs = {k: paper.get(sa.table3_run(ds, k), []) for k in sa.TABLE3_SCHEME}
        if not any(runs.values()):
            continue
        for level in sa.table3_levels(ds):
            target = claims.setting(f"sadpsgd.table3.{ds}.{level}.accuracy_level")
            row = {"dataset": ds, "level": target}
            for key, scheme in sa.TABLE3_SCHEME.items():
                row[f"{scheme} (paper)"] = claims.get(f"sadpsgd.table3.{ds}.{level}.eps_{key}").number
                row[f"{scheme} ours"] = sa.level_eps(runs[key], ds, target)
            row["sa_dpsgd ours, sound"] = sa.level_eps(runs["s"], ds, target, "eps_sound")
            rows.append(row)
    return pd.DataFrame(rows).set_index(["dataset", "level"]).round(3) if rows else pd.DataFrame()


def coverage_frame(records: list[dict]) -> pd.DataFrame:
    """Paper-profile runs stored (current configs only) out of those defined, per dataset and seed."""
    from dpnotes.experiments import resolve

    stored = {Record.of(r).id for r in records if Record.of(r).profile == "paper"}
    rows = {}
    for config in sa.configs("paper"):
        ds = config["experiment"].split(".")[1]
        row = rows.setdefault((ds, config["seed"]), {"defined": 0, "stored": 0})
        row["defined"] += 1
        row["stored"] += resolve(config).id in stored
    cells = pd.Series({k: f"{v['stored']} of {v['defined']}" for k, v in rows.items()})
    cells.index.names = ["dataset", "seed"]
    return cells.unstack("seed").rename(columns=lambda seed: f"seed {seed}")


def settings_frame() -> pd.DataFrame:
    """Table 2's settings per dataset."""
    return pd.DataFrame({ds: sa.setting(ds) for ds in sa.DATASETS}).T.rename_axis("dataset")
