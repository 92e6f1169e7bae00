"""`--help` shows terminal text, not the reST of the subcommands' docstrings."""

import re

import pytest

from dpnotes.cli import SUBCOMMANDS, build_parser, main, plain

MARKUP = re.compile(r":[a-z]+:`|``|\*\*|(?<![\w`])`[^`\n]+`")


def _parsers(parser, prefix=()):
    """(argv prefix, parser) for the parser and every subparser below it."""
    yield prefix, parser
    for action in parser._actions:
        choices = action.choices if isinstance(action.choices, dict) else {}
        for name, sub in choices.items():
            yield from _parsers(sub, (*prefix, name))


def test_every_help_is_free_of_rest_markup(capsys):
    seen = 0
    for argv, _ in _parsers(build_parser()):
        with pytest.raises(SystemExit):
            main([*argv, "--help"])
        out = capsys.readouterr().out
        assert not MARKUP.search(out), (argv, MARKUP.search(out).group(0))
        seen += 1
    assert seen > len(SUBCOMMANDS)  # the subcommands and their actions (data pack, results verify, ...)


def test_the_docstrings_do_have_markup_to_strip():
    from dpnotes.cli import epsilon

    assert MARKUP.search(epsilon.__doc__) and not MARKUP.search(plain(epsilon.__doc__))


@pytest.mark.parametrize("rst, text", [
    ("``dpnotes epsilon``: eps", "dpnotes epsilon: eps"),
    ("(:data:`dpnotes.accounting.accountants.SGM_ACCOUNTANTS`)", "(dpnotes.accounting.accountants.SGM_ACCOUNTANTS)"),
    (":class:`~dpnotes.executors.lock.RunLocked` is", "RunLocked is"),
    (":ref:`the guide <guide-label>` and :py:func:`f`", "the guide and f"),
    ("a **bold** `pack` and epochs * N / B", "a bold pack and epochs * N / B"),
    ('``"non_finite": {"epsilon": "inf"}``', '"non_finite": {"epsilon": "inf"}'),
    ("", ""), (None, None),
])
def test_plain(rst, text):
    assert plain(rst) == text
