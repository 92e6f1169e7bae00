"""What :func:`dpnotes.train.train` is given, checked before anything trains: a ValueError of one
line naming the data, what is wrong with it and the fix, instead of an error deep inside torch.

* dtypes: raw uint8 pixels (what :func:`dpnotes.data.load_mnist` returns without
  ``model_ready=True``), bool or int8 inputs; floats of another precision than the model's
  parameters; class-index targets that are not int64;
* values: NaN or inf in the inputs or targets; negative class indices, or indices the model's
  outputs have no class for; float inputs that look like unscaled pixels (integers in 0..255)
  are warned about;
* shapes: the model is run (evaluation mode, no gradient, random state restored) on the first
  two examples; an error there becomes one line naming the shapes (e.g. MNIST images without
  their channel axis: ``x.unsqueeze(1)``), and the outputs are checked against the targets.

The check changes nothing: no parameter, buffer or random stream is touched.
"""

from __future__ import annotations

import warnings

import torch
from torch import nn

MODEL_READY = "load_mnist / load_fashion_mnist / load_cifar10(split, model_ready=True)"


def _describe(x: torch.Tensor) -> str:
    return f"{x.dtype} {list(x.shape)}".replace("torch.", "")


def _pixel_fix(x: torch.Tensor) -> str:
    channel = ".unsqueeze(1)" if x.dim() == 3 else ""
    return f"convert with x.float().div(255){channel}, or load with {MODEL_READY}"


def _check_input(x: torch.Tensor, what: str, param_dtype: torch.dtype | None) -> None:
    if x.dtype == torch.uint8 and x.dim() >= 3:
        raise ValueError(f"{what} are {_describe(x)}, raw pixels: the model takes floats in [0, 1]; {_pixel_fix(x)}")
    if x.dtype in (torch.uint8, torch.int8, torch.bool):
        raise ValueError(f"{what} are {_describe(x)}: the model takes floats (x.float()) or token/id "
                         "indices (x.long())")
    if not x.is_floating_point():
        return
    if param_dtype is not None and x.dtype != param_dtype:
        raise ValueError(f"{what} are {_describe(x)} but the model's parameters are {param_dtype}: "
                         f"convert with x.to({param_dtype}) (or the model with model.to({x.dtype}))")
    for start in range(0, len(x), 4096):  # in chunks: no mask the size of the whole data set
        finite = torch.isfinite(x[start:start + 4096].reshape(min(4096, len(x) - start), -1)).all(1)
        if not bool(finite.all()):
            first = start + int((~finite).nonzero()[0])
            raise ValueError(f"{what} have NaN or inf values (first at example {first}): remove or replace them")
    head = x[:1000]
    pixels = float(head.min()) >= 0 and 1.5 < float(head.max()) <= 255 and bool((head == head.round()).all())
    if x.dim() >= 3 and pixels:
        warnings.warn(f"{what} hold integers in [0, {float(head.max()):g}], raw pixels? The models expect "
                      f"[0, 1]: {_pixel_fix(x).replace('x.float().', 'x.')}", stacklevel=4)


def _check_targets(y: torch.Tensor, what: str, loss) -> None:
    if loss != "cross_entropy":
        return
    if y.is_floating_point():
        if y.dim() != 2:
            raise ValueError(f"{what} are {_describe(y)}: cross-entropy takes class indices (convert with "
                             "y.long()) or one probability row per example [N, classes]")
        if not bool(torch.isfinite(y).all()):
            raise ValueError(f"{what} have NaN or inf values: remove or replace them")
        return
    if y.dtype != torch.int64:
        raise ValueError(f"{what} are {_describe(y)}: class indices must be int64; convert with y.long()")
    if y.dim() != 1:
        raise ValueError(f"{what} are {_describe(y)}: one class index per example, shape [N]; e.g. y.reshape(-1)")
    if int(y.min()) < 0:
        raise ValueError(f"{what} have a negative class index ({int(y.min())}): labels must be 0..classes-1")


def _probe(model: nn.Module, xs: tuple[torch.Tensor, ...], device: torch.device) -> torch.Tensor:
    """The model's outputs on the first two examples, changing nothing (eval mode, no gradient,
    the random state of the CPU and of ``device`` restored)."""
    was_training = model.training
    cuda = [device] if device.type == "cuda" else []
    try:
        model.eval()
        with torch.no_grad(), torch.random.fork_rng(devices=cuda):
            return model(*(x[:2].to(device) for x in xs))
    finally:
        model.train(was_training)


def _shape_hint(model: nn.Module, xs: tuple[torch.Tensor, ...]) -> str:
    conv = next((m for m in model.modules() if isinstance(m, nn.Conv2d)), None)
    x = xs[0]
    if conv is not None and x.dim() == 3:
        return "; images need a channel axis: x.unsqueeze(1)"
    if conv is not None and x.dim() == 4 and x.shape[1] != conv.in_channels and x.shape[-1] == conv.in_channels:
        return "; channels come first, [N, C, H, W]: x.permute(0, 3, 1, 2)"
    return ""


def check(model: nn.Module, xs: tuple[torch.Tensor, ...], y: torch.Tensor, name: str, loss,
          device: torch.device) -> None:
    """Check ``name`` (``train_data``, ``test_data``, ...: inputs ``xs``, targets ``y``) against
    ``model`` and ``loss``; ValueError naming the fix (module docstring)."""
    floats = {p.dtype for p in model.parameters() if p.is_floating_point()}
    param_dtype = floats.pop() if len(floats) == 1 else None
    for i, x in enumerate(xs):
        _check_input(x, f"{name} inputs" + (f"[{i}]" if len(xs) > 1 else ""), param_dtype)
    _check_targets(y, f"{name} targets", loss)
    try:
        out = _probe(model, xs, device)
    except (RuntimeError, ValueError, TypeError, IndexError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        shapes = ", ".join(_describe(x) for x in xs)
        raise ValueError(f"{name}: the model cannot take inputs {shapes} ({first}){_shape_hint(model, xs)}") from None
    if loss == "cross_entropy" and torch.is_tensor(out) and out.dim() == 2:
        classes = out.shape[1]
        if y.is_floating_point() and y.shape[1] != classes:
            raise ValueError(f"{name} targets have {y.shape[1]} probabilities per example, the model {classes} outputs")
        if not y.is_floating_point() and int(y.max()) >= classes:
            raise ValueError(f"{name} targets have class {int(y.max())} but the model has {classes} outputs "
                             f"(classes 0..{classes - 1}): labels must be 0..classes-1, or a model with more outputs")
