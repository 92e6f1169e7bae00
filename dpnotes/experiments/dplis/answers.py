"""Our value for each DPlis claim (:func:`measure`): Tables 2-3's eps columns, Tables 2 and 11's cells and
gains at every column, Table 4's counts, Table 9's sharpness and loss slices, Table 10's spread, from the records.
"""

from __future__ import annotations

import numpy as np

from dpnotes import claims
from dpnotes.experiments import measurement
from dpnotes.experiments.measurement import Measurement
from dpnotes.record import Record

from .cells import _acc_at, _current, dataset_counts, figure3_run
from .privacy import TABLE2_COLUMNS, _eps_column_claim, column_epoch, eps_columns
from .runs import (
    ARMS,
    FIGURE3_R,
    FIGURE3_ROWS,
    ROWS,
    TABLE9_ARMS,
    TABLE9_ROWS,
    TABLE10_ROWS,
    _tag,
    experiment,
    long_run,
    radius,
    run_arm,
    table10_radii,
)
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


def _cell_run(row: str, arm: str, column: str) -> tuple[str, int]:
    """(experiment, epoch) of the run that answers cell (row, arm, column): the eps-1.99 run, or
    the long run of that R (:func:`~.runs.long_run`), read after the column's epoch."""
    if column == "eps1_99":
        return experiment(row, run_arm(row, arm), column), column_epoch(ROWS[row].dataset, column)
    return long_run(row, arm, column)


def _reached(cid: str, records: list[dict], epoch: int) -> tuple[list[dict], str | None, Measurement | None]:
    """The records that reached ``epoch``, a note naming those that stopped earlier (None if none
    did), and, if no record reached it, the ``missing`` measurement that says so (never a number)."""
    short = [r for r in records if _acc_at(r, epoch) is None]
    done = [r for r in records if _acc_at(r, epoch) is not None]
    note = f"record(s) {', '.join(Record.of(r).id for r in short)} stopped before epoch {epoch}" if short else None
    return done, note, (None if done else measurement.missing(cid, f"no record reached epoch {epoch}, the column's "
                                                                  f"epoch: {note}"))


def _join(*notes: str | None) -> str | None:
    return "; ".join(n for n in notes if n) or None


def _cell_claims(paper: dict, quick: dict, column: str) -> list[Measurement]:
    """The ``column`` cells of Tables 2 and 11: each arm's accuracy after the column's epoch and
    each smoothed arm's gain over No, paired by seed. A long column's cell whose run is not stored
    is left out (its not-run reason, with the cost, stands); so is a gain without both arms."""
    out = []
    first = column == "eps1_99"
    for row, r_ in ROWS.items():
        cells = {arm: _cell_run(row, arm, column) for arm in ARMS}
        epoch = cells["no"][1]
        runs = {arm: paper.get(cells[arm][0], []) for arm in ARMS}
        qruns = {arm: quick.get(experiment(row, run_arm(row, arm), column), []) for arm in ARMS} if first else {}
        shared = {arm: _join(f"R_best = R = {radius(row, arm, column):g} at this column: the R = 10 run answers it"
                             if run_arm(row, arm, column) != arm else None,
                             None if first else f"read after epoch {epoch} of {cells[arm][0]}") for arm in ARMS}
        for arm in ARMS:
            cid = f"dplis.{r_.table}.{row}.{column}.acc_{arm}"
            done, short, gone = _reached(cid, runs[arm], epoch)
            if runs[arm]:
                out.append(gone or measurement.training(cid, [_acc_at(r, epoch) for r in done],
                                                        [Record.of(r).id for r in done],
                                                        _join(shared[arm], short and f"{short} (left out)")))
            elif qruns.get(arm):
                quick_run = Record.of(qruns[arm][0])
                acc = quick_run.accuracy()
                out.append(measurement.missing(cid, "paper-profile run not run yet (CPU, tens of minutes)",
                                               f"scaled-down quick run: {acc:.1f}% after "
                                               f"{quick_run.metric('steps')} steps (not comparable)"))
            elif first:
                out.append(measurement.missing(cid, "paper-profile run not run yet (CPU, tens of minutes)"))
            if arm == "no":
                continue
            gid = f"dplis.{r_.table}.{row}.{column}.gain_{arm}"
            smoothed = {Record.of(r).seed: r for r in runs[arm]}
            plain = {Record.of(r).seed: r for r in runs["no"]}
            paired = sorted(set(smoothed) & set(plain))  # paired: the seeds both arms have
            if not paired:
                if first:
                    out.append(measurement.missing(gid, "paper-profile runs (smoothed and No) not run yet"))
                continue
            done, short, gone = _reached(gid, [r for s in paired for r in (smoothed[s], plain[s])], epoch)
            ids = {Record.of(r).id for r in done}
            seeds = [s for s in paired if {Record.of(smoothed[s]).id, Record.of(plain[s]).id} <= ids]
            if not seeds:
                out.append(gone or measurement.missing(gid, f"no seed has both arms at epoch {epoch}: {short}"))
                continue
            out.append(measurement.gain(gid, {s: _acc_at(smoothed[s], epoch) for s in seeds},
                                        {s: _acc_at(plain[s], epoch) for s in seeds},
                                        {s: Record.of(smoothed[s]).id for s in seeds},
                                        _join("difference to the No-smoothing run(s) "
                                              + ", ".join(Record.of(plain[s]).id for s in seeds), shared[arm],
                                              short and f"{short} (left out)"),
                                        base_ids={s: Record.of(plain[s]).id for s in seeds}))
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


_T10_STATS = ("std", "range_width", "range_min", "range_max")


def _stability_claims(paper: dict) -> list[Measurement]:
    """Table 10 (Sec. 5.5): the standard deviation and range of the test accuracy over the five
    runs (seeds 0-4 of the long run to eps 10.00; seed 0 is Table 2's) after eps 5.01 and 10.00's
    epochs, and Sec. 5.5's sentence on them. A cell whose five runs are not all stored is left out
    (its not-run reason, with the cost, stands)."""
    n, out, spread = int(_s("table10.n_runs")), [], {}
    for row in TABLE10_ROWS:
        for r in table10_radii(row):
            exp = f"{ROWS[row].table}.{row}.eps10_00.{_tag(r)}"
            runs = {Record.of(x).seed: x for x in paper.get(exp, [])}
            if sorted(runs) != list(range(n)):
                continue
            rs = [runs[seed] for seed in range(n)]
            for column in ("eps5_01", "eps10_00"):
                epoch, cid = column_epoch(ROWS[row].dataset, column), f"dplis.table10.{row}.{column}.{_tag(r)}"
                short = _reached(cid, rs, epoch)[1]
                if short:
                    out += [measurement.missing(f"{cid}.{stat}", f"Table 10 needs all {n} runs at epoch {epoch}: "
                                                                 f"{short}") for stat in _T10_STATS]
                    continue
                acc = np.array([_acc_at(x, epoch) for x in rs])
                stats = dict(zip(_T10_STATS, (float(np.std(acc)), float(np.ptp(acc)), float(acc.min()),
                                              float(acc.max()))))
                spread[row, column, r] = stats
                basis = (f"{n} runs (seeds 0-{n - 1}) of {exp} after epoch {epoch}: "
                         + ", ".join(f"{a:.2f}" for a in acc) + f" % (mean {acc.mean():.2f})")
                sd = (f"; population SD (ddof 0, numpy's default; the paper does not say which), the sample SD "
                      f"(ddof 1) is {np.std(acc, ddof=1):.3f}")
                out += [measurement.statistic(f"{cid}.{stat}", value, [Record.of(x).id for x in rs],
                                              basis + (sd if stat == "std" else "")) for stat, value in stats.items()]
    if len(spread) < 2 * sum(len(table10_radii(row)) for row in TABLE10_ROWS):
        return out
    cells = [(row, column, r) for row, column, r in spread if r is not None]
    holds = all(spread[c][s] < spread[c[0], c[1], None][s] for c in cells for s in ("std", "range_width"))
    out.append(measurement.statement(
        "dplis.sec5_5.smoothing_reduces_spread", holds,
        "; ".join(f"{row} {column} R = {r:g}: SD {spread[row, column, r]['std']:.3f} vs No "
                  f"{spread[row, column, None]['std']:.3f}, range {spread[row, column, r]['range_width']:.2f} vs No "
                  f"{spread[row, column, None]['range_width']:.2f}" for row, column, r in cells),
        "every smoothed cell of Table 10 has a smaller SD and a narrower range than No's (same row and column)",
        list(dict.fromkeys(i for m in out for i in m.record_ids)), n))
    return out


def _figure3_claim(paper: dict) -> list[Measurement]:
    """Sec. 5.3's 'approximately a unimodal function of R' on Figure 3's image panels: test accuracy
    over our R grid, seed 0, after each eps column's epoch (all runs stored, else left out)."""
    runs = {(row, r): figure3_run(paper, row, r) for row in FIGURE3_ROWS for r in FIGURE3_R}
    if None in runs.values():
        return []
    epochs = {(row, c): column_epoch(ROWS[row].dataset, c) for row in FIGURE3_ROWS for c in TABLE2_COLUMNS}
    curves = {(row, c): [_acc_at(runs[row, r], e) for r in sorted(FIGURE3_R)] for (row, c), e in epochs.items()}
    ids = [Record.of(x).id for x in runs.values()]
    short = [f"{row} {c} (epoch {epochs[row, c]})" for (row, c), v in curves.items() if None in v]
    if short:
        return [measurement.missing("dplis.sec5_3.unimodal_in_r", "a Figure 3 run stopped before the column's "
                                                                   "epoch: " + ", ".join(short))]
    peak = {k: int(np.argmax(v)) for k, v in curves.items()}
    unimodal = {k: all(v[i] <= v[i + 1] for i in range(peak[k])) and
                all(v[i] >= v[i + 1] for i in range(peak[k], len(v) - 1)) for k, v in curves.items()}
    return [measurement.statement(
        "dplis.sec5_3.unimodal_in_r", all(unimodal.values()),
        f"{sum(unimodal.values())} of {len(curves)} curves unimodal; " + "; ".join(
            f"{row} {c}: " + ", ".join(f"{a:.1f}" for a in v) + ("" if unimodal[row, c] else " (not unimodal)")
            for (row, c), v in curves.items()) + " (% at R = " + ", ".join(f"{r:g}" for r in sorted(FIGURE3_R)) + ")",
        "test accuracy rises (non-strictly) over R up to its maximum and falls after it, in every curve of Figure 3's "
        "image panels (four rows x four eps columns, seed 0; the paper: 'approximately unimodal')", ids, 1,
        substitute="Figure 3's image panels only (its Reddit panel needs data not available offline); the R grid "
                   "is ours (the paper prints none)")]


def measure(records: list[dict]) -> list[Measurement]:
    """Our value for every DPlis claim we answer (verdicts: :mod:`dpnotes.report.verdicts`):
    the eps columns of Tables 2-3 and the counts of Table 4 computed directly; from paper-profile
    records of the current configs only, the cells of Tables 2 and 11 (eps 1.99 from its own runs,
    the other columns from the long runs, each read after its column's epoch), Table 9's sharpness
    and Sec. 5.4's sentences on it, Table 10's spread and Sec. 5.5's sentence on it, Figure 3's unimodality."""
    out = [_eps_column_claim(cid, ds) for cid, ds in eps_columns()]
    out += _table4_claims()
    paper = _current(records, "paper")
    quick = _current(records, "quick")
    out += [m for column in TABLE2_COLUMNS for m in _cell_claims(paper, quick, column)]
    return out + _table9_claims(paper) + _stability_claims(paper) + _figure3_claim(paper)
