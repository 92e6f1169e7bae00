"""The one training loop: DP-SGD (Abadi et al. 2016, Alg. 1) and its non-private twin.

Per step of the private path: draw a Poisson batch (each example with probability q),
compute per-example gradients (torch.func or opacus; or, with ``grad_backend="ghost"``, only
their norms and the clipped sum, :mod:`dpnotes.train.ghost`), clip each to L2 norm C, sum, add
N(0, (sigma C)^2) to the sum, normalize (by q N, or not at all as in DPlis), and hand the
result to SGD / momentum / Adam. Every step appends what it released to the run's privacy
ledger (:mod:`dpnotes.ledger`); the accountants of the config price that ledger after every
epoch (:mod:`dpnotes.accounting.registry`). Any other use of private data goes through
:meth:`TrainContext.release`. A run stops after its epochs, or earlier at a target epsilon
or a number of accepted steps. The papers' methods hook in through :mod:`dpnotes.train.plugins`.
"""

from __future__ import annotations

import copy
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import torch
from torch import nn
from tqdm import tqdm

from dpnotes import phases, validate
from dpnotes.accounting.registry import accountant, price
from dpnotes.ledger import CandidateStepDpEvent, GaussianDpEvent, Ledger, NonPrivateDpEvent, PoissonSampledDpEvent
from dpnotes.train import checkpoint as ckpt
from dpnotes.train import inputs
from dpnotes.train.config import TrainConfig
from dpnotes.train.grads import LossFn, Params, grad_norms, make_backend, per_example_loss, trainable
from dpnotes.train.metrics import Running, evaluate
from dpnotes.train.optim import learning_rate, make_optimizer, set_learning_rate
from dpnotes.train.plugins import Plugin, check_plugins, overrides
from dpnotes.train.privatize import add_noise, clip_factors, clipped_sum
from dpnotes.train.sampling import poisson_batch, shuffled_batches, to_device

SPLITS = ("test", "validation", "train")  # what ctx.evaluate can read
SHUFFLE_NOTE = ("sampling='shuffle': fixed-size shuffled batches; the Poisson-subsampling "
                "epsilons reported do NOT describe this run (Chua et al., ICML 2024)")


def split_data(data, name: str) -> tuple[tuple[torch.Tensor, ...], torch.Tensor]:
    """``(x, y)``, ``((x1, x2, ...), y)`` or ``(x1, x2, ..., y)`` -> (inputs tuple, targets)."""
    if not isinstance(data, (tuple, list)) or len(data) < 2:
        raise ValueError(f"{name} must be a tuple (inputs..., targets) of tensors")
    *xs, y = data
    if len(xs) == 1 and isinstance(xs[0], (tuple, list)):
        xs = list(xs[0])
    if not all(isinstance(t, torch.Tensor) for t in (*xs, y)):
        raise ValueError(f"{name} must hold tensors only")
    if any(len(t) != len(y) for t in xs):
        raise ValueError(f"{name}: inputs and targets have different lengths")
    if len(y) == 0:
        raise ValueError(f"{name} is empty")
    return tuple(xs), y


@dataclass
class TrainContext:
    """Everything a step and a plug-in can see. ``step`` counts steps taken so far."""

    model: nn.Module
    config: TrainConfig
    device: torch.device
    train_inputs: tuple[torch.Tensor, ...]
    train_targets: torch.Tensor
    test_inputs: tuple[torch.Tensor, ...] | None
    test_targets: torch.Tensor | None
    loss_fn: LossFn
    backend: object
    optimizer: torch.optim.Optimizer
    plugins: tuple[Plugin, ...]
    n: int
    q: float
    steps_per_epoch: int
    sample_gen: torch.Generator
    noise_gen: torch.Generator
    aux_gen: torch.Generator
    release_gen: torch.Generator
    ledger: Ledger = field(default_factory=Ledger)
    epoch: int = 0
    step: int = 0
    accepted: int = 0
    stopped: str | None = None
    sample_weights: torch.Tensor | None = field(default=None, repr=False)
    version: int = 0  # counts parameter changes (accepted steps), keys the evaluation cache
    curve: list = field(default_factory=list)  # this epoch's eval_every points
    _eval_cache: tuple[int, dict] | None = field(default=None, repr=False)
    validation_inputs: tuple[torch.Tensor, ...] | None = None  # held-out examples an accept rule may read
    validation_targets: torch.Tensor | None = None
    phases: phases.Timer = field(default_factory=phases.current, repr=False)  # where the wall time goes

    def params(self) -> Params:
        return trainable(self.model)

    def hook(self, name: str):
        """The plug-in overriding an EXCLUSIVE hook, or None."""
        owners = [p for p in self.plugins if overrides(p, name)]
        return owners[0] if owners else None

    def evaluate(self, params: Params | None = None, split: str = "test") -> dict:
        """Mean loss and accuracy on the ``split`` set (test, validation or train), at
        ``params`` or the model's own."""
        xs, y = {"test": (self.test_inputs, self.test_targets),
                 "validation": (self.validation_inputs, self.validation_targets),
                 "train": (self.train_inputs, self.train_targets)}[validate.choice("split", split, SPLITS)]
        if y is None:
            raise ValueError(f"no {split} data was given")
        return evaluate(self.model, xs, y, self.loss_fn, self.config.eval_batch_size, params)

    def evaluate_current(self) -> dict:
        """Test loss and accuracy of the model as it is, computed once per parameter change."""
        if self._eval_cache is None or self._eval_cache[0] != self.version:
            self._eval_cache = (self.version, self.evaluate())
        return self._eval_cache[1]

    def release(self, value: torch.Tensor, sensitivity: float, noise_multiplier: float) -> torch.Tensor:
        """``value + N(0, (noise_multiplier * sensitivity)^2)`` entrywise, and a
        ``GaussianDpEvent(noise_multiplier)`` in the ledger: the only way a method may use
        private data outside the DP step (e.g. a loss on training data for a decision).
        ``sensitivity`` is the L2 sensitivity of ``value`` to one example; the noise comes
        from its own generator, so releases do not shift the DP-step noise."""
        sensitivity = validate.positive("sensitivity", sensitivity)
        noise_multiplier = validate.positive("noise_multiplier", noise_multiplier)
        noise = torch.randn(value.shape, generator=self.release_gen, dtype=value.dtype, device="cpu")
        self.ledger.append(GaussianDpEvent(noise_multiplier))
        return value + noise.to(value.device) * (noise_multiplier * sensitivity)

    def release_subsampled_sum(self, values: torch.Tensor, rate: float, sensitivity: float,
                               noise_multiplier: float) -> torch.Tensor:
        """The sum of a Poisson subsample of the rows of ``values`` (each row kept with
        probability ``rate``, drawn here from the release generator) plus
        ``N(0, (noise_multiplier * sensitivity)^2)`` entrywise, and a
        ``PoissonSampledDpEvent(rate, GaussianDpEvent(noise_multiplier))`` in the ledger.
        Row i is example i's contribution; each must have L2 norm <= ``sensitivity``
        (checked). Drawing the subsample here keeps the recorded amplification true (DPIS
        Eq. 11; :meth:`release` would charge the sum without amplification)."""
        rate = validate.probability("rate", rate)
        sensitivity = validate.positive("sensitivity", sensitivity)
        noise_multiplier = validate.positive("noise_multiplier", noise_multiplier)
        if values.dim() == 0 or len(values) != self.n:
            raise ValueError(f"values must have one row per training example ({self.n})")
        rows = values.reshape(self.n, -1)
        if bool((rows.norm(dim=1) > sensitivity).any()):
            raise ValueError(f"every row of values must have L2 norm <= sensitivity = {sensitivity}")
        keep = torch.rand(self.n, generator=self.release_gen, dtype=torch.float64) < rate
        total = values[keep.to(values.device)].sum(dim=0)
        noise = torch.randn(total.shape, generator=self.release_gen, dtype=total.dtype, device="cpu")
        self.ledger.append(PoissonSampledDpEvent(rate, GaussianDpEvent(noise_multiplier)))
        return total + noise.to(total.device) * (noise_multiplier * sensitivity)

    def per_example_norms(self, params: Params | None = None) -> torch.Tensor:
        """Unclipped per-example gradient norm of every training example (shape [N])."""
        params = self.params() if params is None else params
        b = self.config.eval_batch_size
        return torch.cat([
            grad_norms(self.backend(params, tuple(x[s:s + b] for x in self.train_inputs),
                                    self.train_targets[s:s + b])[0])
            for s in range(0, self.n, b)])


def build_context(model: nn.Module, train_data, test_data, config: TrainConfig, *,
                  plugins=(), loss: str | LossFn = "cross_entropy", validation_data=None) -> TrainContext:
    """Move model and data to ``config.device`` and set up optimizer, backend and generators."""
    if not isinstance(config, TrainConfig):
        raise ValueError(f"config must be a TrainConfig, got {type(config).__name__}")
    plugins = tuple(plugins)
    check_plugins(plugins, config)
    if config.private and any(isinstance(m, nn.modules.batchnorm._BatchNorm) for m in model.modules()):
        raise ValueError("model has BatchNorm, which mixes the examples of a batch: per-example "
                         "clipping would not bound each example's influence (use GroupNorm)")
    device = config.torch_device()
    xs, y = split_data(train_data, "train_data")
    n = len(y)
    q, steps = config.sample_rate(n), config.steps(n)
    txs, ty = split_data(test_data, "test_data") if test_data is not None else (None, None)
    vxs, vy = split_data(validation_data, "validation_data") if validation_data is not None else (None, None)
    to = lambda ts: tuple(t.to(device) for t in ts)  # noqa: E731
    model.to(device).train()
    if any(isinstance(m, nn.Conv2d) for m in model.modules()):
        # channels-last conv weights: oneDNN's fast layout, 1.5x per DP step and 2.5x per test
        # pass for the SA-DPSGD CNN on one CPU thread; same values up to float rounding
        model.to(memory_format=torch.channels_last)
    for name, (dxs, dy) in (("train_data", (xs, y)), ("test_data", (txs, ty)), ("validation_data", (vxs, vy))):
        if dy is not None:  # dtypes, values and shapes against the model: one line naming the fix
            inputs.check(model, dxs, dy, name, loss, device)
    loss_fn = per_example_loss(loss)
    backend = make_backend(config.grad_backend, model, loss_fn) if config.private else None
    sample_gen = torch.Generator("cpu").manual_seed(config.seed)
    noise_gen = torch.Generator(device).manual_seed(config.seed + 1)
    aux_gen = torch.Generator("cpu").manual_seed(config.seed + 2)
    release_gen = torch.Generator("cpu").manual_seed(config.seed + 3)
    return TrainContext(
        model=model, config=config, device=device, train_inputs=to(xs), train_targets=y.to(device),
        test_inputs=to(txs) if txs is not None else None,
        test_targets=ty.to(device) if ty is not None else None,
        validation_inputs=to(vxs) if vxs is not None else None,
        validation_targets=vy.to(device) if vy is not None else None,
        loss_fn=loss_fn, backend=backend,
        optimizer=make_optimizer([p for p in model.parameters() if p.requires_grad], config),
        plugins=plugins, n=n, q=q, steps_per_epoch=steps,
        sample_gen=sample_gen, noise_gen=noise_gen, aux_gen=aux_gen, release_gen=release_gen)


def _batch(ctx: TrainContext, idx: torch.Tensor):
    with ctx.phases.phase("batch"):
        idx = to_device(idx, ctx.device)  # drawn on the CPU; copied without a host sync
        inputs = tuple(x[idx] for x in ctx.train_inputs)
        targets = ctx.train_targets[idx]
        for p in ctx.plugins:
            inputs, targets = p.transform_batch(ctx, inputs, targets, idx)
    return inputs, targets


def private_step(ctx: TrainContext, idx: torch.Tensor, run: Running | None = None) -> dict:
    """One DP-SGD step on the examples ``idx``; returns what ``on_step_end`` receives."""
    cfg = ctx.config
    inputs, targets = _batch(ctx, idx)
    sigma = _current_sigma(ctx)
    params = ctx.params()
    if len(targets) > 0:
        grad_hook = ctx.hook("per_example_gradients")
        out = None if grad_hook is None else grad_hook.per_example_gradients(
            ctx, ctx.backend, params, inputs, targets)
        grads, losses, outputs = out if out is not None else ctx.backend(params, inputs, targets)
        weights = None if ctx.sample_weights is None else ctx.sample_weights[to_device(idx, ctx.sample_weights.device)]
        total = clipped_sum(grads, clip_factors(grads, cfg.clip, cfg.clip_mode, weights))
        if run is not None:
            run.add(losses, outputs, targets)
    else:  # an empty Poisson batch: the update is noise only
        total = {k: torch.zeros_like(v) for k, v in params.items()}
    noisy = add_noise(total, sigma * (cfg.clip or 0.0), ctx.noise_gen)
    scale = 1.0 / (ctx.q * ctx.n) if cfg.normalize == "expected" else 1.0
    for k, p in ctx.model.named_parameters():
        if k in noisy:
            p.grad = noisy[k].mul_(scale)
    return _apply(ctx, {"batch_size": len(targets), "noise_multiplier": sigma}, _step_event(ctx, sigma))


def _step_event(ctx: TrainContext, sigma: float):
    """What one private step releases: the plug-in's event, or a Poisson-subsampled Gaussian
    (nothing private at all without noise or clipping)."""
    hook = ctx.hook("step_event")
    event = None if hook is None else hook.step_event(ctx, sigma)
    if event is not None:
        return event
    if sigma == 0 or ctx.config.clip is None:
        return NonPrivateDpEvent()
    return PoissonSampledDpEvent(ctx.q, GaussianDpEvent(sigma))


def _current_sigma(ctx: TrainContext) -> float:
    hook = ctx.hook("noise_multiplier")
    return ctx.config.noise_multiplier if hook is None else float(hook.noise_multiplier(ctx))


def nonprivate_step(ctx: TrainContext, idx: torch.Tensor, run: Running | None = None) -> dict:
    """One ordinary minibatch step: mean loss, autograd, optimizer."""
    inputs, targets = _batch(ctx, idx)
    ctx.optimizer.zero_grad(set_to_none=True)
    outputs = ctx.model(*inputs)
    losses = ctx.loss_fn(outputs, targets)
    losses.mean().backward()
    if run is not None:
        run.add(losses, outputs, targets)
    return _apply(ctx, {"batch_size": len(targets), "noise_multiplier": 0.0}, NonPrivateDpEvent())


def _apply(ctx: TrainContext, info: dict, event) -> dict:
    """Optimizer step (with the scheduled lr), then the accept/reject hook; the step's
    ``event`` goes to the ledger (as a candidate step when an accept rule judges it)."""
    set_learning_rate(ctx.optimizer, learning_rate(ctx.config, ctx.step, ctx.steps_per_epoch))
    judge = ctx.hook("accept_step")
    if judge is not None:
        with ctx.phases.phase("accept"):
            old = {k: v.clone() for k, v in ctx.params().items()}
            old_state = copy.deepcopy(ctx.optimizer.state_dict())
    ctx.optimizer.step()
    accepted = True
    if judge is not None:
        new, seen = ctx.params(), {}

        def evaluate_at(params, split="test"):  # never the training set: that would be a release
            out = ctx.evaluate(params, validate.choice("split", split, ("test", "validation")))
            if split == "test":
                seen[id(params)] = out
            return out["loss"]

        with ctx.phases.phase("accept"):
            accepted = bool(judge.accept_step(ctx, old, new, evaluate_at))
        if accepted and id(new) in seen:  # the accept rule's test pass is the new model's
            ctx._eval_cache = (ctx.version + 1, seen[id(new)])
        if not accepted:
            with ctx.phases.phase("accept"):
                with torch.no_grad():
                    for k, p in ctx.model.named_parameters():
                        if k in old:
                            p.copy_(old[k])
                ctx.optimizer.load_state_dict(old_state)
    ctx.accepted += accepted
    ctx.version += accepted
    ctx.ledger.append(event if judge is None else CandidateStepDpEvent(event, accepted))
    info.update(step=ctx.step, accepted=accepted)
    ctx.step += 1
    every = ctx.config.eval_every
    if every is not None and ctx.step % every == 0 and ctx.test_targets is not None:
        with ctx.phases.phase("eval"):
            test = ctx.evaluate_current()
        ctx.curve.append({"step": ctx.step, "accepted_steps": ctx.accepted,
                          "test_loss": test["loss"], "test_acc": test["acc"]})
        target = ctx.config.stop_accuracy
        if target is not None and test["acc"] >= target:
            ctx.stopped = "stop_accuracy"
    with ctx.phases.phase("method"):
        for p in ctx.plugins:
            p.on_step_end(ctx, info)
    return info


def _epoch_batches(ctx: TrainContext):
    cfg = ctx.config
    if cfg.sampling == "shuffle":
        with ctx.phases.phase("batch"):
            batches = shuffled_batches(ctx.n, cfg.batch_size, ctx.steps_per_epoch, ctx.sample_gen)
        yield from batches
        return
    sampler = ctx.hook("sampling_probabilities")
    for _ in range(ctx.steps_per_epoch):
        probs = ctx.q
        ctx.sample_weights = None
        with ctx.phases.phase("method"):
            chosen = None if sampler is None else sampler.sampling_probabilities(ctx)
        if chosen is not None:
            probs, ctx.sample_weights = chosen
            probs = probs.to("cpu")
        with ctx.phases.phase("batch"):
            idx = poisson_batch(probs, ctx.n, ctx.sample_gen)
        yield idx


def _privacy(ctx: TrainContext, final: bool) -> dict:
    """The ledger priced by the config's accountants (the slow ones only when ``final``)."""
    cfg = ctx.config
    names = [a for a in cfg.accountants if final or accountant(a).cheap]
    return price(ctx.ledger, cfg.delta, names) if names else {}


def _target_epsilon(ctx: TrainContext, event) -> float:
    """eps under the target accountant if ``event`` were released next."""
    cfg = ctx.config
    ahead = ctx.ledger.totals()  # one entry per distinct event: O(1) in the run's length
    ahead.append(event)
    return price(ahead, cfg.delta, [cfg.target_accountant])[cfg.target_accountant]["epsilon"]


def _must_stop(ctx: TrainContext) -> bool:
    """Stop before a step that would exceed ``target_epsilon`` (an accept rule's step counted
    as accepted), once ``max_accepted_steps`` steps were accepted, or after a step whose test
    point reached ``stop_accuracy``."""
    cfg = ctx.config
    if ctx.stopped is not None:  # set by a step (stop_accuracy)
        return True
    if cfg.max_accepted_steps is not None and ctx.accepted >= cfg.max_accepted_steps:
        ctx.stopped = "max_accepted_steps"
    elif cfg.target_epsilon is not None:
        event = _step_event(ctx, _current_sigma(ctx))
        if ctx.hook("accept_step") is not None:
            event = CandidateStepDpEvent(event, True)
        if _target_epsilon(ctx, event) > cfg.target_epsilon:
            if ctx.step == 0:
                raise ValueError(f"target_epsilon={cfg.target_epsilon} is below the eps of a single "
                                 f"step under {cfg.target_accountant!r}")
            ctx.stopped = "target_epsilon"
    return ctx.stopped is not None


def _check_target_reachable(ctx: TrainContext) -> None:
    """With the engine's fixed step, refuse a target eps the step budget cannot reach."""
    cfg = ctx.config
    fixed = not any(ctx.hook(h) for h in ("step_event", "noise_multiplier", "accept_step"))
    if cfg.target_epsilon is None or not fixed or not cfg.private:
        return
    budget = Ledger()
    budget.append(_step_event(ctx, cfg.noise_multiplier), cfg.epochs * ctx.steps_per_epoch)
    eps = price(budget, cfg.delta, [cfg.target_accountant])[cfg.target_accountant]["epsilon"]
    if eps < cfg.target_epsilon:
        raise ValueError(f"target_epsilon={cfg.target_epsilon} is not reached within epochs={cfg.epochs} "
                         f"({cfg.epochs * ctx.steps_per_epoch} steps give eps {eps:.4g} under "
                         f"{cfg.target_accountant!r}): raise epochs or lower the target")


def _run_epoch(ctx: TrainContext, epoch: int, progress: bool) -> dict:
    start = time.perf_counter()
    ctx.epoch, accepted_before, steps_before = epoch, ctx.accepted, ctx.step
    ctx.curve = []
    timer = ctx.phases
    with timer.phase("method"):
        for p in ctx.plugins:
            p.on_epoch_start(ctx, epoch)
    run = Running()
    step = private_step if ctx.config.private else nonprivate_step
    bar = tqdm(_epoch_batches(ctx), total=ctx.steps_per_epoch, disable=not progress,
               desc=f"epoch {epoch + 1}/{ctx.config.epochs}", leave=False)
    for idx in bar:
        with timer.phase("accounting"):
            stop = _must_stop(ctx)
        if stop:
            break
        with timer.phase("step"):
            info = step(ctx, idx, run)
        timer.count(info["batch_size"])
    if ctx.step == steps_before:  # stopped before the epoch's first step
        return None
    with timer.phase("step"):
        train_loss, train_acc = run.result()  # waits for the device's queued steps
    with timer.phase("eval"):
        test = ctx.evaluate_current() if ctx.test_targets is not None else {"loss": None, "acc": None}
    with timer.phase("accounting"):
        eps = _privacy(ctx, final=False)
    record = {"epoch": epoch + 1, "train_loss": train_loss, "train_acc": train_acc,
              "test_loss": test["loss"], "test_acc": test["acc"], "steps": ctx.step,
              "accepted_steps": ctx.accepted - accepted_before, "epsilon": eps}
    if ctx.config.eval_every is not None:
        record["curve"] = ctx.curve
    with timer.phase("method"):
        for p in ctx.plugins:
            record.update(p.on_epoch_end(ctx, record) or {})
    record["wall_s"] = time.perf_counter() - start
    return record


def train(model: nn.Module, train_data, test_data, config: TrainConfig, *, plugins=(),
          progress: bool = True, checkpoint: str | Path | None = None,
          loss: str | LossFn = "cross_entropy", validation_data=None) -> dict:
    """Train ``model`` in place; return ``{"epochs": [...], "final": {...}, "privacy": {...}}``.

    ``train_data``/``test_data``: ``(x, y)`` tensors, or several input tensors then targets
    (``((users, items), ratings)``); ``test_data`` may be None. ``checkpoint``: a file written
    atomically after every epoch; if it exists the run resumes from it (and must have the same
    config), giving the same history as an uninterrupted run. ``loss``: "cross_entropy",
    "mse", or a callable returning per-example losses. ``validation_data``: held-out examples
    (never trained on) that an accept rule may judge candidates by (SA-DPSGD's ``energy``).
    """
    timer = phases.current()
    with timer.phase("loop"):
        with timer.phase("setup"):
            ctx = build_context(model, train_data, test_data, config, plugins=plugins, loss=loss,
                                validation_data=validation_data)
        ctx.phases = timer
        return _train(ctx, progress, checkpoint)


def _train(ctx: TrainContext, progress: bool, checkpoint: str | Path | None) -> dict:
    config, timer = ctx.config, ctx.phases
    if config.private and config.sampling == "shuffle":
        warnings.warn(SHUFFLE_NOTE, stacklevel=3)
    with timer.phase("accounting"):
        _check_target_reachable(ctx)
    history: list[dict] = []
    if checkpoint is not None and Path(checkpoint).exists():
        with timer.phase("checkpoint"):
            history = ckpt.load(checkpoint, ctx)
    try:
        with timer.phase("method"):
            for p in ctx.plugins:
                p.on_train_start(ctx)
        for epoch in range(len(history), config.epochs):
            if ctx.stopped is not None:
                break
            record = _run_epoch(ctx, epoch, progress)
            if record is None:
                break
            _check_finite(ctx, record)
            history.append(record)
            if checkpoint is not None:
                with timer.phase("checkpoint"):
                    ckpt.save(checkpoint, ctx, history)
    finally:
        if ctx.backend is not None:
            ctx.backend.close()
    with timer.phase("final"):
        return _record(ctx, history)


def _check_finite(ctx: TrainContext, record: dict) -> None:
    """``FloatingPointError`` when an epoch ends with non-finite parameters: nothing after it
    could be recorded (the store refuses NaN), so the run stops at once and the checkpoint keeps
    the last finite epoch (before this check existed, a NaN at step 1,087 ran on for 3,200 steps)."""
    bad = [k for k, v in ctx.params().items() if not bool(torch.isfinite(v).all())]
    if bad:
        raise FloatingPointError(
            f"epoch {record['epoch']}: parameters {', '.join(bad)} are not finite at step {ctx.step} "
            f"(train loss {record['train_loss']}); the run stops here and its checkpoint keeps epoch "
            f"{record['epoch'] - 1}")


def _record(ctx: TrainContext, history: list[dict]) -> dict:
    cfg = ctx.config
    last = history[-1]
    privacy = {"private": cfg.private, "q": ctx.q, "noise_multiplier": cfg.noise_multiplier,
               "clip": cfg.clip, "steps": ctx.step, "delta": cfg.delta, "sampling": cfg.sampling,
               "ledger": ctx.ledger.to_json(), "epsilon": _privacy(ctx, final=True)}
    if cfg.private and cfg.sampling == "shuffle":
        privacy["accounting_note"] = SHUFFLE_NOTE
    final = {k: last[k] for k in ("train_loss", "train_acc", "test_loss", "test_acc", "steps")}
    final["accepted_steps"] = ctx.accepted
    final["wall_s"] = sum(r["wall_s"] for r in history)
    final["stopped_by"] = ctx.stopped or "epochs"
    return {"epochs": history, "final": final, "privacy": privacy}
