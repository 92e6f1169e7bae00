"""Why every DPlis claim that :func:`~.answers.measure` does not answer is not run: a table of (claim-id
pattern, reason) rows (:mod:`dpnotes.experiments.not_run`).
"""

from __future__ import annotations

import fnmatch
from functools import lru_cache

from dpnotes import claims
from dpnotes.accounting.rdp import rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp
from dpnotes.experiments import not_run

from .privacy import Setting, column_epoch, eps_columns
from .runs import (
    ARMS,
    FIGURE3_R,
    FIGURE3_ROWS,
    LONG_COLUMNS,
    ROWS,
    TABLE10_ROWS,
    _tag,
    long_configs,
    long_run,
    table10_radii,
)
from .settings import CONVERSION, DELTA, ORDERS, PAPER, _s

# Claim-id patterns whose reproduction needs data that is not in the offline mirror.
_OFFLINE = {
    "dplis.table3.imagenet_cifar100.eps*": "CIFAR-100 and ImageNet-pretrained EfficientNet-b0 weights",
    "dplis.table3.celeba_pubfig83.eps*": "PubFig83 and CelebA",
    "dplis.table3.celeba_celeba1000.eps*": "CelebA",
    "dplis.table4.cifar100.n_train": "CIFAR-100",
    "dplis.table4.cifar100.n_classes": "CIFAR-100",
    "dplis.table4.celeba1000.n_classes": "CelebA",
    "dplis.table5.mlp*": "Reddit comments and the Brown corpus",
    "dplis.table5.lstm*": "Reddit comments and the Brown corpus",
    "dplis.table12*": "SVHN",
    "dplis.table13*": "SVHN",
    "dplis.sec5_2.transfer*": "CIFAR-100, PubFig83, CelebA",
    "dplis.sec5_2.pretrained_comparable*": "CIFAR-100 and ImageNet-pretrained weights",
    "dplis.sec5_2.reddit*": "Reddit comments and the Brown corpus",
    "dplis.sec5_2.lstm*": "Reddit comments and the Brown corpus",
    "dplis.sec5_3.larger_k_better*": "CIFAR-100 and PubFig83 (Figure 4)",
    "dplis.sec5_3.k3_already_helps*": "CIFAR-100 and PubFig83 (Figure 4)",
    "dplis.sec5_7*": "SVHN",
    "dplis.intro.perplexity_reduction*": "Reddit comments and the Brown corpus",
    "dplis.intro.pate_gain*": "SVHN",
}
# What measure() answers whatever the records (values, or "missing" with its own reason).
NOT_RUN_DEFAULT = not_run.DEFAULT
MEASURED = ("dplis.table2.*.eps1_99.*", "dplis.table11.*.eps1_99.*", "dplis.table9.*",
            "dplis.sec5_4.sharpness_smaller", "dplis.sec5_4.flatter_visualization",
            "dplis.table4.mnist.*", "dplis.table4.cifar10.*", "dplis.table4.*.n_train_per_class",
            "dplis.table4.pubfig83.n_train", "dplis.table4.pubfig83.n_classes", "dplis.table4.celeba1000.n_train")


def measured_ids() -> set[str]:
    """The claims :func:`measure` answers (the eps columns and :data:`MEASURED`'s patterns)."""
    columns = {cid for cid, _ in eps_columns()}
    return {c.id for c in claims.load(PAPER)
            if c.id in columns or any(fnmatch.fnmatchcase(c.id, p) for p in MEASURED)}


@lru_cache(maxsize=1)
def _long_configs() -> tuple[dict, ...]:
    """:func:`long_configs`, computed once for the not-run reasons (read, never changed)."""
    return tuple(long_configs())


def _long(rows, radii=None, columns=LONG_COLUMNS) -> list[dict]:
    """The long runs of ``rows`` read at ``columns`` (all radii, or those of ``radii``: arm names)."""
    wanted = {long_run(row, arm, column)[0] for row in rows for column in columns
              for arm in (radii or ARMS)}
    return [c for c in _long_configs() if c["experiment"] in wanted and c["seed"] == 0]


def _table10(rows=TABLE10_ROWS, tags=None) -> list[dict]:
    """Table 10's runs (all five seeds) of ``rows``, of the arms tagged ``tags`` (all: None)."""
    names = {f"{ROWS[row].table}.{row}.eps10_00.{_tag(r)}" for row in rows for r in table10_radii(row)}
    return [c for c in _long_configs() if c["experiment"] in names
            and (tags is None or c["experiment"].rsplit(".", 1)[1] in tags)]


def _figure3() -> list[dict]:
    """Figure 3's runs: Table 2's long runs and the sweep's other radii."""
    return _long(FIGURE3_ROWS) + [c for c in _long_configs() if c["experiment"].startswith("figure3.")]


def not_run_table() -> not_run.Table:
    """(claim-id pattern, reason) for every claim :func:`measure` does not answer."""
    reddit = Setting("reddit", "Reddit", int(_s("setup.reddit_n_train")), int(_s("table1.reddit.batch_size")),
                     _s("table1.reddit.sigma"))
    one_epoch = rdp_to_epsilon(subsampled_gaussian_rdp(reddit.q, reddit.sigma, reddit.steps_per_epoch,
                                                       resolve_orders(ORDERS)),
                               resolve_orders(ORDERS), DELTA, CONVERSION)[0]
    rows = list(not_run.offline(_OFFLINE))
    rows.append(("dplis.table5.col?.epsilon",
                 f"the privacy unit behind q is not given: with N = {reddit.n} training comments, "
                 f"L = {reddit.batch_size} and sigma {reddit.sigma:g}, one epoch already gives eps "
                 f"{one_epoch:.2f}, above every Table 5 column"))
    rows.append(("dplis.sec3_1.fig2_toy_flat_minimum",
                 "the toy's settings (lr, sigma, C, steps, start, K, smoothing scale) are not printed, and which "
                 "part of the claim holds depends on them: the chapter's Figure 2 section shows a grid of ours "
                 "(a finding)"))
    rows.append(("dplis.sec1.fig1_flat_surface",
                 "needs the pretrained ResNet-56 of Li et al.'s loss-surface code (not available offline) and a GPU"))
    rows.append(("dplis.sec5_3.fig5_k_flattens",
                 "needs the pretrained ResNet-56 of Li et al.'s loss-surface code (Figure 5's model; not available "
                 "offline)"))
    # Tables 2 and 11 beyond eps = 1.99: the long runs, read at the column's epoch. These rows and Table 10's,
    # Sec. 5.5's and Figure 3's stand until the runs are stored; measure() answers the claims from then on.
    for row, r_ in ROWS.items():
        for column in LONG_COLUMNS:
            at = f"read after {column_epoch(r_.dataset, column)} epochs"
            for arm in ARMS:
                exp = long_run(row, arm, column)[0]
                rows.append((f"dplis.{r_.table}.{row}.{column}.acc_{arm}",
                             not_run.needs_runs(_long([row], [arm], [column]), f"{exp}, {at}")))
                if arm != "no":
                    rows.append((f"dplis.{r_.table}.{row}.{column}.gain_{arm}",
                                 not_run.needs_runs(_long([row], ["no", arm], [column]),
                                                    f"{exp} and No, {at}")))
    for row in TABLE10_ROWS:
        for r in table10_radii(row):
            rows.append((f"dplis.table10.{row}.*.{_tag(r)}.*",
                         not_run.needs_runs(_table10([row], [_tag(r)]),
                                            "Table 10: 5 seeds to eps 10.00, read at eps 5.01 and 10.00")))
    rows.append(("dplis.sec5_5.smoothing_reduces_spread",
                 not_run.needs_runs(_table10(),
                                    "every cell of Table 10")))
    table2 = [row for row, r_ in ROWS.items() if r_.table == "table2"]
    summary = not_run.needs_runs(_long(table2), "Table 2 to eps 10.00")
    rows += [(f"dplis.sec5_2.nontransfer_{x}", summary) for x in ("gain_*", "dplis_beats_dpsgd")]
    rows.append(("dplis.intro.image_gain.*", f"{summary}; Table 3's transfer tasks need data not available offline"))
    rows.append(("dplis.sec5_2.cifar10_mlp_degrades", not_run.needs_runs(_long(["cifar10_mlp"]), "CIFAR-10 MLP")))
    rows.append(("dplis.sec5_6.tanh_*", not_run.needs_runs(_long(["cifar10_cnn_tanh"]), "Table 11 to eps 10.00")))
    rows.append(("dplis.sec5_4.training_accuracy_degrades",
                 not_run.needs_runs(_long(["cifar10_cnn", "cifar10_mlp"], ["no", "r10"]),
                                    "Figure 7a: CIFAR-10 No and R = 10 to eps 10.00, training accuracy per epoch")))
    grid = ", ".join(f"{r:g}" for r in FIGURE3_R)
    figure3 = not_run.needs_runs(_figure3(), f"Figure 3's R grid {grid} (ours: the paper prints none) on Table 2's "
                                             "rows to eps 10.00")
    rows += [(f"dplis.sec5_3.{c}", figure3) for c in ("unimodal_in_r", "r10_rule_of_thumb")]
    return tuple(rows)


def reasons() -> dict[str, str]:
    """Claim id -> why it is not run, for every claim not measured (``NOT_RUN``)."""
    return not_run.reasons(PAPER, not_run_table(), measured_ids())
