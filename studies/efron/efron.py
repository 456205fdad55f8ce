"""Efron's comparison measured: LDA against logistic regression on two Gaussian classes with a
shared covariance, as the training-set size m grows, for several separations.

Efron (1975) measured how much of LDA's efficiency logistic regression keeps when LDA's model
is true: two classes ``N(mu_0, Sigma)``, ``N(mu_1, Sigma)``, equal priors, Mahalanobis
distance Delta between them. Both rules then converge to the Bayes rule, and each one's
expected excess error over the Bayes error falls like ``c / m``; the asymptotic relative
efficiency is the ratio of the two constants,

    ARE(Delta) = lim E[err(LDA) - Bayes] / E[err(LR) - Bayes]   (m -> infinity),

at most 1 (LDA is the maximum-likelihood fit of the true model). This script

1. computes ARE(Delta) from that definition, to first order in 1/m: each estimator's
   asymptotic covariance (LR: the inverse Fisher information of the logistic likelihood;
   LDA: the delta method through its plug-in formula, from the sampling covariance of the
   class prior, means and pooled covariance), weighted by the Hessian of the error rate at
   the Bayes rule, ``ARE = tr(H V_LDA) / tr(H V_LR)``; integrals by Gauss-Hermite
   quadrature, derivatives by central differences;
2. measures it: for each Delta and m, S training sets drawn from the two Gaussians
   (``N(-Delta/2 e_1, I)`` and ``N(+Delta/2 e_1, I)``: every shared covariance is this one
   after an affine map, under which LDA and unpenalised LR are invariant), fitted by
   nbvslr's own ``lda`` and ``lr`` entries (all splits at once, the paper's rule for a
   separable training set: the error averaged over separating hyperplanes drawn uniformly),
   and each fitted rule's *exact* error computed from the Gaussians (no test set): for a rule
   ``w . x + b``, ``err = (Phi((w . mu_0 + b) / |w|) + Phi(-(w . mu_1 + b) / |w|)) / 2``;
3. writes ``efron.csv`` (one row per Delta and m: both mean excess errors, their standard
   errors, the measured ratio and the ARE), ``are.csv`` and ``efron.png``.

Usage::

    python studies/efron/efron.py --out results/efron            # make refresh-efron
    python studies/efron/efron.py --out /tmp/efron --splits 200  # quicker
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from nbvslr.data.dataset import Dataset
from nbvslr.models import ModelSpec, resolve_options
from nbvslr.models.design import get_design
from nbvslr.models.registry import lookup
from nbvslr.splits import split_seeds

DELTAS = (1.0, 2.0, 3.0, 4.0)
SIZES = (10, 20, 40, 80, 160, 320, 640)
FEATURES = 2
SPLITS = 2000
SEED = 0
CHUNK = 250  # splits fitted at once (memory)


def phi(z: np.ndarray) -> np.ndarray:
    """Standard normal CDF."""
    from scipy.special import ndtr

    return ndtr(z)


# --------------------------------------------------------------------------- theory
def error_rate(beta: np.ndarray, delta: float, d: int) -> float:
    """Exact error of the rule ``w . x + b > 0 -> class 1`` (beta = (w, b)) on the two
    classes ``N(-+delta/2 e_1, I)`` with equal priors."""
    w, b = beta[:d], beta[d]
    norm = float(np.linalg.norm(w))
    mu = delta / 2.0 * w[0]  # w . mu_1; w . mu_0 = -mu
    return 0.5 * float(phi((-mu + b) / norm) + phi(-(mu + b) / norm))


def _hessian(f, x: np.ndarray, h: float = 1e-4) -> np.ndarray:
    n = x.size
    H = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            e_i, e_j = np.eye(n)[i] * h, np.eye(n)[j] * h
            H[i, j] = (f(x + e_i + e_j) - f(x + e_i - e_j) - f(x - e_i + e_j)
                       + f(x - e_i - e_j)) / (4 * h * h)
    return 0.5 * (H + H.T)


def lr_covariance(delta: float, d: int, nodes: int = 80) -> np.ndarray:
    """The inverse Fisher information of logistic regression at the true log-odds
    ``delta x_1`` (per example), over ``z = (x, 1)``, by Gauss-Hermite quadrature in x_1
    (the other coordinates are N(0, 1) in both classes, independent of x_1)."""
    t, wt = np.polynomial.hermite_e.hermegauss(nodes)
    wt = wt / wt.sum()
    info = np.zeros((d + 1, d + 1))
    for sign in (-1.0, 1.0):
        x1 = sign * delta / 2.0 + t  # (q,) class of mean sign delta/2
        p = 1.0 / (1.0 + np.exp(-delta * x1))
        v = 0.5 * wt * p * (1.0 - p)  # the class's half of the mixture
        info[0, 0] += (v * x1 * x1).sum()
        info[0, d] += (v * x1).sum()
        info[d, d] += v.sum()
        for j in range(1, d):
            info[j, j] += v.sum()  # E[x_j^2] = 1, the cross terms vanish
    info[d, 0] = info[0, d]
    return np.linalg.inv(info)


def lda_rule(theta: np.ndarray, d: int) -> np.ndarray:
    """LDA's (w, b) from (pi_1, mu_0, mu_1, vech Sigma)."""
    pi = theta[0]
    mu0, mu1 = theta[1 : 1 + d], theta[1 + d : 1 + 2 * d]
    S = np.zeros((d, d))
    S[np.triu_indices(d)] = theta[1 + 2 * d :]
    S = S + S.T - np.diag(np.diag(S))
    P = np.linalg.inv(S)
    w = P @ (mu1 - mu0)
    b = -0.5 * (mu1 @ P @ mu1 - mu0 @ P @ mu0) + math.log(pi / (1.0 - pi))
    return np.concatenate([w, [b]])


def lda_covariance(delta: float, d: int, h: float = 1e-6) -> np.ndarray:
    """The asymptotic covariance (per example) of LDA's (w, b), by the delta method: the
    prior ``pi_1`` (variance pi (1 - pi)), each class mean (Sigma / (m pi_k)) and the pooled
    ML covariance (``Cov(s_ij, s_kl) = s_ik s_jl + s_il s_jk``), independent."""
    mu = np.zeros(d)
    mu[0] = delta / 2.0
    iu = np.triu_indices(d)
    theta = np.concatenate([[0.5], -mu, mu, np.eye(d)[iu]])
    n = theta.size
    J = np.empty((d + 1, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = h
        J[:, k] = (lda_rule(theta + e, d) - lda_rule(theta - e, d)) / (2 * h)
    V = np.zeros((n, n))
    V[0, 0] = 0.25
    V[1 : 1 + d, 1 : 1 + d] = np.eye(d) / 0.5
    V[1 + d : 1 + 2 * d, 1 + d : 1 + 2 * d] = np.eye(d) / 0.5
    pairs = list(zip(*iu, strict=True))
    eye = np.eye(d)
    for a, (i, j) in enumerate(pairs):
        for b, (k, l) in enumerate(pairs):
            V[1 + 2 * d + a, 1 + 2 * d + b] = eye[i, k] * eye[j, l] + eye[i, l] * eye[j, k]
    return J @ V @ J.T


def are(delta: float, d: int) -> dict[str, float]:
    """ARE(delta) and the two first-order constants ``c`` of ``E[excess] ~ c / m``."""
    beta = np.concatenate([[delta], np.zeros(d)])  # the Bayes rule: delta x_1
    H = _hessian(lambda x: error_rate(x, delta, d), beta)
    c_lda = 0.5 * float(np.trace(H @ lda_covariance(delta, d)))
    c_lr = 0.5 * float(np.trace(H @ lr_covariance(delta, d)))
    return {"delta": delta, "features": d, "c_lda": c_lda, "c_lr": c_lr, "are": c_lda / c_lr,
            "bayes_error": float(phi(-delta / 2.0))}


# --------------------------------------------------------------------------- measured
def exact_errors(theta: np.ndarray, delta: float) -> np.ndarray:
    """Exact errors of rules (..., d + 1) on the two Gaussians."""
    w, b = theta[..., :-1], theta[..., -1]
    norm = np.linalg.norm(w, axis=-1)
    mu = delta / 2.0 * w[..., 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        err = 0.5 * (phi((-mu + b) / norm) + phi(-(mu + b) / norm))
    return np.where(norm > 0, err, 0.5)  # w = 0: every row scores b, a coin flip at best


def draw(delta: float, d: int, m: int, S: int, rng: np.random.Generator):
    """S training sets of m rows, each holding both classes: X (S m, d), y (S m,)."""
    y = rng.integers(0, 2, size=(S, m))
    bad = (y.sum(axis=1) == 0) | (y.sum(axis=1) == m)
    while bad.any():  # redraw a one-class training set (rare past m = 10)
        y[bad] = rng.integers(0, 2, size=(int(bad.sum()), m))
        bad = (y.sum(axis=1) == 0) | (y.sum(axis=1) == m)
    X = rng.standard_normal((S, m, d))
    X[:, :, 0] += (y - 0.5) * delta
    return X.reshape(S * m, d), y.reshape(S * m)


def measure(delta: float, d: int, m: int, S: int, seed: int) -> dict[str, np.ndarray]:
    """The exact errors of ``lda`` and ``lr`` fitted to S training sets of size m."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, int(1000 * delta), m]))
    out: dict[str, list[np.ndarray]] = {"lda": [], "lr": [], "separable": []}
    for lo in range(0, S, CHUNK):
        s = min(CHUNK, S - lo)
        X, y = draw(delta, d, m, s, rng)
        data = Dataset(name=f"efron-{delta:g}", title="efron", X=X, y=y.astype(np.int8),
                       kind="continuous")
        idx = np.arange(s * m).reshape(s, m)
        _, seeds = split_seeds(seed, data.name, m, range(lo, lo + s))
        for name in ("lda", "lr"):
            spec = ModelSpec(name, name, resolve_options(name, name, {}))
            entry = lookup(name, "continuous")
            fit = entry.fit(data, get_design(data, entry.design(data, spec.options)), idx,
                            spec.options, seeds)
            err = exact_errors(fit.theta, delta)  # (s,)
            if fit.sampled.size:  # the paper's rule: the mean over the drawn hyperplanes
                err[fit.sampled] = exact_errors(fit.draws, delta).mean(axis=1)
            out[name].append(err)
            if name == "lr":
                out["separable"].append(fit.separable)
    return {k: np.concatenate(v) for k, v in out.items()}


def run(out: Path, deltas=DELTAS, sizes=SIZES, d: int = FEATURES, splits: int = SPLITS,
        seed: int = SEED) -> pd.DataFrame:
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    theory = pd.DataFrame([are(delta, d) for delta in deltas])
    rows = []
    for delta in deltas:
        bayes = float(phi(-delta / 2.0))
        c = theory.set_index("delta").loc[delta]
        for m in sizes:
            got = measure(delta, d, m, splits, seed)
            ex_lda, ex_lr = got["lda"] - bayes, got["lr"] - bayes
            n = ex_lda.size
            rows.append({
                "delta": delta, "m": m, "splits": n, "bayes_error": bayes,
                "excess_lda": ex_lda.mean(), "excess_lda_sem": ex_lda.std(ddof=1) / n ** 0.5,
                "excess_lr": ex_lr.mean(), "excess_lr_sem": ex_lr.std(ddof=1) / n ** 0.5,
                "ratio": ex_lda.mean() / ex_lr.mean(),
                "ratio_sem": _ratio_sem(ex_lda, ex_lr),
                "separable_lr": float(got["separable"].mean()),
                "first_order_lda": c["c_lda"] / m, "first_order_lr": c["c_lr"] / m,
                "are": c["are"],
            })
            print(f"Delta {delta:g} m {m}: excess LDA {ex_lda.mean():.5f}, LR {ex_lr.mean():.5f},"
                  f" ratio {rows[-1]['ratio']:.3f} (ARE {c['are']:.3f}), separable "
                  f"{100 * rows[-1]['separable_lr']:.0f}%", flush=True)
    table = pd.DataFrame(rows)
    table.to_csv(out / "efron.csv", index=False, float_format="%.6g", lineterminator="\n")
    theory.to_csv(out / "are.csv", index=False, float_format="%.6g", lineterminator="\n")
    figure(table).savefig(out / "efron.png", dpi=120, metadata={"Software": None})
    (out / "study.json").write_text(json.dumps({
        "deltas": list(deltas), "sizes": list(sizes), "features": d, "splits": splits,
        "seed": seed, "seconds": round(time.time() - t0, 1)}, indent=2) + "\n")
    return table


def _ratio_sem(a: np.ndarray, b: np.ndarray) -> float:
    """The delta-method standard error of mean(a) / mean(b), a and b paired."""
    ma, mb = a.mean(), b.mean()
    g = np.stack([a - ma, -(ma / mb) * (b - mb)]).sum(axis=0) / mb  # (n,)
    return float(g.std(ddof=1) / a.size ** 0.5)


def figure(table: pd.DataFrame) -> Figure:
    """Left: both excess errors against m (log-log) with their first-order c / m; right: the
    measured ratio against m with ARE(Delta) as a horizontal line."""
    fig = Figure(figsize=(10, 4.2), layout="constrained")
    ax, bx = fig.subplots(1, 2)
    colors = ("tab:blue", "tab:green", "tab:orange", "tab:red", "tab:purple")
    for k, (delta, g) in enumerate(table.groupby("delta")):
        c = colors[k % len(colors)]
        ax.plot(g["m"], g["excess_lda"], "-o", color=c, ms=3, label=f"LDA, Δ = {delta:g}")
        ax.plot(g["m"], g["excess_lr"], "--s", color=c, ms=3, label=f"LR, Δ = {delta:g}")
        ax.plot(g["m"], g["first_order_lda"], ":", color=c, lw=0.8)
        ax.plot(g["m"], g["first_order_lr"], ":", color=c, lw=0.8)
        bx.errorbar(g["m"], g["ratio"], yerr=1.96 * g["ratio_sem"], fmt="-o", color=c, ms=3,
                    capsize=2, label=f"Δ = {delta:g}")
        bx.axhline(float(g["are"].iloc[0]), color=c, lw=0.8, ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("m")
    ax.set_ylabel("expected excess error over Bayes")
    ax.set_title("LDA solid, LR dashed; dotted: first order c / m", fontsize="medium")
    ax.legend(fontsize="x-small", ncols=2)
    bx.set_xscale("log")
    bx.set_xlabel("m")
    bx.set_ylabel("excess(LDA) / excess(LR)")
    bx.set_title("measured ratio (95% interval); dotted: Efron's ARE", fontsize="medium")
    bx.legend(fontsize="small")
    return fig


def _at_least(low: int):
    """An argparse type: an integer of at least ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}; give at least {low}")
        return value

    return parse


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--splits", type=_at_least(2), default=SPLITS,
                    help=f"training sets per separation and size, at least 2 (default {SPLITS})")
    ap.add_argument("--features", type=_at_least(1), default=FEATURES,
                    help=f"features d, at least 1 (default {FEATURES})")
    args = ap.parse_args(argv)
    run(args.out, d=args.features, splits=args.splits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
