"""The command line's fixed choices, written out so that ``dpnotes --help`` imports nothing heavy.

The accounting package (numpy, scipy, dp_accounting) is imported only when a command runs;
tests/test_cli_choices.py checks that these tuples equal the registry's.
"""

# dpnotes.accounting.accountants.SGM_ACCOUNTANTS: the registered accountants that price a DP-SGD step.
SGM_ACCOUNTANTS = ("rdp", "rdp-classic", "clt", "prv", "pld", "dpis", "sadpsgd-accepted-only")
# dpnotes.accounting.accountants.ACCOUNTANTS: what ``--accountant all`` means.
ALL_ACCOUNTANTS = ("rdp", "rdp-classic", "clt", "pld")
# The keys of dpnotes.accounting.rdp.ORDERS.
ORDER_NAMES = ("integer", "opacus", "tf-compute", "tf-tutorial")
# dpnotes.accounting.pld.DEFAULT_DISCRETIZATION: the PLD loss grid of the library and of `dpnotes epsilon`.
PLD_DISCRETIZATION = 1e-4
