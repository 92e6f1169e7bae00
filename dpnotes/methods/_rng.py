"""Each method's own random stream, seeded from the run seed.

A method's randomness (DPlis' parameter perturbations, SA-DPSGD's acceptance draws) comes
from a generator of its own (on the CPU; DPlis' on the parameters' device), never from the
loop's ``sample_gen``/``noise_gen`` (batches, DP noise) or the ``aux_gen`` other plug-ins use. A run of the
method and its baseline with the same seed therefore see the same batches and the same DP noise
(paired runs), and the method's draws do not depend on which other plug-ins run beside it.
"""

from __future__ import annotations

import zlib

import numpy as np
import torch


def method_generator(seed: int, method: str, device: str | torch.device = "cpu") -> torch.Generator:
    """A generator for ``method`` in the run with ``seed``: the seed is mixed with the
    method's name (``SeedSequence``), so it differs from the loop's generators (seed,
    seed + 1, ...) and from every other method's, and from those of runs with other seeds.
    On the CPU unless ``device`` names another: a method that draws whole parameter-sized
    tensors every step (DPlis) draws them where the parameters live."""
    entropy = (seed, zlib.crc32(method.encode()))
    state = np.random.SeedSequence(entropy).generate_state(1, np.uint64)[0]
    return torch.Generator(torch.device(device)).manual_seed(int(state) >> 1)
