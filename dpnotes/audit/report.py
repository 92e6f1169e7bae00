"""The audit chapter's tables and figure, from run records of the ``audit`` study only.

No number here is typed in: accountant eps come from each record's ledger pricing, lower bounds
from its final metric ``audit`` (:func:`dpnotes.audit.campaign.audit_summary`).
"""

from __future__ import annotations

import pandas as pd

from dpnotes.audit import campaign
from dpnotes.audit.mechanisms import gaussian_audit, label_randomizer_audit
from dpnotes.record import Record

TIGHT = "pld"


def records(profile: str, store=None) -> list[dict]:
    """The stored audit records of ``profile`` that the current configs ask for."""
    from dpnotes import experiments
    from dpnotes.results import Store

    ids = {experiments.resolve(c).id for c in campaign.configs(profile)}
    return [r for r in (store or Store()).records(campaign.STUDY, profile) if Record.of(r).id in ids]


def campaign_frame(recs: list[dict]) -> pd.DataFrame:
    """One row per audit run: method, target, accountant eps and the lower bounds."""
    rows = []
    for r in map(Record.of, recs):
        a = r.metric("audit")
        rows.append({"method": r.method, "target eps": r.analysis_spec["target_epsilon"],
                     "seed": r.seed, "eps (pld)": r.epsilon(TIGHT), "eps (rdp)": r.epsilon("rdp"),
                     "eps (method's own)": next((r.epsilon(k) for k in ("dpis", "sadpsgd-accepted-only")
                                                 if k in r.accountants), None),
                     "one-run LB": a["one_run_llr"]["epsilon"], "f-DP one-run LB": a["one_run_fdp_llr"]["epsilon"],
                     "GDP estimate": a["gdp_estimate"], "canaries": a["m"]})
    cols = ["method", "target eps", "seed", "eps (pld)", "eps (rdp)", "eps (method's own)", "one-run LB",
            "f-DP one-run LB", "GDP estimate", "canaries"]
    return pd.DataFrame(rows, columns=cols).sort_values(["method", "target eps", "seed"]).reset_index(drop=True)


def figure(ax, recs: list[dict]) -> None:
    """Lower bound against the accountant's (pld) eps, one marker per method; the diagonal is
    the accountant: a point above it would be a privacy bug."""
    frame = campaign_frame(recs)
    for method, part in frame.groupby("method"):
        ax.scatter(part["eps (pld)"], part["one-run LB"], label=method)
    top = max([1.0, *frame["eps (pld)"].tolist()])
    ax.plot([0, top], [0, top], color="grey", linestyle="--", label="accountant (pld)")
    ax.set_xlabel("accountant eps (pld, delta = 1e-5)")
    ax.set_ylabel("one-run lower bound (95 %)")
    ax.legend()


# What each audited step is, in which paper, and what its audit can and cannot say (prose only:
# every number of the table below comes from the records).
METHOD_NOTES = {
    "dpsgd": ("DP-SGD (Abadi et al. 2016): the baseline of DPlis, DPIS, SA-DPSGD and GDP",
              "the clipped, noised sum of a Poisson batch; the accountants price exactly this step"),
    "dplis": ("DPlis (Wang et al. 2021), Algorithm 2 / Eq. 6",
              "the same release as DP-SGD: smoothing moves the weights at which gradients are taken, "
              "not what a step releases, so its eps is DP-SGD's at the same sigma"),
    "dpis": ("DPIS (Wei et al. 2022), Algorithm 1",
             "a release whose sampling depends on the gradients' norms, priced by its own accountant "
             "(Section 4.1); the audit reads it with canaries that go through its sampler"),
    "sadpsgd": ("SA-DPSGD (Fu et al. 2022), Algorithm 2",
                "every candidate step is a DP-SGD release, accepted or not; the audit reads every candidate, "
                "as the sound eps charges them all (Theorem 1 charges the accepted ones only)"),
    "dpsgd_decay": ("DP-SGD with decaying noise (Yu et al. 2019), DPIS's competitor",
                    "DP-SGD releases with a sigma schedule; RDP composes the steps"),
}
SAME_RELEASE_TOL = 1e-3  # canary log-likelihood ratios equal to DP-SGD's within this: the same release
IMPLICATION_COLUMNS = ["method", "paper", "runs", "largest LB", "largest LB / eps (pld)", "any LB above eps",
                       "release seen = DP-SGD's", "what the step releases"]


def same_release_as_dpsgd(recs: list[dict]) -> dict[str, float]:
    """For each method, the largest difference between its canaries' log-likelihood ratios and
    DP-SGD's at the same target eps and seed (same noise stream): ~0 when the method's step
    releases exactly what DP-SGD's does."""
    llr = {}
    for r in map(Record.of, recs):
        llr[(r.method, r.analysis_spec["target_epsilon"], r.seed)] = r.metric("audit")["llr"]
    out = {}
    for (method, eps, seed), values in llr.items():
        base = llr.get(("dpsgd", eps, seed))
        if base is not None and len(base) == len(values):
            gap = max(abs(a - b) for a, b in zip(values, base))
            out[method] = max(out.get(method, 0.0), gap)
    return out


def implications_frame(frame: pd.DataFrame, same: dict[str, float]) -> pd.DataFrame:
    """Per method (rows of :func:`campaign_frame`): runs, the largest lower bound and its share of
    the accountant's eps, whether any run's bound exceeds it, whether its canaries saw DP-SGD's
    release, and what that means for the paper's claims (:data:`METHOD_NOTES`)."""
    rows = []
    for method, part in frame.groupby("method"):
        worst = (part["one-run LB"] / part["eps (pld)"]).max()
        same_gap = same.get(method)
        paper, release = METHOD_NOTES.get(method, (method, ""))
        rows.append({"method": method, "paper": paper, "runs": len(part),
                     "largest LB": part["one-run LB"].max(),
                     "largest LB / eps (pld)": worst,
                     "any LB above eps": bool((part[["one-run LB", "f-DP one-run LB"]].max(axis=1)
                                               > part["eps (pld)"] + 1e-9).any()),
                     "release seen = DP-SGD's": None if same_gap is None else bool(same_gap <= SAME_RELEASE_TOL),
                     "what the step releases": release})
    return pd.DataFrame(rows, columns=IMPLICATION_COLUMNS)


def implications_markdown(frame: pd.DataFrame, same: dict[str, float]) -> str:
    """The chapter's reading of :func:`implications_frame`, every number from the records."""
    imp = implications_frame(frame, same)
    if imp.empty:
        return "No audit record yet: nothing is claimed about the methods' steps."
    above = imp[imp["any LB above eps"]]["method"].tolist()
    twins = [m for m, v in zip(imp["method"], imp["release seen = DP-SGD's"]) if v and m != "dpsgd"]
    one_run_share = float((frame["one-run LB"] / frame["eps (pld)"]).max())
    fdp_share = float((frame["f-DP one-run LB"] / frame["eps (pld)"]).max())
    text = [f"Across {int(imp['runs'].sum())} runs the largest one-run lower bound (Steinke et al.) is "
            f"{one_run_share:.0%} of the accountant's ε (PLD); the f-DP test (Mahloujifar et al.), which "
            "rejects a Gaussian-shaped (μ-GDP) claim and is no (ε, δ) bound for other shapes, reaches "
            f"{fdp_share:.0%}. "
            + ("No run's bound exceeds its accountant: at this size the one-run audit would miss every broken "
               "step of the per-step section below except the grossest, so this says little by itself; the "
               "per-step audit below states the bug sizes it catches."
               if not above else f"The bound EXCEEDS the accountant for {', '.join(above)}: a privacy bug.")]
    if twins:
        text.append(f"The canaries of {', '.join(twins)} read exactly DP-SGD's release at the same seed (largest "
                    f"difference in a canary's log-likelihood ratio {max(same[m] for m in twins):.1g}): their "
                    "steps change what the weights do with a release, not the release, so their ε stand or fall "
                    "with DP-SGD's accountant, and this audit cannot tell them apart.")
    text.append("A lower bound well below the accountant does not prove the accountant tight: one run with "
                f"{campaign.SCALE['paper']['canaries']:,} canaries certifies at most the ceilings above (δ and "
                "the split over the guess counts included).")
    return " ".join(text)


def mechanisms_frame(epsilons=(0.5, 1.0, 2.0, 4.0)) -> pd.DataFrame:
    """RRWithPrior's exact max log-ratio for a uniform, a spread and a confident prior."""
    priors = {"uniform (RR)": [0.1] * 10, "spread": [0.4, 0.3, 0.2, 0.1], "confident": [0.97, 0.01, 0.01, 0.01]}
    rows = [{"prior": name, **label_randomizer_audit(p, e)} for name, p in priors.items() for e in epsilons]
    return pd.DataFrame(rows)


def lpmst_frame(profile: str = "paper", seed: int = 0) -> pd.DataFrame:
    """LP-MST's invariants on the real pipeline (:mod:`dpnotes.audit.labeldp`), one row per
    distinct stage setting of the LabelDP chapter's runs at ``profile``."""
    from dpnotes.audit import labeldp as lpmst

    rows = []
    for s in lpmst.settings(profile):
        cfg = s["config"]
        checks = lpmst.check(lpmst.trace(cfg, seed))
        fractions = " / ".join(f"{f:g}" for f in cfg.fractions())
        rows.append({"ε": cfg.epsilon, "stages": cfg.stages, "fractions": fractions,
                     "temperature": cfg.temperature, "experiments": len(s["experiments"]),
                     "rows per stage": " / ".join(map(str, checks.pop("stage sizes"))),
                     **{k: v for k, v in checks.items() if k != "releases"},
                     "split blind to the labels": lpmst.label_blind_split(cfg, seed)})
    return pd.DataFrame(rows)


def gaussian_frame(sigmas=(0.7, 1.0, 2.0, 4.0), delta: float = 1e-5) -> pd.DataFrame:
    """One Gaussian release: exact eps against the accountants."""
    return pd.DataFrame([gaussian_audit(s, delta) for s in sigmas])


def shown_profile(profile: str, store=None) -> str:
    """The profile whose campaign the chapter shows: ``paper`` once any paper-profile audit
    record exists (the campaign the bounds are about), else the chapter's own ``profile``."""
    return "paper" if records("paper", store) else profile


def _method_costs(profile: str, store=None) -> dict[str, dict]:
    from dpnotes import experiments
    from dpnotes.report.cost import record_cost

    stored = {r["id"]: r for r in records(profile, store)}
    out = {m: {"runs": 0, "with record": 0, "cpu_core_h": 0.0, "gpu_h": 0.0, "estimated_cpu_h": 0.0}
           for m in campaign.METHODS}
    for spec in (experiments.resolve(c) for c in campaign.configs(profile)):
        row = out[spec.method]
        row["runs"] += 1
        if spec.id in stored:
            cost = record_cost(stored[spec.id])
            row["with record"] += 1
            row["cpu_core_h"] += cost["cpu_core_h"]
            row["gpu_h"] += cost["gpu_h"]
        else:
            row["estimated_cpu_h"] += campaign.estimate_seconds(spec) / 3600
    return {m: row for m, row in out.items() if row["runs"]}


def cost_frame(profile: str = "paper", store=None) -> pd.DataFrame:
    """Per method: the campaign's runs at ``profile``, how many have records, what those cost
    (their provenance: CPU core-hours, GPU-hours) and the estimate for the others (one CPU
    thread each, :func:`dpnotes.audit.campaign.estimate_seconds`, as ``dpnotes run audit --list``)."""
    rows = [{"method": m, "runs": r["runs"], "with record": r["with record"],
             "recorded CPU core-h": round(r["cpu_core_h"], 2), "recorded GPU-h": round(r["gpu_h"], 2),
             "estimated CPU-h (runs without record)": round(r["estimated_cpu_h"], 2)}
            for m, r in _method_costs(profile, store).items()]
    return pd.DataFrame(rows)


def cost_markdown(profile: str = "paper", store=None) -> str:
    """The campaign's total cost at ``profile`` in one paragraph: recorded where records exist,
    estimated (``--list``'s cost model) for the runs without one."""
    rows = _method_costs(profile, store).values()
    runs, done = sum(r["runs"] for r in rows), sum(r["with record"] for r in rows)
    cpu, gpu, est = (sum(r[k] for r in rows) for k in ("cpu_core_h", "gpu_h", "estimated_cpu_h"))
    text = f"**The campaign at profile `{profile}`**: {runs} runs (`dpnotes run audit --profile {profile}`). "
    if done:
        text += (f"{done} of them have records, which cost {cpu:.2f} CPU core-hours and {gpu:.2f} GPU-hours "
                 "(their provenance). ")
    if done < runs:
        text += (f"{'The other' if done else 'None has a record yet; all'} {runs - done} are estimated at "
                 f"**{est:.1f} CPU-hours** on one thread each (`dpnotes run audit --profile {profile} --list`: "
                 "each method's seconds per step timed at the smoke and paper batch sizes, times the steps; "
                 "an upper estimate, timed on a CPU shared with other training).")
    return text


def scoreboard_note(store=None, profile: str = "paper"):
    """The audit campaign's state for the scoreboard page (``profile``, paper by default): runs
    with records, and in how many the one-run lower bound exceeds the accountant's eps."""
    from html import escape

    from dpnotes.report.html import Html
    from dpnotes.report.layout import STYLE

    recs, wanted = records(profile, store), len(campaign.configs(profile))
    if recs:
        frame = campaign_frame(recs)
        above = int((frame["one-run LB"] > frame["eps (pld)"] + 1e-9).sum())
        line = (f"Audit campaign (profile {profile}): {len(recs)} of {wanted} runs have records; the one-run lower "
                f"bound exceeds the accountant's ε (PLD) in {above} of them (above would be a privacy bug).")
    else:
        line = (f"Audit campaign (profile {profile}): none of its {wanted} runs has a record yet; "
                "no lower bound is claimed.")
    return Html(f'{STYLE}<p class="dpn-audit">{escape(line)}</p>', line)


def status_markdown(recs: list[dict], profile: str) -> str:
    """What the chapter can show at ``profile``: how many of the campaign's runs have records."""
    wanted = len(campaign.configs(profile))
    if not recs:
        return (f"**No audit record exists yet at profile `{profile}`** (0 of {wanted} runs): the campaign "
                "tables and figure below are empty, and no lower bound is claimed.")
    return f"{len(recs)} of {wanted} audit runs of profile `{profile}` have records."


def what_held(recs: list[dict], profile: str):
    """The chapter's opening box: what the audits show now, computed here (mechanisms) or read
    from the records (the campaign), with the rule stated; nothing is claimed without a record."""
    from html import escape

    from dpnotes.report.html import Html
    from dpnotes.report.layout import STYLE

    mech = mechanisms_frame()
    exact_rr = bool(((mech["max_log_ratio"] - mech["epsilon"]).abs() < 1e-9)[mech["k_star"] >= 2].all()
                    and (mech["max_log_ratio"].abs() < 1e-9)[mech["k_star"] < 2].all())
    gauss = gaussian_frame()
    sound = bool((gauss["rdp"] >= gauss["exact"] - 1e-9).all() and (gauss["pld"] >= gauss["exact"] - 1e-6).all())
    lp = lpmst_frame()
    lp_holds = bool(lp.drop(columns=["ε", "stages", "fractions", "temperature", "experiments",
                                     "rows per stage"]).all().all())
    lines = [f"RRWithPrior and randomized response leak exactly ε where k* ≥ 2 and nothing where k* = 1: "
             f"{'holds' if exact_rr else 'does NOT hold'} on every prior and ε of the table below.",
             f"One Gaussian release: the RDP and PLD accountants are never below the exact ε: "
             f"{'holds' if sound else 'does NOT hold'} at every σ of the table below.",
             f"LP-MST's pipeline (each label released once, priors from models that never saw the example, "
             f"disjoint label-blind parts, one label release in the ledger): "
             f"{'holds' if lp_holds else 'does NOT hold'} for all {len(lp)} stage settings of the LabelDP runs."]
    if recs:
        frame = campaign_frame(recs)
        above = int((frame["one-run LB"] > frame["eps (pld)"] + 1e-9).sum())
        lines.append(f"Campaign ({len(recs)} of {len(campaign.configs(profile))} runs of profile {escape(profile)}): "
                     f"the one-run lower bound exceeds the accountant's ε in {above} run(s); above would be a bug.")
    else:
        lines.append(f"Campaign (training steps of the five methods): no audit record at profile {escape(profile)} "
                     f"yet, so no lower bound is claimed.")
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    html = (STYLE + '<div class="what-held"><p><strong>What held</strong></p><ul>' + items + "</ul>"
            '<p class="dpn-rule">A correct implementation never has a lower bound above its accountant\'s ε '
            "(95 % confidence); the exact audits compare output probabilities, not samples.</p></div>")
    return Html(html, "What held: " + " ".join(lines))
