"""The one registry of accountants that price a privacy ledger (CLI, training loop, book).

An accountant prices a :class:`~dpnotes.ledger.Ledger` or a single ``DpEvent``:
``price(ledger_or_event, delta) -> dict``. The event tree is flattened first --
``SelfComposedDpEvent`` multiplies counts, ``ComposedDpEvent`` concatenates,
``NoOpDpEvent`` drops out, ``DpisIterationDpEvent`` becomes its equivalent
Poisson-subsampled Gaussian (DPIS Lemma 3.1), ``CandidateStepDpEvent`` becomes its
inner event (SA-DPSGD: every candidate is released; only ``sadpsgd-accepted-only``
skips the rejected ones) -- and equal events are priced once with their total count.
An accountant that meets an event it cannot price raises :class:`UnsupportedEventError`
naming the event type; it never skips one. ``RepeatAndSelectDpEvent`` (hyperparameter tuning:
the best of a random number of trials, Papernot and Steinke 2022) is priced only by the RDP
accountants, whose curve of the trial goes through :func:`dpnotes.accounting.tuning.repeat_and_select_rdp`;
every other accountant refuses it.

Defined values: a ledger with no release (empty, or only no-ops) has eps 0 under every
accountant (mu 0 for ``clt``; ``order`` NaN for the RDP accountants, as no order was
chosen); any ``NonPrivateDpEvent`` (not a skipped rejected candidate) makes eps ``inf``.
Output keys are those of :func:`dpnotes.accounting.epsilon`, so stored records compare.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from dpnotes import validate
from dpnotes.accounting.gdp import epsilon_from_mu, mu_poisson
from dpnotes.accounting.grid import check_pld_grid
from dpnotes.accounting.pld import DEFAULT_DISCRETIZATION, pld_epsilon
from dpnotes.accounting.rdp import _check_sgm, integer_steps, rdp_to_epsilon, resolve_orders, subsampled_gaussian_rdp

# The ledger's events (dp_accounting's, which import scipy) are imported where a ledger or an
# event is priced, not here: ``dpnotes epsilon`` prices (q, sigma, steps) directly
# (:meth:`Accountant.price_mechanisms`) and answers without them; type checkers see them here.
if TYPE_CHECKING:
    from dpnotes.ledger import DpEvent, Ledger


class UnsupportedEventError(ValueError):
    """An accountant met an event it cannot price (the message names the event type)."""


def _type_name(event: DpEvent) -> str:
    from dpnotes.ledger import DpEvent, PoissonSampledDpEvent

    inner = getattr(event, "event", None)
    if isinstance(event, PoissonSampledDpEvent) and isinstance(inner, DpEvent):
        return f"PoissonSampledDpEvent of {type(inner).__name__}"
    return type(event).__name__


def _leaves(event: DpEvent, count: float, skip_rejected: bool) -> Iterator[tuple[DpEvent, float]]:
    """(event, count) for every release in the tree, composites unpacked (module docstring)."""
    from dpnotes.ledger import (
        CandidateStepDpEvent,
        ComposedDpEvent,
        DpEvent,
        DpisIterationDpEvent,
        NoOpDpEvent,
        SelfComposedDpEvent,
        check_count,
    )

    if not isinstance(event, DpEvent):
        raise ValueError(f"expected a DpEvent, got {type(event).__name__}: {event!r}")
    if isinstance(event, SelfComposedDpEvent):
        yield from _leaves(event.event, count * check_count(event.count, "SelfComposedDpEvent.count"), skip_rejected)
    elif isinstance(event, ComposedDpEvent):
        for e in event.events:
            yield from _leaves(e, count, skip_rejected)
    elif isinstance(event, CandidateStepDpEvent):
        if event.accepted or not skip_rejected:
            yield from _leaves(event.event, count, skip_rejected)
    elif isinstance(event, DpisIterationDpEvent):
        yield event.as_subsampled_gaussian(), count
    elif not isinstance(event, NoOpDpEvent):
        yield event, count


def _key(event: DpEvent):
    try:
        hash(event)
    except TypeError:
        return repr(event)
    return event


def _gaussian(event: DpEvent) -> tuple[float, float] | None:
    """(q, sigma) of a Gaussian (q = 1) or Poisson-subsampled Gaussian event, else None."""
    from dpnotes.ledger import GaussianDpEvent, PoissonSampledDpEvent

    if isinstance(event, GaussianDpEvent):
        q, sigma, _ = _check_sgm(1.0, event.noise_multiplier, 1)
        return q, sigma
    if isinstance(event, PoissonSampledDpEvent) and isinstance(event.event, GaussianDpEvent):
        q, sigma, _ = _check_sgm(event.sampling_probability, event.event.noise_multiplier, 1)
        return q, sigma
    return None


@dataclass(frozen=True)
class Accountant:
    """A named accountant. ``guarantee`` is ``"upper bound"``, ``"approximation"`` (may
    under-state eps) or ``"unsound"`` (a paper's own accounting, reproduced); ``cheap``
    means fast enough to call every training step; ``epsilon_key`` is the output key
    that carries the guarantee (``"upper"`` for ``prv``). ``prices_gaussians``: it prices
    Gaussian and Poisson-subsampled Gaussian releases, also given directly as
    ``(q, sigma, count)`` (:meth:`price_mechanisms`)."""

    name: str
    description: str
    guarantee: str
    cheap: bool
    epsilon_key: str = "epsilon"

    keys = ("epsilon",)
    skip_rejected = False
    prices_gaussians = True

    def _check(self, event: DpEvent) -> None:
        """Raise UnsupportedEventError unless ``event`` (a leaf) can be priced."""
        from dpnotes.ledger import LabelRandomizedResponseDpEvent, NonPrivateDpEvent

        if isinstance(event, NonPrivateDpEvent) or _gaussian(event) is not None:
            return
        why = "only Gaussian, Poisson-subsampled Gaussian and the events built from them are priced"
        if type(event).__name__ == "RepeatAndSelectDpEvent":
            why = ("the selection of the best of a random number of trials has an RDP bound only "
                   "(Papernot and Steinke 2022, Theorems 2 and 6); price it with 'rdp'")
        elif isinstance(event, LabelRandomizedResponseDpEvent):
            why = ("it is pure label-DP under the substitution of one label, a different neighbouring "
                   "notion from this accountant's add/remove-one-record DP; price it with 'pure'")
        raise UnsupportedEventError(f"accountant {self.name!r} cannot price {_type_name(event)}: {why}")

    def _events(self, ledger_or_event) -> list[tuple[DpEvent, float]]:
        from dpnotes.ledger import Ledger

        event = ledger_or_event.as_event() if isinstance(ledger_or_event, Ledger) else ledger_or_event
        totals: dict = {}  # key -> (event, total count); unhashable events (lists inside) by repr
        for leaf, count in _leaves(event, 1, self.skip_rejected):
            self._check(leaf)
            key = _key(leaf)
            totals[key] = (leaf, totals.get(key, (leaf, 0))[1] + count)
        return list(totals.values())

    def supports(self, ledger_or_event) -> bool:
        """Whether every release in ``ledger_or_event`` can be priced."""
        try:
            self._events(ledger_or_event)
        except UnsupportedEventError:
            return False
        return True

    def price(self, ledger_or_event: Ledger | DpEvent, delta: float) -> dict[str, float]:
        """eps (and the accountant's other outputs) at ``delta`` of a ledger or an event."""
        from dpnotes.ledger import NonPrivateDpEvent

        delta = validate.probability("delta", delta, high_open=True)
        events = self._events(ledger_or_event)
        if any(isinstance(e, NonPrivateDpEvent) for e, _ in events):
            return {k: math.nan if k == "order" else math.inf for k in self.keys}
        if not events:
            return {k: math.nan if k == "order" else 0.0 for k in self.keys}
        return self._price(events, delta)

    def _price(self, events: list[tuple[DpEvent, float]], delta: float) -> dict[str, float]:
        return self.price_mechanisms([(*_gaussian(event), count) for event, count in events], delta)

    def price_mechanisms(self, mechanisms: list[tuple[float, float, float]], delta: float) -> dict[str, float]:
        """eps (and the other outputs) of the composition of ``count`` Poisson-subsampled
        Gaussian steps for each ``(q, sigma, count)`` (q = 1: the Gaussian mechanism)."""
        raise NotImplementedError


@lru_cache(maxsize=4096)
def _rdp_curve(q: float, sigma: float, orders: tuple[float, ...]) -> np.ndarray:
    curve = subsampled_gaussian_rdp(q, sigma, 1, orders)
    curve.flags.writeable = False
    return curve


@dataclass(frozen=True)
class RdpAccountant(Accountant):
    """Renyi DP, additive over events (Mironov 2017, Proposition 1), the subsampled
    Gaussian's curve from Mironov, Talwar, Zhang 2019; converted with ``conversion``
    (:func:`dpnotes.accounting.rdp.rdp_to_epsilon`) at the best of ``orders``."""

    orders: str | tuple[float, ...] = "opacus"
    conversion: str = "improved"
    accepted_only: bool = False

    keys = ("epsilon", "order")

    @property
    def skip_rejected(self) -> bool:
        return self.accepted_only

    def _check(self, event):
        if type(event).__name__ == "RepeatAndSelectDpEvent":
            from dpnotes.accounting.tuning import check_distribution

            check_distribution(event.mean, event.shape)
            self._events(event.event)  # every release of the trial must be priceable
            return
        super()._check(event)

    def curve(self, ledger_or_event) -> np.ndarray:
        """The RDP curve at this accountant's orders of a ledger or an event (``inf`` if it holds
        a ``NonPrivateDpEvent``); a ``RepeatAndSelectDpEvent`` adds the curve of its trial through
        Papernot and Steinke's bound (:func:`dpnotes.accounting.tuning.repeat_and_select_rdp`)."""
        return self._curve(self._events(ledger_or_event))

    def _curve(self, events) -> np.ndarray:
        from dpnotes.accounting.tuning import repeat_and_select_rdp
        from dpnotes.ledger import NonPrivateDpEvent

        a = resolve_orders(self.orders)
        total = np.zeros(a.size)
        for event, count in events:
            if isinstance(event, NonPrivateDpEvent):
                return np.full(a.size, np.inf)
            if type(event).__name__ == "RepeatAndSelectDpEvent":
                total = total + count * repeat_and_select_rdp(a, self.curve(event.event), event.mean, event.shape)
            else:
                total = total + count * _rdp_curve(*_gaussian(event), tuple(a))
        return total

    def _price(self, events, delta):
        eps, order = rdp_to_epsilon(self._curve(events), resolve_orders(self.orders), delta, self.conversion)
        return {"epsilon": eps, "order": order}

    def price_mechanisms(self, mechanisms, delta):
        a = resolve_orders(self.orders)
        total = 0.0
        for q, sigma, count in mechanisms:
            total = total + count * _rdp_curve(q, sigma, tuple(a))
        eps, order = rdp_to_epsilon(total, a, delta, self.conversion)
        return {"epsilon": eps, "order": order}


@dataclass(frozen=True)
class CltAccountant(Accountant):
    """GDP central limit theorem (Bu et al. 2020, Eq. 5): ``mu^2`` adds over events, a
    Poisson-subsampled Gaussian step contributing ``q^2 (e^{1/sigma^2} - 1)`` and a
    Gaussian one (q = 1) exactly ``1/sigma^2`` (Dong, Roth, Su 2022, Corollary 3.3); eps by Eq. 6."""

    keys = ("mu", "epsilon")

    def price_mechanisms(self, mechanisms, delta):
        mus = [math.sqrt(count) / sigma if q == 1 else mu_poisson(q, sigma, count) for q, sigma, count in mechanisms]
        mu = math.hypot(*mus)  # sqrt of the sum of squares; exactly mu for one event
        return {"mu": mu, "epsilon": epsilon_from_mu(mu, delta)}


@dataclass(frozen=True)
class PldAccountant(Accountant):
    """Privacy-loss distributions, pessimistic "connect the dots" discretisation (Koskela et
    al. 2020; Doroshenko et al. 2022), :func:`dpnotes.accounting.pld.pld_epsilon`: an upper
    bound, tight up to ``discretization``. Each event's total count is rounded up. A loss grid
    too large to hold raises :class:`~dpnotes.accounting.grid.GridTooLargeError` before any
    allocation."""

    discretization: float = DEFAULT_DISCRETIZATION

    def price_mechanisms(self, mechanisms, delta):
        mechanisms = [(q, sigma, integer_steps(count)) for q, sigma, count in mechanisms]
        check_pld_grid(mechanisms, self.discretization)
        return {"epsilon": pld_epsilon(mechanisms, delta, self.discretization)}


@dataclass(frozen=True)
class PrvAccountant(Accountant):
    """The PRV accountant (Gopi, Lee, Wutschitz 2021) of the heterogeneous composition,
    :func:`dpnotes.accounting.prv.prv_compose`: estimate and bounds ``lower <= eps <= upper``."""

    eps_error: float = 0.01

    keys = ("epsilon", "lower", "upper")

    def price_mechanisms(self, mechanisms, delta):
        from dpnotes.accounting.prv import prv_compose  # the prv_accountant library imports scipy

        return prv_compose(mechanisms, delta, eps_error=self.eps_error)._asdict()


@dataclass(frozen=True)
class PureAccountant(Accountant):
    """Basic composition of pure eps-DP events (Dwork, Roth 2014, Theorem 3.16): eps adds.
    Prices only :class:`LabelRandomizedResponseDpEvent` (Ghazi et al. 2021); delta is unused."""

    prices_gaussians = False

    def _check(self, event):
        from dpnotes.ledger import LabelRandomizedResponseDpEvent, NonPrivateDpEvent

        if not isinstance(event, (LabelRandomizedResponseDpEvent, NonPrivateDpEvent)):
            raise UnsupportedEventError(
                f"accountant {self.name!r} cannot price {_type_name(event)}: it composes only pure "
                "eps-DP events (LabelRandomizedResponseDpEvent)")

    def _price(self, events, delta):
        return {"epsilon": math.fsum(count * event.epsilon for event, count in events)}

    def price_mechanisms(self, mechanisms, delta):
        raise UnsupportedEventError(f"accountant {self.name!r} cannot price Gaussian mechanisms")


_ALL = (
    RdpAccountant("rdp", "RDP, opacus orders, improved conversion (Balle et al. 2020)",
                  "upper bound", True, orders="opacus", conversion="improved"),
    RdpAccountant("rdp-classic", "RDP, TF-tutorial orders, classic conversion (Mironov 2017): the GDP paper's MA eps",
                  "upper bound", True, orders="tf-tutorial", conversion="classic"),
    CltAccountant("clt", "GDP central limit theorem (Bu et al. 2020); an approximation that can under-state eps",
                  "approximation", True),
    PrvAccountant("prv", "PRV accountant (Gopi et al. 2021) with bounds; 'upper' is the guarantee; slow",
                  "upper bound", False, epsilon_key="upper"),
    PldAccountant("pld", "PLD accountant, pessimistic (connect the dots): tight upper bound; "
                         "fractional counts rounded up",
                  "upper bound", False),
    RdpAccountant("dpis", "DPIS (Wei et al. 2022, Section 4.1): RDP at integer orders, Lemma 2.5 conversion",
                  "upper bound", True, orders="integer", conversion="improved"),
    RdpAccountant("sadpsgd-accepted-only",
                  "SA-DPSGD Theorem 1 (Fu et al. 2022): counts ACCEPTED candidates only -- NOT a sound DP bound",
                  "unsound", True, orders="integer", conversion="classic", accepted_only=True),
    PureAccountant("pure", "basic composition of pure eps label-DP releases (RR, RRWithPrior; Ghazi et al. 2021)",
                   "upper bound", True),
)
_REGISTRY: dict[str, Accountant] = {a.name: a for a in _ALL}
ACCOUNTANT_NAMES: tuple[str, ...] = tuple(_REGISTRY)


def accountant(name: str) -> Accountant:
    """The registered accountant called ``name`` (one of :data:`ACCOUNTANT_NAMES`)."""
    return _REGISTRY[validate.choice("accountant", name, ACCOUNTANT_NAMES)]


def price(ledger_or_event: Ledger | DpEvent, delta: float, accountants: str | Iterable[str]) -> dict[str, dict]:
    """``{name: accountant(name).price(ledger_or_event, delta)}`` for one name or several."""
    names = (accountants,) if isinstance(accountants, str) else tuple(accountants)
    return {name: accountant(name).price(ledger_or_event, delta) for name in names}
