"""Time of noise calibration (sigma for a target eps) per accountant, on typical DP-SGD runs.

Run: ``python benchmarks/calibration.py``. Target on a 2-core CPU: RDP under 0.2 s.
"""

import time

from dpnotes.accounting import epsilon, noise_multiplier

RUNS = [  # (name, q, steps, delta, target eps)
    ("MNIST B=256, 60 epochs", 256 / 60000, 60 * 60000 / 256, 1e-5, 3.0),
    ("CIFAR-10 B=512, 100 epochs", 512 / 50000, 100 * 50000 / 512, 1e-5, 8.0),
    ("IMDb B=512, 9 epochs", 512 / 25000, 9 * 25000 / 512, 1e-5, 1.0),
]

for name, q, steps, delta, target in RUNS:
    for accountant in ("rdp", "rdp-classic", "clt"):
        start = time.perf_counter()
        sigma = noise_multiplier(target, q, steps, delta, accountant=accountant)
        seconds = time.perf_counter() - start
        spent = epsilon(q, sigma, steps, delta, accountant)[accountant]["epsilon"]
        print(f"{name:<28} {accountant:<12} sigma {sigma:9.6f}  eps {spent:8.5f} <= {target}  {seconds * 1000:7.1f} ms")
