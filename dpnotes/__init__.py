"""dpnotes: reproducing differentially private deep learning papers.

Subpackages
-----------
accounting   privacy accountants (RDP, GDP/CLT, PRV) and paper-specific ones (DPIS, SA-DPSGD)
mechanisms   Gaussian, randomized response, RRWithPrior, discrete Laplace
data         dataset loaders (cache -> mirrors -> official URLs, checksummed)
models       the papers' architectures, by name
train        the DP-SGD engine and its plug-in points
experiments  one module per paper: run grids per profile and our values for its claims
claims       the papers' published numbers (the only place they are typed in)
results      run records: content-addressed, atomic, resumable
report       verdicts (report.verdicts, the only place they are decided), paper-vs-ours tables
"""

__version__ = "0.1.0"
