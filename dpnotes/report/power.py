"""Power of the equivalence rule: how likely each verdict is, and how many seeds a claim needs.

The rule planned for (:func:`dpnotes.report.verdicts.training`, and from now on gains): a
claim has the paper's value p and a margin M > 0. From n >= 2 seeds' values (for a gain, the
paired differences) with mean m, sample SD s and the :data:`~dpnotes.report.verdicts.CONFIDENCE`
two-sided Student-t half-width h = t_{0.975, n-1} s / sqrt(n), the interval [lo, hi] = [m - h, m + h]:

- *reproduced*      when p - M <= lo and hi <= p + M (the interval lies inside p +- M);
- *not reproduced*  when hi < p - M or lo > p + M (the interval lies wholly outside p +- M); for a
                    gain (``sign=True``) also when the interval excludes 0 on the side opposite to
                    p's sign (hi < 0 < p, or lo > 0 > p). That sign rule takes precedence: an
                    interval inside p +- M that lies wholly on the wrong side of 0 (possible when
                    M > |p|) is not reproduced, as :func:`~dpnotes.report.verdicts.gain` decides.
                    A gain of p = 0 has no sign to contradict.
- *inconclusive*    otherwise. A verdict is *decided* when it is reproduced or not reproduced.

This is equivalence testing by interval inclusion, the two one-sided tests of Schuirmann (1987,
J. Pharmacokinet. Biopharm. 15:657) read off a Student-t interval (here the two-sided 95 %
interval, so each one-sided test is at 2.5 %), together with its mirror image for deciding
against the claim.

:func:`verdict_probabilities` gives the probability of each verdict when the n values are i.i.d.
Normal(mean, sd^2), exactly up to quadrature error: given s, the mean m ~ Normal(mean, sd^2 / n)
is independent of s, so each verdict is an interval (or two half-lines) of m whose normal
probability is closed-form; what remains is one integral over the chi distribution of
u = sqrt(n - 1) s / sd (chi with n - 1 degrees of freedom), done by adaptive Gauss-Kronrod
quadrature (``scipy.integrate.quad``) split at the integrand's kinks and steps, with absolute
tolerance 1e-10 per piece and the chi tail beyond its 1 - 1e-12 quantile dropped: the result is
accurate to well under 1e-6 (a test checks it against a dense fixed Gauss rule and against
simulation). :func:`seeds_needed` turns that into the number of seeds a claim needs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from dpnotes.report.verdicts import t_quantile

TAIL = 1e-12  # chi mass beyond the integration range, dropped
QUAD_TOL = 1e-10  # absolute (and relative) tolerance of each quadrature piece


@dataclass(frozen=True)
class Probabilities:
    """The probability of each verdict of the equivalence rule (inconclusive is the rest)."""

    reproduced: float
    not_reproduced: float

    @property
    def decided(self) -> float:
        """The probability that the rule decides: reproduced or not reproduced."""
        return self.reproduced + self.not_reproduced

    @property
    def inconclusive(self) -> float:
        """The probability that the rule cannot decide."""
        return max(0.0, 1.0 - self.decided)


def _finite(name: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return float(value)


def _checked(p, margin, sd) -> tuple[float, float, float]:
    p, margin, sd = _finite("p", p), _finite("margin", margin), _finite("sd", sd)
    if margin <= 0:
        raise ValueError(f"margin must be a finite number > 0, got {margin!r}")
    if sd < 0:
        raise ValueError(f"sd must be a finite number >= 0, got {sd!r}")
    return p, margin, sd


def _count(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return value


def _rule(p: float, margin: float, lo: float, hi: float, sign: bool) -> str:
    """The verdict on the interval [lo, hi], literally (the reference for ``sd == 0``)."""
    if sign and ((hi < 0 < p) or (lo > 0 > p)):
        return "not_reproduced"
    if p - margin <= lo and hi <= p + margin:
        return "reproduced"
    if hi < p - margin or lo > p + margin:
        return "not_reproduced"
    return "inconclusive"


def verdict_probabilities(p: float, margin: float, mean: float, sd: float, n: int,
                          sign: bool = False) -> Probabilities:
    """The probability of each verdict of the equivalence rule on ``n`` i.i.d. Normal(``mean``,
    ``sd``^2) values, for the paper's value ``p`` and the margin ``margin``; ``sign=True`` for a
    gain (the sign rule of the module docstring). ``sd == 0`` is exact (the interval is the point
    ``mean``); otherwise by quadrature over the seed SD, accurate to well under 1e-6."""
    p, margin, sd = _checked(p, margin, sd)
    mean = _finite("mean", mean)
    n = _count("n", n, 2)
    sign = bool(sign)
    if sd == 0:
        verdict = _rule(p, margin, mean, mean, sign)
        return Probabilities(float(verdict == "reproduced"), float(verdict == "not_reproduced"))

    from scipy.integrate import quad
    from scipy.special import chdtri, gammaln, ndtr

    # Standardised so that m = mean + z * sd / sqrt(n), z ~ N(0, 1), and the half-width is
    # g * u (same units), u ~ chi_{n-1}: all bounds below are in these units.
    k = n - 1
    g = t_quantile(n) / math.sqrt(k)
    root = math.sqrt(n)

    def z(x: float) -> float:  # the standardised distance of a bound x from the true mean
        return (x - mean) * root / sd

    a, b = z(p - margin), z(p + margin)  # reproduced: a + g u <= z <= b - g u
    zero = z(0.0)  # the sign rule's bound
    low_out = z(max(p - margin, 0.0)) if sign and p > 0 else a  # not reproduced: z < low_out - g u
    high_out = z(min(p + margin, 0.0)) if sign and p < 0 else b  # ... or z > high_out + g u
    u_hi = math.sqrt(float(chdtri(k, TAIL)))
    log_norm = (k / 2 - 1) * math.log(2) + float(gammaln(k / 2))

    def density(u: float) -> float:  # the chi density with k degrees of freedom
        return math.exp((k - 1) * math.log(u) - u * u / 2 - log_norm) if u > 0 else (
            math.sqrt(2 / math.pi) if k == 1 else 0.0)

    def between(lo: float, hi: float) -> float:  # P(lo <= z <= hi), without cancellation
        if hi <= lo:
            return 0.0
        if lo > 0:
            return float(ndtr(-lo) - ndtr(-hi))
        return float(ndtr(hi) - ndtr(lo))

    def reproduced(u: float) -> float:
        lo, hi = a + g * u, b - g * u
        if sign and p > 0:
            lo = max(lo, zero - g * u)  # hi >= 0
        elif sign and p < 0:
            hi = min(hi, zero + g * u)  # lo <= 0
        return density(u) * between(lo, hi)

    def not_reproduced(u: float) -> float:
        return density(u) * (float(ndtr(low_out - g * u)) + float(ndtr(-(high_out + g * u))))

    def integral(f, top: float, points: list[float]) -> float:
        if top <= 0:
            return 0.0
        gap = 1e-9 * top  # points nearer than this to an edge are merged (a sliver only warns)
        edges = [0.0]
        for x in sorted(x for x in points if math.isfinite(x)):
            if edges[-1] + gap < x < top - gap:
                edges.append(x)
        edges.append(top)
        total = 0.0
        for left, right in zip(edges, edges[1:]):  # one quad per piece: kinks and steps on the edges
            total += quad(f, left, right, epsabs=QUAD_TOL, epsrel=QUAD_TOL, limit=200)[0]
        return total

    # where each bound crosses z = 0 (the steps of the normal probabilities) and where two bounds
    # meet (the kinks); the reproduced integrand vanishes beyond u = (b - a) / (2 g)
    steps = [-a / g, b / g, zero / g, -zero / g]
    top = min((b - a) / (2 * g), u_hi)
    kinks = [(zero - a) / (2 * g), (b - zero) / (2 * g)] if sign and p != 0 else []
    rep = integral(reproduced, top, steps + kinks)
    out = integral(not_reproduced, u_hi, [low_out / g, -high_out / g])
    rep, out = min(max(rep, 0.0), 1.0), min(max(out, 0.0), 1.0)
    return Probabilities(rep, min(out, 1.0 - rep))


def seeds_needed(p: float, margin: float, sd: float, means, power: float = 0.8, n_max: int = 60,
                 sign: bool = False) -> int | None:
    """The fewest seeds n in 2..``n_max`` with which the equivalence rule decides (reproduced or
    not reproduced) with probability >= ``power`` for every true mean in ``means`` (typically the
    paper's value and our current mean), at n and at every larger n up to ``n_max`` (so the
    answer never rests on a dip of a non-monotone power curve); None when no such n exists
    (not decidable within the budget). The seeds' SD is ``sd`` (e.g. measured). A true mean on
    the edge p +- M (``sign=False``) is decided with probability <= 0.05 whatever n: None."""
    p, margin, sd = _checked(p, margin, sd)
    means = [_finite("means[]", m) for m in means]
    if not means:
        raise ValueError("means must hold at least one true mean, got none")
    power = _finite("power", power)
    if not 0 < power < 1:
        raise ValueError(f"power must be a number in (0, 1), got {power!r}")
    n_max = _count("n_max", n_max, 2)
    best = None
    for n in range(n_max, 1, -1):  # downwards: the answer is the start of the last run of successes
        if all(verdict_probabilities(p, margin, m, sd, n, sign).decided >= power for m in means):
            best = n
        else:
            break
    return best


__all__ = ["Probabilities", "seeds_needed", "verdict_probabilities"]
