"""``dpnotes epsilon``: eps of a DP-SGD run (Poisson-subsampled Gaussian) under each accountant.

The run is given by its sampling rate (``--sample-rate``, or ``--batch-size`` and
``--dataset-size``: q = B/N) and length (``--steps``, or ``--epochs``: steps = epochs / q
= epochs * N / B, fractional allowed, as the GDP paper's code; the PRV accountant rounds
it up, as does PLD). ``--accountant`` is any registered accountant that prices a DP-SGD
step (:data:`dpnotes.accounting.accountants.SGM_ACCOUNTANTS`), or ``all`` (rdp,
rdp-classic, clt, pld). Each line says what its number is: a certified upper bound on eps
(rdp, rdp-classic, dpis; pld and prv print the upper bound they certify), an approximation
that may under-state eps (clt), or a paper's unsound accounting (sadpsgd-accepted-only).
``--json`` prints one strict JSON object keyed by accountant name (an infinite eps is ``null``
with ``"non_finite": {"epsilon": "inf"}`` beside it: :mod:`dpnotes.cli.jsonout`).
"""

from __future__ import annotations

import argparse

from dpnotes import validate
from dpnotes.cli import jsonout
from dpnotes.cli.choices import ALL_ACCOUNTANTS, ORDER_NAMES, PLD_DISCRETIZATION, SGM_ACCOUNTANTS

# PLD_DISCRETIZATION is the library's loss grid, so the CLI and `dpnotes.accounting.epsilon` price a
# run alike. Coarser grids certify bounds far above eps (at q 0.01, sigma 1, 1000 steps: 1.83 at
# 1e-3, 1.90 at 1e-2, 3.87 at 0.1, 1498 at 100), so they are refused.
PLD_DISCRETIZATION_MAX = 1e-2
SIGMA_RANGE = (1e-6, 1e6)  # dpnotes.accounting.calibrate.SIGMA_RANGE (tests/test_cli_choices.py)


def noise_multiplier_arg(name: str, value: float) -> float:
    """``value`` as a noise multiplier in :data:`SIGMA_RANGE` (outside it the accountants'
    arithmetic overflows or divides by zero); ``ValueError`` naming ``name`` otherwise."""
    sigma = validate.positive(name, value)
    if not SIGMA_RANGE[0] <= sigma <= SIGMA_RANGE[1]:
        raise ValueError(f"{name} must be in [{SIGMA_RANGE[0]:g}, {SIGMA_RANGE[1]:g}], got {value!r}")
    return sigma


def pld_discretization_arg(value: float) -> float:
    """The PLD loss grid, in (0, :data:`PLD_DISCRETIZATION_MAX`]."""
    h = validate.positive("--pld-discretization", value)
    if h > PLD_DISCRETIZATION_MAX:
        raise ValueError(f"--pld-discretization must be in (0, {PLD_DISCRETIZATION_MAX:g}], got {value!r}: a coarser "
                         "loss grid certifies a bound far above eps (use an rdp accountant for a quick bound)")
    return h


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    """Options shared with ``dpnotes noise``: sampling rate, length, delta, accountant, output."""
    parser.add_argument("--sample-rate", type=float, metavar="Q", help="Poisson sampling rate q in (0, 1]")
    parser.add_argument("--batch-size", type=int, metavar="B", help="expected batch size (q = B/N)")
    parser.add_argument("--dataset-size", type=int, metavar="N", help="training set size (q = B/N)")
    parser.add_argument("--epochs", type=float, metavar="E", help="epochs (steps = E / q)")
    parser.add_argument("--steps", type=float, metavar="T", help="number of steps")
    parser.add_argument("--delta", type=float, required=True, metavar="D", help="delta in (0, 1)")
    parser.add_argument("--orders", choices=ORDER_NAMES, help="RDP orders (default per accountant)")
    parser.add_argument("--json", action="store_true", help="print one JSON object keyed by accountant")


def run_settings(args: argparse.Namespace) -> tuple[float, float]:
    """(q, steps) from the parsed options; ValueError names what is missing or wrong."""
    if args.sample_rate is not None:
        if args.batch_size is not None or args.dataset_size is not None:
            raise ValueError("give either --sample-rate or --batch-size with --dataset-size, not both")
        q = validate.probability("--sample-rate", args.sample_rate)
    elif args.batch_size is not None and args.dataset_size is not None:
        b = validate.integer("--batch-size", args.batch_size, minimum=1)
        n = validate.integer("--dataset-size", args.dataset_size, minimum=1)
        q = validate.probability("--batch-size / --dataset-size", b / n)
    else:
        raise ValueError("give --sample-rate, or both --batch-size and --dataset-size")
    if (args.epochs is None) == (args.steps is None):
        raise ValueError("give exactly one of --epochs and --steps")
    if args.steps is not None:
        return q, validate.positive("--steps", args.steps)
    return q, validate.positive("--epochs", args.epochs) / q


def _meaning(name: str, values: dict[str, float], pld_discretization: float) -> str:
    """What the printed eps is, by the accountant's registered guarantee."""
    from dpnotes.accounting.registry import accountant

    acc = accountant(name)
    if name == "pld":
        return f"certified upper bound (pessimistic PLD, loss grid {pld_discretization:g})"
    if name == "prv":
        return f"certified upper bound (PRV estimate {values['epsilon']:.6g}, lower bound {values['lower']:.6g})"
    if acc.guarantee == "approximation":
        return "approximation, may under-state eps" + "".join(f" ({k} {values[k]:.6g})" for k in ("mu",) if k in values)
    meaning = "upper bound" if acc.guarantee == "upper bound" else f"NOT a DP bound ({acc.description})"
    return meaning + (f" (order {values['order']:.6g})" if "order" in values else "")


def _run(args: argparse.Namespace) -> int:
    from dpnotes.accounting import epsilon
    from dpnotes.accounting.registry import accountant

    q, steps = run_settings(args)
    sigma = noise_multiplier_arg("--noise-multiplier", args.noise_multiplier)
    grid = pld_discretization_arg(args.pld_discretization)
    result = epsilon(q, sigma, steps, args.delta, accountant=args.accountant, orders=args.orders,
                     pld_discretization=grid)
    if args.json:
        print(jsonout.dumps(result))
        return 0
    print(f"q {q:.6g}, sigma {sigma:.6g}, steps {steps:.6g}, delta {args.delta:.3g}")
    print(f"{'accountant':<22} {'epsilon':>12}   meaning")
    for name, values in result.items():
        eps = values[accountant(name).epsilon_key]
        print(f"{name:<22} {eps:>12.6g}   {_meaning(name, values, grid)}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "epsilon",
        help="eps of a DP-SGD run under the RDP, CLT (GDP), PLD and PRV accountants",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_arguments(parser)
    parser.add_argument("--noise-multiplier", type=float, required=True, metavar="S",
                        help=f"sigma in [{SIGMA_RANGE[0]:g}, {SIGMA_RANGE[1]:g}]")
    parser.add_argument(
        "--accountant", choices=SGM_ACCOUNTANTS + ("all",), default="all",
        help=f"accountant (default all = {', '.join(ALL_ACCOUNTANTS)}; prv takes seconds)",
    )
    parser.add_argument(
        "--pld-discretization", type=float, default=PLD_DISCRETIZATION, metavar="H",
        help=f"loss grid of the pld accountant, in (0, {PLD_DISCRETIZATION_MAX:g}] (default {PLD_DISCRETIZATION:g}, "
        "the library's; smaller is tighter and slower, larger faster and looser)",
    )
    parser.set_defaults(func=_run)
