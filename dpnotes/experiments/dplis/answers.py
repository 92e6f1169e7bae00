"""Our value for each DPlis claim (:func:`measure`): Tables 2-3's cells and gains, Table 4's counts, Table
9's sharpness and loss slices, from the records.
"""

from __future__ import annotations

import numpy as np

from dpnotes import claims
from dpnotes.experiments import measurement
from dpnotes.experiments.measurement import Measurement
from dpnotes.record import Record

from .cells import _acc_at, _current, dataset_counts
from .privacy import _eps_column_claim, column_epoch, eps_columns
from .runs import ARMS, ROWS, TABLE9_ARMS, TABLE9_ROWS, experiment, radius, run_arm
from .settings import _s

# Table 4: the data sets' counts.
_T4_OFFLINE = {"cifar100": "CIFAR-100", "pubfig83": "PubFig83", "celeba1000": "CelebA"}


def _table4_claims() -> list[Measurement]:
    out = []
    for name in ("mnist", "cifar10"):
        try:
            n, m = dataset_counts(name)
        except FileNotFoundError as err:
            out += [measurement.missing(f"dplis.table4.{name}.{f}", f"data not available: {err}")
                    for f in ("n_train", "n_classes", "n_train_per_class")]
            continue
        basis = f"counted on the {name} training labels"
        out += [measurement.exact(f"dplis.table4.{name}.n_train", n, basis),
                measurement.exact(f"dplis.table4.{name}.n_classes", m, basis),
                measurement.exact(f"dplis.table4.{name}.n_train_per_class", n / m, basis)]
    # Offline data sets: only arithmetic on the paper's own counts (never a check of the data).
    for name, label in _T4_OFFLINE.items():
        n, m = (claims.get(f"dplis.table4.{name}.{f}").number for f in ("n_train", "n_classes"))
        out.append(measurement.exact(
            f"dplis.table4.{name}.n_train_per_class", n / m,
            f"arithmetic only: N_train / M of the paper's own Table 4 row ({label} is offline)"))
    out.append(measurement.exact(
        "dplis.table4.pubfig83.n_train", int(_s("setup.pubfig83_n_images") - _s("setup.pubfig83_n_test")),
        "arithmetic only: Section 5.1's image count minus its test-set size (PubFig83 offline)"))
    out.append(measurement.exact(
        "dplis.table4.pubfig83.n_classes", _s("setup.pubfig83_n_test") / _s("setup.pubfig83_test_per_identity"),
        "arithmetic only: Section 5.1's test-set size / test images per identity (PubFig83 offline)"))
    out.append(measurement.exact(
        "dplis.table4.celeba1000.n_train",
        int(_s("setup.celeba1000_n_identities") * _s("setup.celeba1000_images_per_identity")
            - _s("setup.celeba1000_n_test")),
        "arithmetic only: Section 5.1's identities x images per identity minus its test-set size (CelebA offline)"))
    return out


def _cell_claims(paper: dict, quick: dict) -> list[Measurement]:
    """The eps = 1.99 cells of Tables 2 and 11: each arm's accuracy and each smoothed arm's
    gain over No, paired by seed."""
    out = []
    for row, r_ in ROWS.items():
        column = "eps1_99"
        epoch = column_epoch(r_.dataset, column)
        runs = {arm: paper.get(experiment(row, run_arm(row, arm), column), []) for arm in ARMS}
        qruns = {arm: quick.get(experiment(row, run_arm(row, arm), column), []) for arm in ARMS}
        shared = {arm: (f"R_best = R = {radius(row, arm, column):g} at this column: the R = 10 run answers it"
                        if run_arm(row, arm, column) != arm else None) for arm in ARMS}
        for arm in ARMS:
            cid = f"dplis.{r_.table}.{row}.{column}.acc_{arm}"
            if runs[arm]:
                values = [_acc_at(r, epoch) for r in runs[arm]]
                out.append(measurement.training(cid, values, [Record.of(r).id for r in runs[arm]],
                                                f"no record reached epoch {epoch}" if None in values else shared[arm]))
            elif qruns[arm]:
                quick_run = Record.of(qruns[arm][0])
                acc = quick_run.accuracy()
                out.append(measurement.missing(cid, "paper-profile run not run yet (CPU, tens of minutes)",
                                               f"scaled-down quick run: {acc:.1f}% after "
                                               f"{quick_run.metric('steps')} steps (not comparable)"))
            else:
                out.append(measurement.missing(cid, "paper-profile run not run yet (CPU, tens of minutes)"))
            if arm == "no":
                continue
            gid = f"dplis.{r_.table}.{row}.{column}.gain_{arm}"
            smoothed = {Record.of(r).seed: r for r in runs[arm]}
            plain = {Record.of(r).seed: r for r in runs["no"]}
            seeds = sorted(set(smoothed) & set(plain))  # paired: the seeds both arms have
            if not seeds:
                out.append(measurement.missing(gid, "paper-profile runs (smoothed and No) not run yet"))
                continue
            out.append(measurement.gain(gid, {s: _acc_at(smoothed[s], epoch) for s in seeds},
                                        {s: _acc_at(plain[s], epoch) for s in seeds},
                                        {s: Record.of(smoothed[s]).id for s in seeds},
                                        "difference to the No-smoothing run(s) " +
                                        ", ".join(Record.of(plain[s]).id for s in seeds) +
                                        (f"; {shared[arm]}" if shared[arm] else "")))
    return out


_TABLE9_RUN = ("paper-profile run not run yet (Table 9's models: a Table 2 eps-1.99 run plus the analysis, "
               "1-70 CPU-min each; `dpnotes run dplis --profile paper --only 'table9.*'`)")


def _slice_rise(record: dict) -> float:
    """Mean test-loss increase over Figure 6's slice (alpha != 0) above the loss at theta."""
    sl = Record.of(record).metric("analysis")["slice"]
    base = sl["loss"][sl["alpha"].index(min(sl["alpha"], key=abs))]
    return float(np.mean([v - base for a, v in zip(sl["alpha"], sl["loss"]) if a != 0]))


def _table9_claims(paper: dict) -> list[Measurement]:
    """Table 9's sharpness of each model, and Section 5.4's two sentences on all four rows."""
    out, runs = [], {}
    for row in TABLE9_ROWS:
        for arm in TABLE9_ARMS:
            cid = f"dplis.table9.{row}.sharpness_{arm}"
            rs = paper.get(f"table9.{row}.eps1_99.{arm}", [])
            runs[row, arm] = rs
            if not rs:
                out.append(measurement.missing(cid, _TABLE9_RUN))
                continue
            sh = [Record.of(r).metric("analysis")["sharpness"] for r in rs]
            out.append(measurement.training(
                cid, [v["sharpness"] for v in sh], [Record.of(r).id for r in rs],
                f"the eps-1.99 model ({len(Record.of(rs[0]).epochs)} epochs; the paper does not say which checkpoint "
                f"Table 9 measures); L-BFGS-B, at most {sh[0]['maxiter']} iterations ({sh[0]['evaluations']} loss "
                f"evaluations), on {sh[0]['examples']:,} fixed training examples (ours); loss {sh[0]['loss']:.4f} -> "
                f"{sh[0]['max_loss']:.4f}"
                + (f"; the box's gradient-sign corner alone gives {sh[0]['corner_sharpness']:.4g}"
                   if "corner_sharpness" in sh[0] else "")))
    ids = [Record.of(r).id for rs in runs.values() for r in rs]
    if not all(runs.values()):
        return out + [measurement.missing(c, _TABLE9_RUN) for c in ("dplis.sec5_4.sharpness_smaller",
                                                                    "dplis.sec5_4.flatter_visualization")]
    sharpness = {k: [Record.of(r).metric("analysis")["sharpness"] for r in rs] for k, rs in runs.items()}
    sharp = {k: float(np.mean([v["sharpness"] for v in vs])) for k, vs in sharpness.items()}
    corner = {k: [v.get("corner_sharpness") for v in vs] for k, vs in sharpness.items()}
    corner = {k: float(np.mean(v)) for k, v in corner.items() if None not in v}
    corner_rows = [row for row in TABLE9_ROWS if (row, "no") in corner and (row, "r10") in corner]
    corner_note = (f"; the gradient-sign corner (a lower bound of the same maximum) puts R = 10 below No in "
                   f"{sum(corner[row, 'r10'] < corner[row, 'no'] for row in corner_rows)} of {len(corner_rows)} rows"
                   if corner_rows else "")
    out.append(measurement.statement(
        "dplis.sec5_4.sharpness_smaller", all(sharp[row, "r10"] < sharp[row, "no"] for row in TABLE9_ROWS),
        "; ".join(f"{row}: No {sharp[row, 'no']:.4g}, R = 10 {sharp[row, 'r10']:.4g}"
                  + (f" ({100 * (sharp[row, 'r10'] / sharp[row, 'no'] - 1):+.1f}%)" if sharp[row, "no"] > 0 else "")
                  for row in TABLE9_ROWS) + corner_note,
        "sharpness with R = 10 below No's in every row of Table 9 (the eps-1.99 models; paper: 'always smaller')",
        ids, min(len(rs) for rs in runs.values())))
    rise = {k: float(np.mean([_slice_rise(r) for r in rs])) for k, rs in runs.items()}
    flatter = sum(rise[row, "r10"] < rise[row, "no"] for row in TABLE9_ROWS)
    out.append(measurement.statement(
        "dplis.sec5_4.flatter_visualization", 2 * flatter > len(TABLE9_ROWS),
        f"R = 10 flatter in {flatter} of {len(TABLE9_ROWS)} rows; " + "; ".join(
            f"{row}: mean test-loss rise over the slice No {rise[row, 'no']:.3f}, R = 10 {rise[row, 'r10']:.3f}"
            for row in TABLE9_ROWS),
        "mean test-loss rise over Figure 6's filter-normalised slice (alpha in [-0.8, 0.8], one direction) smaller "
        "with R = 10 than with No in most of Table 9's rows (the paper: 'tends to be flatter', three settings shown)",
        ids, min(len(rs) for rs in runs.values())))
    return out


def measure(records: list[dict]) -> list[Measurement]:
    """Our value for every DPlis claim we answer (verdicts: :mod:`dpnotes.report.verdicts`):
    the eps columns of Tables 2-3 and the counts of Table 4 computed directly; the eps = 1.99
    cells of Tables 2 and 11, Table 9's sharpness and Sec. 5.4's sentences on it from
    paper-profile records of the current configs only."""
    out = [_eps_column_claim(cid, ds) for cid, ds in eps_columns()]
    out += _table4_claims()
    paper = _current(records, "paper")
    return out + _cell_claims(paper, _current(records, "quick")) + _table9_claims(paper)
