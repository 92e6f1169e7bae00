"""Fault injection for resume tests: a run killed at the start of an epoch, as a crash or a kill
would leave it (the checkpoint holds the epochs before it)."""

from __future__ import annotations

from dpnotes.train.plugins import Plugin


class Interrupted(Exception):
    """The injected fault; ``pytest.raises(Interrupted)`` around the run that dies."""


class StopAtEpoch(Plugin):
    """Raises :class:`Interrupted` when epoch ``epoch`` (0-based) starts. Resume with a plain
    ``Plugin()`` in its place, so that the plugin list keeps its length."""

    name = "stop"

    def __init__(self, epoch: int):
        self.epoch = epoch

    def on_epoch_start(self, ctx, epoch):
        if epoch == self.epoch:
            raise Interrupted


def die_at_epoch(plugin: Plugin, epoch: int) -> Plugin:
    """``plugin`` with its ``on_epoch_start`` raising :class:`Interrupted` at ``epoch`` (and
    behaving as before until then): a fault inside a method's own hook."""
    original = plugin.on_epoch_start

    def die(ctx, e):
        if e == epoch:
            raise Interrupted
        original(ctx, e)

    plugin.on_epoch_start = die
    return plugin


def without_wall(epochs: list[dict]) -> list[dict]:
    """Epoch records without their wall times (the only field a resumed run may change)."""
    return [{k: v for k, v in r.items() if k != "wall_s"} for r in epochs]
