"""One audited training run: a resolved run spec trained by the one loop
(:func:`dpnotes.train.train`) with its method's own hooks, on the data plus canary slots, with
the model wrapped in :class:`~dpnotes.audit.canaries.CanaryModel` and a
:class:`~dpnotes.audit.canaries.CanaryObserver` beside the method's plug-ins.

The spec's ``analysis`` says ``canaries`` (m) and ``magnitude`` (the canary gradient norm in
units of C); the seed decides which canaries are included (:func:`~dpnotes.audit.canaries.inclusion`).
``extra_plugins`` let tests add deliberately broken variants; the campaign never does.
"""

from __future__ import annotations

import numpy as np
import torch

from dpnotes.audit.canaries import CanaryModel, CanaryObserver, canary_loss, inclusion, with_canaries, with_real_ids


def audited_train(spec, train_data, test_data, *, device: str = "cpu", progress: bool = False, checkpoint=None,
                  extra_plugins: tuple = (), num_classes: int = 10):
    """``(train result, observer, included)`` of one audit run of ``spec`` (module docstring)."""
    from dpnotes import methods, models
    from dpnotes.train import TrainConfig, train

    method = methods.module(spec.method)
    if hasattr(method, "run"):
        raise ValueError(f"method {spec.method!r} trains in stages (label DP): the gradient-canary audit "
                         "does not apply (see dpnotes.audit.labeldp)")
    m, magnitude = int(spec.analysis["canaries"]), float(spec.analysis["magnitude"])
    included = inclusion(m, spec.seed)
    torch.manual_seed(spec.seed)
    config = TrainConfig(**spec.train, device=device)
    model = CanaryModel(models.create(spec.model, **spec.model_kwargs), m, num_classes, magnitude * config.clip)
    observer = CanaryObserver(model)
    plugins = method.hooks(method.Config(**spec.method_config)) + (observer, *extra_plugins)
    test = None if test_data is None else with_real_ids(test_data)  # None: no evaluation pass
    out = train(model, with_canaries(train_data, included, num_classes), test, config,
                plugins=plugins, progress=progress, checkpoint=checkpoint, loss=canary_loss(num_classes))
    return out, observer, np.asarray(included)
