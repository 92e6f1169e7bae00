"""One name per thing: the reader's name of every raw id a renderer meets (boxes, tables, legends, captions).

Claim ids, experiment names, record fields and column keys are written for code (``fmnist.eps1``,
``dpsgd_hf``, ``mnist_mlp``, ``tau``); a reader sees "Fashion-MNIST, ε = 1", "DP-SGD-HF", "MNIST MLP", "τ".
Every renderer under :mod:`dpnotes.report` passes what it shows through this module:

- :func:`name`: one id, dotted or not, as words (``dpis.table3.fmnist.eps1.dpsgd_hf`` ->
  "DPIS Table 3, Fashion-MNIST, ε = 1, DP-SGD-HF");
- :func:`words`: free text (a caption, a note, a table cell) with every id in it named;
- :func:`markdown`: the same for Markdown, where a code span holding only an id becomes its name;
- :func:`header`: a table's column header;
- :func:`number` and :func:`difference`: a value at the paper's precision, a difference always signed and
  never "−0.00".
"""

from __future__ import annotations

import math
import re

PAPERS = {"dplis": "DPlis", "dpis": "DPIS", "gdp": "GDP", "labeldp": "LabelDP", "sadpsgd": "SA-DPSGD",
          "audit": "the audit"}
DATASETS = {
    "mnist": "MNIST", "fmnist": "Fashion-MNIST", "cifar10": "CIFAR-10", "cifar100": "CIFAR-100", "imdb": "IMDb",
    "adult": "Adult", "svhn": "SVHN", "kmnist": "KMNIST", "movielens": "MovieLens", "celeba": "CelebA",
    "pubfig83": "PubFig83", "celeba1000": "CelebA1000", "imagenet": "ImageNet", "reddit": "Reddit",
    "imagenet_cifar100": "ImageNet → CIFAR-100", "celeba_pubfig83": "CelebA → PubFig83",
    "celeba_celeba1000": "CelebA → CelebA1000", "mnist_fmnist": "MNIST and Fashion-MNIST",
    "fashion_mnist": "Fashion-MNIST",
}
METHODS = {
    "dpsgd": "DP-SGD", "dpsgd_hf": "DP-SGD-HF", "dpsgd_ts": "DP-SGD-TS", "dpsgd_decay": "DP-SGD-Decay",
    "dpis": "DPIS", "dpis_ac": "DPIS with AC", "dpis_no_ac": "DPIS without AC", "non_dp": "non-private",
    "nonprivate": "non-private", "sa_dpsgd": "SA-DPSGD", "sa_dpsgd_tuned": "SA-DPSGD, tuned",
    "dpsgd_tanh": "DP-SGD, tanh", "dpsgd_auto_s": "DP-SGD, AUTO-S", "dpsgd_pretrain": "DP-SGD, pretrained",
    "lp_1st": "LP-1ST", "lp_2st": "LP-2ST", "lp_1st_pretrain": "LP-1ST, pretrained",
    "lp_2st_pretrain": "LP-2ST, pretrained", "rr": "RR", "rr_with_prior": "RRWithPrior", "rr_top_k": "RRTop-k",
    "k_star": "k*", "pate_g": "PATE-G", "global_average": "global average", "baseline_only": "baseline only",
    "usercf": "user CF", "svd": "SVD", "nmf": "NMF", "lstm": "LSTM", "dplis": "DPlis",
    "private": "private", "clt": "CLT", "ma": "moments accountant",
}
MODELS = {
    "mnist_mlp": "MNIST MLP", "mnist_cnn": "MNIST CNN", "cifar10_mlp": "CIFAR-10 MLP", "cifar10_cnn": "CIFAR-10 CNN",
    "cifar10_cnn_tanh": "CIFAR-10 CNN, tanh", "mlp": "MLP", "cnn": "CNN",
}
# DPlis's arms and quantities; GDP's, SA-DPSGD's and LabelDP's columns; settings.
QUANTITIES = {
    "no": "No (DP-SGD)", "r10": "R = 10", "r30": "R = 30", "r40": "R = 40", "rbest": "R_best",
    "acc_no": "No, accuracy", "acc_r10": "R = 10, accuracy", "acc_rbest": "R_best, accuracy",
    "gain_r10": "gain of R = 10", "gain_rbest": "gain of R_best", "acc_yes": "smoothed, accuracy",
    "gain_yes": "gain of smoothing", "ppl_no": "No, perplexity", "ppl_r10": "R = 10, perplexity",
    "ppl_rbest": "R_best, perplexity", "ppl_change_r10": "change of R = 10, perplexity",
    "ppl_change_rbest": "change of R_best, perplexity", "sharpness_no": "sharpness, No",
    "sharpness_r10": "sharpness, R = 10", "range_min": "lowest of five", "range_max": "highest of five",
    "range_width": "range of five", "std": "SD", "p_correct": "labels correct", "epsilon": "ε",
    "accuracy": "accuracy", "mu": "μ", "eps_clt": "ε, CLT", "eps_ma": "ε, moments accountant", "rmse": "RMSE",
    "sigma_clt": "σ, CLT", "min_error_clt": "least error sum, CLT",
    "min_error_ma": "least error sum, moments accountant",
    "eps_a": "ε, DP-SGD, AUTO-S", "eps_h": "ε, DP-SGD, tanh", "eps_d": "ε, DP-SGD", "eps_s": "ε, SA-DPSGD",
    "n_train": "training examples", "n_classes": "classes", "n_train_per_class": "training examples per class",
    "lr_over_batch": "learning rate", "batch_size": "batch size", "k_bar": "k̄", "test_acc": "test accuracy",
    "test_rmse": "test RMSE", "label_epsilon": "label ε", "stage_sizes": "stage sizes", "train_sizes": "trained on",
    "dpis_sigma_start": "σ_G at the start", "dpis_sigma_end": "σ_G at the end", "dpsgd_sigma": "DP-SGD's σ",
    "accepted_steps": "accepted steps", "eval_every": "evaluated every", "noise_multiplier": "noise multiplier",
    "break_even_rate": "break-even acceptance rate",
    "lemma31_needs_ratio_above": "Lemma 3.1 needs a ratio above", "max_lp_minus_closed": "max LP − closed form",
    "min_lp_minus_closed": "min LP − closed form", "max_lp_dp_slack": "max LP DP slack",
    "mean_gain_over_rr": "mean gain over RR", "mean_k_star": "mean k*", "dpis_sigma_g": "σ_G", "dpis_k_tilde": "K~",
    "dpis_n_tilde": "N~", "dpis_min_margin": "least margin", "dpis_capped_draws": "capped draws",
    "dpis_drawn": "drawn", "dpis_kept": "kept", "dpis_ratio": "ratio", "a_e": "a_E", "c_star": "C*", "top": "top",
    "bottom": "bottom",
}
SYMBOLS = {"eps": "ε", "epsilon": "ε", "tau": "τ", "mu0": "μ0", "mu": "μ", "sigma": "σ", "delta": "δ", "eta": "η",
           "lambda": "λ", "sigma~": "σ̃", "dE": "ΔE", "T_max": "T_max"}
PARTS = {"table": "Table", "fig": "Figure", "figure": "Figure", "sec": "Sec.", "section": "Sec.", "thm": "Theorem",
         "row": "row", "col": "column", "value": "column", "app": "App.", "appendix": "Appendix", "alg": "Algorithm",
         "eq": "Eq.", "lemma": "Lemma", "cor": "Corollary", "obs": "Observation", "queries": "queries",
         "acc": "accuracy"}
NAMES = {**PAPERS, **DATASETS, **METHODS, **MODELS, **QUANTITIES}
# Words that are ids only inside a dotted id (in prose they are English or symbols): named there only.
ENGLISH = {"no", "top", "bottom", "private", "accuracy", "epsilon", "std", "mu", "clt", "ma", "svd", "nmf",
           "lstm", "mlp", "cnn", "rmse"}

_EPS = re.compile(r"eps(\d+)(?:_(\d+))?")
_NUMBERED = re.compile(r"(table|fig|figure|sec|section|thm|row|col|value|app|appendix|alg|eq|lemma|cor|obs|queries)"
                       r"(\d+(?:_\d+)*|[a-z]\d*)")
_SIGMA2 = re.compile(r"sigma2_(\d+)")
_ID = re.compile(r"(?<![\w./-])[A-Za-z][A-Za-z0-9~]*(?:[._][A-Za-z0-9]+)*(?![\w/-]|\.\w)")
_FILE = re.compile(r"\.(?:py|json|toml|ipynb|md|csv|npz|txt|sha256|png|html)$")


def part(token: str, *, dotted: bool = True) -> str | None:
    """The name of one part of an id, or None when it is not one (``dotted``: read inside a dotted id,
    where English words such as ``no`` are ids too)."""
    if token in NAMES and (dotted or token not in ENGLISH):
        return NAMES[token]
    if token in SYMBOLS and (dotted or token not in ("epsilon", "delta", "lambda")):
        return SYMBOLS[token]
    m = _EPS.fullmatch(token)
    if m:
        return f"ε = {m.group(1)}" + (f".{m.group(2)}" if m.group(2) else "")
    m = _SIGMA2.fullmatch(token)
    if m:
        return f"σ² = {m.group(1)}"
    m = _NUMBERED.fullmatch(token)
    if m and dotted:
        kind, num = m.groups()
        num = num.upper() if kind.startswith("app") else num.replace("_", ".")
        return f"{PARTS[kind]} {num}"
    for prefix in ("a_e", "c_star", "k", "lambda_pm", "acc"):  # DPIS ablations (a_e0_8 -> a_E = 0.8), LabelDP's k3
        if dotted and token.startswith(prefix) and re.fullmatch(r"\d+(?:_\d+)*", token[len(prefix):] or "x"):
            label = {"a_e": "a_E", "c_star": "C*", "k": "k", "lambda_pm": "λ ±", "acc": "accuracy level"}[prefix]
            return f"{label} = {token[len(prefix):].replace('_', '.')}"
    return None


def name(raw: str) -> str:
    """An id as words: each dotted part named (:func:`part`), an unknown part word by word;
    the paper's name leads (``gdp.table1.row2.eps_clt`` -> "GDP Table 1, row 2, ε, CLT")."""
    parts = re.sub(r"(?<=_[a-z])(\d+)\.(\d)", r"\1_\2", str(raw)).split(".")  # a_e0.6: a decimal, not a part
    named = [part(p) or " ".join(part(w) or w for w in p.split("_")) for p in parts]
    if len(parts) > 1 and parts[0] in PAPERS and parts[0] != "audit":
        return f"{named[0]} {', '.join(named[1:])}"
    return ", ".join(named)


def _is_id(token: str) -> bool:
    """A token of free text that is an id: a known single id, or a dotted or snake_case one
    with at least one part known."""
    if _FILE.search(token) or re.fullmatch(r"\d.*", token):
        return False
    if part(token, dotted=False) is not None:
        return True
    if "." in token:
        parts = token.split(".")
        return (all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_~]*|\d+", p) for p in parts[1:])
                and re.fullmatch(r"[A-Za-z][A-Za-z0-9_~]*", parts[0]) is not None and any(part(p) for p in parts))
    return "_" in token and token == token.lower()


_HASHES = re.compile(r"\b[0-9a-f]{16}\b(?:,\s*[0-9a-f]{16}\b)*")


def hashes(text: str) -> str:
    """``text`` with each list of record ids (16-hex hashes) replaced by their count: the ids are provenance,
    shown folded with the claim (the claims table's records)."""
    return _HASHES.sub("(their record ids are listed with the claim)", text)


def words(text: str) -> str:
    """``text`` with every id in it named (:func:`name`), a snake_case word nobody named spelled with spaces,
    and record ids counted (:func:`hashes`)."""
    if not isinstance(text, str):
        return text
    text = hashes(text)
    if "$" in text:
        return text
    return _ID.sub(lambda m: name(m.group()) if _is_id(m.group()) else m.group(), text)


def cell(text: str) -> str:
    """A table cell's text: a whole cell that is one id named even when the word is English in prose
    (``clt`` -> "CLT", ``ma`` -> "moments accountant"; ``no`` stays "no"), else as :func:`words`."""
    if isinstance(text, str) and text in NAMES and text not in ("no", "top", "bottom", "private", "accuracy"):
        return NAMES[text]
    return words(text)


def markdown(text: str) -> str:
    """:func:`words` for Markdown: outside code spans as :func:`words`; a code span holding only an id
    becomes its name; other code (a command, a keyword argument) is left as written."""
    out = []
    for k, piece in enumerate(re.split(r"(`[^`]*`)", text)):
        if k % 2:
            inner = piece[1:-1]
            sub = re.fullmatch(r"([A-Za-z][\w.~]*)\[(.+)\]", inner)  # a claim's comparison: id[what]
            if sub and _is_id(sub.group(1)):
                out.append(f"{name(sub.group(1))} ({words(sub.group(2))})")
                continue
            code = inner.startswith(("dpnotes.", "tests.")) or re.search(r"[A-Z]{3}|\(", inner)  # Python names
            out.append(name(inner) if re.fullmatch(r"[A-Za-z][\w.~]*", inner) and not code and _is_id(inner)
                       else piece)
        else:
            out.append(words(piece))
    return "".join(out)


def header(column) -> str:
    """A table's column header: its words named (``eps CLT ours`` -> "ε CLT ours", ``mu0`` -> "μ0")."""
    text = str(column)
    if text in SYMBOLS:  # a header that is one symbol: delta -> δ
        return SYMBOLS[text]
    if text in NAMES and text not in ("no", "top", "bottom", "private", "accuracy"):  # one id: clt -> CLT
        return NAMES[text]
    return " ".join("∞" if w == "inf" else part(w, dotted=False) or words(w) for w in text.split(" ")) if text else text


def together(html: str) -> str:
    """Escaped text with each "ε = 1.99" (a symbol, "=", a value) kept on one line, in any renderer."""
    return re.sub(r"([εσμτδηλ] = (?:[−+]?[\d.]*\d|∞))", r'<span style="white-space:nowrap">\1</span>', html)


def decimals(paper_value: str | None) -> int | None:
    """The decimals the paper printed a value with (``"92.60"`` -> 2), None when it is no plain number."""
    if paper_value is None:
        return None
    m = re.fullmatch(r"[+-−]?\d+(?:\.(\d+))?", str(paper_value).strip())
    return len(m.group(1) or "") if m else None


def number(value: float, digits: int, *, signed: bool = False) -> str:
    """``value`` with ``digits`` decimals and a true minus; ``signed``: a plus on a positive value;
    a value that rounds to zero is printed as zero, never "−0.00"."""
    if isinstance(value, float) and math.isinf(value):
        return "∞" if value > 0 else "−∞"
    rounded = round(float(value), digits)
    if rounded == 0:
        return f"{0:.{digits}f}"
    text = f"{rounded:+.{digits}f}" if signed else f"{rounded:.{digits}f}"
    return text.replace("-", "−")


def difference(value: float, digits: int) -> str:
    """A difference, always signed (``+0.13``, ``−0.58``), zero as "0.00" (never "−0.00")."""
    return number(value, digits, signed=True)
