"""One GDP run (:func:`execute`): the paper's data sets (:mod:`.data`), then the shared training loop
(:func:`dpnotes.experiments.train_spec`).
"""

from __future__ import annotations

from dpnotes.record import add_final

from . import data as gdp_data


def execute(spec, *, device: str = "cpu", progress: bool = True, checkpoint=None) -> dict:
    """Run one resolved spec (see :func:`configs`); returns ``{"epochs", "final", "privacy"}``."""
    from dpnotes.experiments import train_spec
    from dpnotes.ledger import Ledger, NonPrivateDpEvent

    train_data, test_data = gdp_data.load(spec.dataset, spec.subset)
    if spec.method == "baseline":
        rmse = gdp_data.baseline_rmse(spec.model, train_data, test_data)
        library = {} if spec.model == "global_average" else {
            "library": f"scikit-surprise {gdp_data.surprise_version()}"}
        ledger = Ledger()
        ledger.append(NonPrivateDpEvent())
        return {"epochs": [], "final": {"test_rmse": rmse, **library},
                "privacy": {"private": False, "delta": None, "ledger": ledger.to_json(), "epsilon": {}}}
    from dpnotes.train.rating_metrics import rmse_plugin

    extra = (rmse_plugin(*test_data),) if spec.model == "neumf" else ()
    out = train_spec(spec, train_data, test_data, device=device, progress=progress, checkpoint=checkpoint,
                     extra_plugins=extra)
    if spec.model == "neumf":
        add_final(out, test_rmse=out["epochs"][-1]["test_rmse"])
    return out
