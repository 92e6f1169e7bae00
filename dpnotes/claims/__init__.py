"""The claims registry: the papers' published numbers, typed in once.

This is the ONLY place in the project where a number from a paper appears.
Each paper has a TOML file beside this module (``gdp.toml``, ...) with entries::

    [[claim]]
    id = "gdp.table1.row1.eps_ma"      # starts with the paper's short name
    source = "Table 1, row 1 (sigma 1.3, 15 epochs), column MA eps"
    value = "1.19"                     # exactly as printed; omitted if the text lost it
    kind = "exact"                     # exact | training | statement
    tolerance = 1.0                    # training claims: the floor of the allowed |mean - paper|
    unit = "%"                         # optional
    note = "..."                       # optional: what the claim means, caveats
    context = "quoted"                 # optional: a baseline quoted from another paper (context,
                                       # listed but never judged or counted)
    check = "identity"                 # optional: not a claim but a check (identity | definition |
                                       # arithmetic | bug-only | fitted): judged and shown, counted apart
    margin = 0.5                       # optional, gains: the equivalence margin (default: half
                                       # the printed gain, verdicts.GAIN_MARGIN_FRACTION)
    same_as = "gdp.figure4.top.ma"     # optional: measured on the same runs as that claim

``exact`` claims are computations (e.g. an epsilon) that must match to the printed
digits; ``training`` claims are outcomes of training, judged from our seeds' interval
against the paper's value +- ``tolerance`` (the claim's equivalence margin;
:mod:`dpnotes.report.verdicts`); ``statement`` claims are qualitative sentences checked by a
computed test.

Settings the papers print (sigma, epochs, learning rate, ...) are not scored but
are paper values too, so they live here as well, as ``[[setting]]`` entries with
``id``, ``source`` and ``value``; experiments read them with :func:`setting`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

PAPERS = ("dplis", "dpis", "gdp", "labeldp", "sadpsgd")
KINDS = ("exact", "training", "statement")
CONTEXTS = ("quoted",)
# A check is a claim only in form: an identity (the paper restates a formula), a definition (true by
# construction), the paper's arithmetic on its own numbers, or a property that can fail only through a
# bug in our code (a mechanism's exact DP ratio), or a value we fitted (an epoch picked so that its eps is
# nearest the printed one: a setting, not evidence). It is judged and shown, never counted as a reproduction.
CHECKS = ("identity", "definition", "arithmetic", "bug-only", "fitted")


@dataclass(frozen=True)
class Claim:
    id: str
    source: str
    kind: str
    value: str | None = None
    tolerance: float | None = None
    unit: str | None = None
    note: str | None = None
    context: str | None = None
    check: str | None = None
    margin: float | None = None
    same_as: str | None = None

    @property
    def paper(self) -> str:
        return self.id.split(".", 1)[0]

    @property
    def number(self) -> float | None:
        """The printed value as a float (``None`` if missing or not numeric)."""
        try:
            return float(self.value) if self.value is not None else None
        except ValueError:
            return None

    @property
    def decimals(self) -> int | None:
        """Digits after the decimal point as printed: ``"3.01"`` -> 2, ``"95"`` -> 0."""
        if self.number is None:
            return None
        text = self.value.strip()
        return len(text.split(".", 1)[1]) if "." in text else 0


def _check(entry: dict, paper: str) -> Claim:
    unknown = set(entry) - {f for f in Claim.__dataclass_fields__}
    if unknown:
        raise ValueError(f"claim {entry.get('id')!r}: unknown fields {sorted(unknown)}")
    claim = Claim(**entry)
    if not claim.id.startswith(paper + "."):
        raise ValueError(f"claim id {claim.id!r} must start with {paper + '.'!r}")
    if claim.kind not in KINDS:
        raise ValueError(f"claim {claim.id!r}: kind must be one of {KINDS}, got {claim.kind!r}")
    if claim.context is not None and claim.context not in CONTEXTS:
        raise ValueError(f"claim {claim.id!r}: context must be one of {CONTEXTS}, got {claim.context!r}")
    if claim.check is not None and claim.check not in CHECKS:
        raise ValueError(f"claim {claim.id!r}: check must be one of {CHECKS}, got {claim.check!r}")
    if claim.margin is not None and not (claim.margin > 0 and claim.number is not None
                                         and claim.margin < abs(claim.number)):
        raise ValueError(f"claim {claim.id!r}: margin must be > 0 and smaller than the printed effect "
                         f"{claim.value!r}, got {claim.margin!r}")
    if claim.same_as is not None and not claim.same_as.startswith(paper + "."):
        raise ValueError(f"claim {claim.id!r}: same_as must name a claim of {paper}, got {claim.same_as!r}")
    if claim.kind == "training" and claim.value is not None and claim.tolerance is None:
        raise ValueError(f"claim {claim.id!r}: a training claim needs a tolerance")
    return claim


@lru_cache(maxsize=None)
def _read(paper: str) -> dict:
    path = resources.files(__package__) / f"{paper}.toml"
    if not path.is_file():
        return {}
    return tomllib.loads(path.read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def _load_paper(paper: str) -> tuple[Claim, ...]:
    claims = tuple(_check(entry, paper) for entry in _read(paper).get("claim", []))
    ids = [c.id for c in claims]
    dupes = {i for i in ids if ids.count(i) > 1}
    if dupes:
        raise ValueError(f"{paper}.toml: duplicate claim ids {sorted(dupes)}")
    unknown = sorted(c.same_as for c in claims if c.same_as is not None and c.same_as not in ids)
    if unknown:
        raise ValueError(f"{paper}.toml: same_as names unregistered claims {unknown}")
    return claims


@lru_cache(maxsize=None)
def _settings(paper: str) -> dict[str, dict]:
    out = {}
    for entry in _read(paper).get("setting", []):
        if set(entry) != {"id", "source", "value"} or not entry["id"].startswith(paper + "."):
            raise ValueError(f"{paper}.toml: malformed setting {entry!r}")
        out[entry["id"]] = entry
    return out


def setting(setting_id: str) -> float:
    """A training setting printed in a paper (e.g. ``gdp.table1.row1.sigma``), as a float."""
    paper = setting_id.split(".", 1)[0]
    try:
        return float(_settings(paper)[setting_id]["value"])
    except KeyError:
        raise KeyError(f"no setting with id {setting_id!r}") from None


def load(paper: str | None = None) -> list[Claim]:
    """All claims, or those of one paper (``dplis``, ``dpis``, ``gdp``, ``labeldp``, ``sadpsgd``)."""
    if paper is not None and paper not in PAPERS:
        raise ValueError(f"paper must be one of {', '.join(PAPERS)}; got {paper!r}")
    papers = PAPERS if paper is None else (paper,)
    return [c for p in papers for c in _load_paper(p)]


def get(claim_id: str) -> Claim:
    """One claim by id; ``KeyError`` names it if it is not registered."""
    for claim in load(claim_id.split(".", 1)[0]):
        if claim.id == claim_id:
            return claim
    raise KeyError(f"no claim with id {claim_id!r}")


def value(claim_id: str) -> float:
    """The printed number of a claim, as a float (tests read paper values through this)."""
    number = get(claim_id).number
    if number is None:
        raise ValueError(f"claim {claim_id!r} has no numeric value")
    return number
