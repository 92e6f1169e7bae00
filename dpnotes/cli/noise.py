"""``dpnotes noise``: the smallest noise multiplier meeting a target eps for a DP-SGD run.

Takes the run options of ``dpnotes epsilon`` (sampling rate, steps or epochs, delta).
The result always satisfies eps(sigma) <= target under the chosen accountant (for
``prv``, its upper bound); ``--accountant`` is one of the DP-SGD accountants of
``dpnotes epsilon`` or ``all``. ``--json`` prints ``{accountant: {"noise_multiplier": ...,
"epsilon": ...}}``.
"""

from __future__ import annotations

import argparse

from dpnotes import validate
from dpnotes.cli import jsonout
from dpnotes.cli.choices import SGM_ACCOUNTANTS
from dpnotes.cli.epsilon import add_run_arguments, run_settings


def _run(args: argparse.Namespace) -> int:
    from dpnotes.accounting import epsilon, noise_multiplier
    from dpnotes.accounting.accountants import accountant_names
    from dpnotes.accounting.registry import accountant

    q, steps = run_settings(args)
    target = validate.positive("--target-epsilon", args.target_epsilon)
    result = {}
    for name in accountant_names(args.accountant):
        sigma = noise_multiplier(target, q, steps, args.delta, accountant=name, orders=args.orders,
                                 tol=1e-6 if accountant(name).cheap else 1e-3)
        spent = epsilon(q, sigma, steps, args.delta, accountant=name, orders=args.orders)[name]
        result[name] = {"noise_multiplier": sigma, "epsilon": spent[accountant(name).epsilon_key]}
    if args.json:
        print(jsonout.dumps(result))
        return 0
    print(f"target eps {target:.6g}, q {q:.6g}, steps {steps:.6g}, delta {args.delta:.3g}")
    print(f"{'accountant':<12} {'sigma':>12} {'epsilon':>12}")
    for name, values in result.items():
        print(f"{name:<12} {values['noise_multiplier']:>12.6g} {values['epsilon']:>12.6g}")
    return 0


def register(subparsers) -> None:
    parser = subparsers.add_parser(
        "noise",
        help="calibrate the noise multiplier of a DP-SGD run to a target eps",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_run_arguments(parser)
    parser.add_argument("--target-epsilon", type=float, required=True, metavar="EPS", help="eps > 0")
    parser.add_argument(
        "--accountant", choices=SGM_ACCOUNTANTS + ("all",), default="rdp",
        help="accountant (default rdp; prv and pld take tens of seconds)",
    )
    parser.set_defaults(func=_run)
