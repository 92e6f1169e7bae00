"""The README stays current: outside its generated blocks (``<!-- name -->`` ... ``<!-- /name -->``,
held to their generators by tests/test_readme_generated.py and test_quickstart.py) it states no
measured figure (a time, a size, a count of tests, records or runs: those go stale; they live in
docs/performance.md, dated), and each figure it does state is checked here against the code."""

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")
# A measured figure: a number with a unit of time or size, a count of things that grow, a rate, an m:s time.
MEASURED = re.compile(
    r"\b\d[\d,.]*\s*(?:s|ms|sec|seconds?|min|minutes?|h|hours?|GPU-hours?|CPU-hours?|core-h|GPU-h|CPU-h|"
    r"kB|MB|GB|MiB|GiB|x)\b"
    r"|\b\d[\d,]*\s+(?:tests?|records?|runs?|claims?|lines?|samples/s)\b"
    r"|\b\d+m\d+s\b", re.I)


def prose(text: str) -> str:
    """The README without its generated blocks and code (blocks and spans: commands and their arguments)."""
    text = re.sub(r"<!-- ([\w-]+) -->.*?<!-- /\1 -->", "", text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "", re.sub(r"```.*?```", "", text, flags=re.S))


def test_the_pattern_finds_a_measured_figure():
    for stale in ("took 304 s", "about 5 to 10 minutes cold", "268 records", "make book 1m52s", "1,637 tests",
                  "2.3 GB peak", "12.9x faster", "0.99 GPU-hours"):
        assert MEASURED.search(prose(stale)), stale
    assert not MEASURED.search(prose("<!-- plan -->\n268 records\n<!-- /plan -->\n```bash\nsleep 5s\n```"))


def test_the_readme_states_no_measured_figure_outside_its_generated_blocks():
    from dpnotes.experiments import protocol

    checked = f"at most {protocol.LINE_CAP} lines"  # the module cap: checked below, and by its own test
    found = [m.group(0) for m in MEASURED.finditer(prose(README).replace(checked, ""))]
    assert not found, f"measured figures in the README go stale: move them to docs/performance.md, dated: {found}"


def test_the_figures_the_readme_states_are_the_codes():
    from scipy import stats

    from dpnotes import preflight
    from dpnotes.experiments import plan, protocol

    text = " ".join(re.sub(r"<!-- ([\w-]+) -->.*?<!-- /\1 -->", "", README, flags=re.S).split())
    t = stats.t.ppf(0.975, 2) / 3 ** 0.5
    assert f"over 3 seeds is the mean ± {t:.2f} seed SDs" in text
    assert f"decided with probability ≥ {plan.POWER:g}" in text and f"had fewer than {plan.THIN})" in text
    assert f"every module at most {protocol.LINE_CAP} lines" in text
    assert preflight.ASK_OVER_HOURS == 1.0 and "Work estimated over an hour on its device" in text
    from dpnotes.accounting.pld import DEFAULT_DISCRETIZATION

    assert DEFAULT_DISCRETIZATION == 1e-4 and "`--pld-discretization`, default 1e-4 as in the library" in text
    pin = next(line for line in (REPO / "constraints.txt").read_text().splitlines() if line.startswith("torch=="))
    assert f"`{pin}`" in README


@pytest.mark.parametrize("target", sorted(set(re.findall(r"\]\(((?!https?:|#)[^)]+)\)", README))))
def test_the_readmes_links_to_files_resolve(target):
    assert (REPO / target).exists(), target
