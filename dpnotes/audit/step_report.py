"""The audit chapter's per-step tables, from the records of the ``audit-step`` study (and, for the
one-run column, of the ``audit`` campaign); no number here is typed in.

:func:`teeth_frame` is the table of issue #49's done-when list (method x eps: the accountant's eps,
the one-run and the per-step lower bounds, the per-step bound's share of the accountant, and the
detection rate of each broken variant run at the audit's size), shown in the chapter and, as a
generated block, in the README (:func:`readme_block`).
"""

from __future__ import annotations

import pandas as pd

from dpnotes.audit import step_run
from dpnotes.record import Record
from dpnotes.report import labels

VARIANT_NAMES = {"noise0.9": "noise x0.9", "noise0.5": "noise x0.5", "unclipped": "canary unclipped (2 C)",
                 "rate1.1": "rate x1.1 unreported", "accepted-only": "accepted-only accounting"}


def records(profile: str = "paper", store=None) -> list[dict]:
    """The stored per-step audit records of ``profile`` that the current configs ask for."""
    from dpnotes import experiments
    from dpnotes.results import Store

    ids = {experiments.resolve(c).id for c in step_run.configs(profile)}
    return [r for r in (store or Store()).records(step_run.STUDY, profile) if Record.of(r).id in ids]


def _rows(recs: list[dict]) -> list[dict]:
    rows = []
    for r in map(Record.of, recs):
        a = r.metric("audit")
        rows.append({"method": r.method, "eps": r.analysis_spec["target_epsilon"], "variant": a["variant"],
                     "seed": r.seed, "pld": r.epsilon("pld"), "claimed": a["claimed"], "claimed_by": a["claimed_by"],
                     "lower": a["lower_bound"], "estimate": a["estimate"], "caught": a["caught"],
                     "acceptance": a["acceptance"], "normality_p": a["normality_p"],
                     "lower_accepted": a.get("lower_bound_accepted"), "factors": a["factors"]})
    return rows


def step_frame(recs: list[dict]) -> pd.DataFrame:
    """One row per correct run: the claim (the method's own accountant, PLD otherwise), the
    per-step lower bound and point estimate, the bound's share of the claim, the factors' bounds,
    SA-DPSGD's acceptance rate and the bound over its accepted candidates alone."""
    rows = [r for r in _rows(recs) if r["variant"] == "correct"]
    out = [{"method": r["method"], "target ε": r["eps"], "accountant ε": r["claimed"], "accountant": r["claimed_by"],
            "per-step LB": r["lower"], "LB / accountant": r["lower"] / r["claimed"], "estimate": r["estimate"],
            "a low": r["factors"]["a_low"], "b high": r["factors"]["b_high"], "c low": r["factors"]["c_low"],
            "accepted": r["acceptance"], "LB, accepted steps only": r["lower_accepted"],
            "normality p": r["normality_p"]} for r in rows]
    cols = ["method", "target ε", "accountant ε", "accountant", "per-step LB", "LB / accountant", "estimate",
            "a low", "b high", "c low", "accepted", "LB, accepted steps only", "normality p"]
    return pd.DataFrame(out, columns=cols).sort_values(["method", "target ε"]).reset_index(drop=True)


def detection_frame(recs: list[dict]) -> pd.DataFrame:
    """Per broken variant and eps: runs, how many were caught (lower bound above the claim), the
    smallest bound's share of the claim."""
    rows = [r for r in _rows(recs) if r["variant"] != "correct"]
    out = []
    for (variant, eps), part in (pd.DataFrame(rows).groupby(["variant", "eps"]) if rows else []):
        out.append({"variant": VARIANT_NAMES[variant], "method": part["method"].iloc[0], "target ε": eps,
                    "runs": len(part), "caught": int(part["caught"].sum()),
                    "smallest LB / claim": float((part["lower"] / part["claimed"]).min()),
                    "claim": part["claimed_by"].iloc[0]})
    return pd.DataFrame(out, columns=["variant", "method", "target ε", "runs", "caught", "smallest LB / claim",
                                      "claim"])


def _one_run(campaign_recs: list[dict]) -> dict:
    """Largest one-run lower bound per (method, eps) over the campaign's seeds."""
    out: dict = {}
    for r in map(Record.of, campaign_recs):
        key = (r.method, r.analysis_spec["target_epsilon"])
        out[key] = max(out.get(key, 0.0), r.metric("audit")["one_run_llr"]["epsilon"])
    return out


def teeth_frame(recs: list[dict], campaign_recs: list[dict]) -> pd.DataFrame:
    """Issue #49's table: method x eps, the accountant's eps, the one-run lower bound (largest over
    the campaign's seeds), the per-step lower bound, its share of the accountant, and the broken
    variants caught at that eps ("caught / runs", on the method they break)."""
    steps, det, one = step_frame(recs), detection_frame(recs), _one_run(campaign_recs)
    rows = []
    for _, s in steps.iterrows():
        row = {"method": s["method"], "ε target": s["target ε"], "accountant ε": s["accountant ε"],
               "one-run LB": one.get((s["method"], s["target ε"])), "per-step LB": s["per-step LB"],
               "per-step / accountant": s["LB / accountant"]}
        for variant, name in VARIANT_NAMES.items():
            hit = det[(det["variant"] == name) & (det["method"] == s["method"]) & (det["target ε"] == s["target ε"])]
            if not hit.empty:
                row[name] = f"{int(hit['caught'].iloc[0])} / {int(hit['runs'].iloc[0])}"
        rows.append(row)
    cols = ["method", "ε target", "accountant ε", "one-run LB", "per-step LB", "per-step / accountant",
            *VARIANT_NAMES.values()]
    return pd.DataFrame(rows, columns=cols)


def cpu_hours(recs: list[dict]) -> float:
    """CPU core-hours of the records (their provenance)."""
    from dpnotes.report.cost import record_cost

    return sum(record_cost(r)["cpu_core_h"] for r in recs)


def readme_block(profile: str = "paper", store=None) -> str:
    """The README's generated ``audit-teeth`` block: :func:`teeth_frame` as a markdown table and
    one line of what it cost."""
    from dpnotes.audit import report

    recs = records(profile, store)
    if not recs:
        return f"No per-step audit record at profile `{profile}` yet."
    frame = teeth_frame(recs, report.records(profile, store))

    def cell(v):
        if v is None or (isinstance(v, float) and pd.isna(v)):
            return "–"
        return f"{v:.2f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    lines.append(f"\n{len(recs)} per-step audit runs (`dpnotes run audit-step --profile {profile}`), "
                 f"{cpu_hours(recs):.2f} CPU core-hours in all (their provenance).")
    return "\n".join(lines)


def headline_markdown(recs: list[dict], campaign_recs: list[dict]) -> str:
    """The chapter's headline: what the per-step audit audited, its lower bound against the
    accountant (beside the one-run bound), and how often each broken variant was caught."""
    if not recs:
        return ("**Per-step audit**: no record yet (`dpnotes run audit-step --profile paper`), so no per-step "
                "bound and no detection rate is claimed.")
    steps, det = step_frame(recs), detection_frame(recs)
    share = steps["LB / accountant"]
    one = _one_run(campaign_recs)
    one_share = [one[(m, e)] / a for m, e, a in zip(steps["method"], steps["target ε"], steps["accountant ε"])
                 if (m, e) in one]
    methods = ", ".join(labels.name(m) for m in sorted(set(steps["method"])))
    canaries = step_run.SCALE["paper"]["canaries"]
    text = (f"**Per-step audit** ({len(steps)} runs: {methods} at ε "
            f"{', '.join(f'{e:g}' for e in sorted(set(steps['target ε'])))}): the real step of each method, observed "
            f"at every step through {canaries:,} Dirac canaries, gives a whole-run lower bound of {share.min():.0%} to "
            f"{share.max():.0%} of the method's own accountant (95 %)")
    text += (f", where the one-run test on the same mechanism reaches {min(one_share):.0%} to {max(one_share):.0%}. "
             if one_share else ". ")
    if not det.empty:
        parts = [f"{name}: {int(g['caught'].sum())} of {int(g['runs'].sum())}" for name, g in det.groupby("variant")]
        text += ("Broken steps run at the audit's size, caught (lower bound above the claim) in: "
                 + "; ".join(parts) + ".")
    sa = steps[steps["method"] == "sadpsgd"]
    if not sa.empty:
        text += (f" SA-DPSGD accepted {sa['accepted'].min():.0%} to {sa['accepted'].max():.0%} of its candidates "
                 "with the auditor's energy twins.")
    return text
