"""Compiled loops of the text models (``nbvslr.models.text.fit``): class sums of each split's
training rows, L2 logistic regression on word counts one split at a time, and the held-out
mistakes of many hyperplanes over a sparse (N, V) matrix.

``split_class_sums`` adds each split's training rows into dense (S, V) sums per class,
O(the splits' non-zeros); the sums of counts are exact, so naive Bayes built on them does
not depend on the order.

``lr_newton_cg`` fits every split in turn, each on its own rows and words only: the split's
training rows are copied out of the task's CSR counts with their columns renumbered to the
words the split keeps (first-seen order), so a split costs O(its non-zeros) per pass and
never touches the others' words. Newton-CG per split (``models.text.fit`` states the objective
and the stopping rule): the gradient in one pass over the rows; each conjugate-gradient step
one fused pass (``u_i = x_i . p``, then ``H p += D_i u_i x_i``), which also sums ``X d``
(``X p`` times CG's step), so the backtracking line search tries each step in O(m) (the
margins are ``z + step X d``). A split's result does not depend on which other splits share
the call.

``heldout_mistakes`` scores each hyperplane on the rows of a CSR matrix outside its own
training rows and counts its mistakes (a tie, ``|score| <= tau``, counts one half);
``heldout_metrics`` does so with the log-loss and Brier sums of the same scores and the
mistakes on the training rows (a run that measures every metric makes each score once).
"""

from __future__ import annotations

import math

import numpy as np

from nbvslr.kernels.jit import compiled
from nbvslr.kernels.losses import BLOCK


@compiled
def _split_rows(indptr, indices, data, rows, keep_row, word_of, local, sp_ptr, sp_col, sp_val):
    """The CSR of one split's training rows over its kept words, columns renumbered.

    ``local`` (V,) must hold -1 everywhere on entry; on return it holds the new number of
    each word seen (reset it from ``word_of[:n_words]`` afterwards). Returns (n_words, nnz).
    """
    n_words = 0
    k = 0
    sp_ptr[0] = 0
    for r in range(rows.shape[0]):
        i = rows[r]
        for q in range(indptr[i], indptr[i + 1]):
            j = indices[q]
            if keep_row[j]:
                c = local[j]
                if c < 0:
                    c = n_words
                    local[j] = c
                    word_of[c] = j
                    n_words += 1
                sp_col[k] = c
                sp_val[k] = data[q]
                k += 1
        sp_ptr[r + 1] = k
    return n_words, k


@compiled
def _dot(a, b, n):
    """sum(a[:n] * b[:n]) in four running sums (no chain of dependent adds)."""
    s0 = 0.0
    s1 = 0.0
    s2 = 0.0
    s3 = 0.0
    q = 0
    while q + 3 < n:
        s0 += a[q] * b[q]
        s1 += a[q + 1] * b[q + 1]
        s2 += a[q + 2] * b[q + 2]
        s3 += a[q + 3] * b[q + 3]
        q += 4
    while q < n:
        s0 += a[q] * b[q]
        q += 1
    return (s0 + s1) + (s2 + s3)


@compiled
def _newton_cg(ptr, col, val, t, P, C, tol, max_iter, w, cg_iter):
    """Newton-CG on one split: ``w`` (P,) (words, then the intercept) in place; returns
    (Newton steps, converged). ``cg_iter`` (1,) accumulates the CG steps taken."""
    m = t.shape[0]
    nw = P - 1
    z = np.zeros(m)
    D = np.empty(m)
    zd = np.empty(m)
    g = np.empty(P)
    d = np.empty(P)
    r = np.empty(P)
    p = np.empty(P)
    Hp = np.empty(P)
    xp = np.empty(m)
    # start: the words at 0, the intercept at the log-odds of the classes' counts
    n1 = 0.0
    for i in range(m):
        if t[i] > 0.0:
            n1 += 1.0
    for q in range(P):
        w[q] = 0.0
    if 0.0 < n1 < m:
        w[nw] = np.log(n1 / (m - n1))
    # e_i = exp(-|a_i|), a_i = -t_i z_i: the loss's exponential, kept for the next
    # gradient's sigma(t_i z_i) (the same values as computing them anew)
    e = np.empty(m)
    loss = 0.0
    for i in range(m):
        z[i] = w[nw]
        a = -t[i] * z[i]
        e[i] = np.exp(-abs(a))
        loss += max(a, 0.0) + np.log1p(e[i])
    f = C * loss
    steps = 0
    converged = False
    for _ in range(max_iter + 1):
        # gradient: C X^T q + w (the intercept unpenalised), and the Hessian's weights D
        for q in range(nw):
            g[q] = w[q]
        g[nw] = 0.0
        for i in range(m):
            # sigma(t z) from e: 1 / (1 + e) when t z >= 0, else e / (1 + e)
            s = 1.0 / (1.0 + e[i]) if t[i] * z[i] >= 0.0 else e[i] / (1.0 + e[i])
            qi = -C * t[i] * (1.0 - s)
            D[i] = C * s * (1.0 - s)
            for k in range(ptr[i], ptr[i + 1]):
                g[col[k]] += qi * val[k]
            g[nw] += qi
        gmax = 0.0
        for q in range(P):
            gmax = max(gmax, abs(g[q]))
        gg = _dot(g, g, P)
        if gmax <= tol:
            converged = True
            break
        if steps >= max_iter:
            break
        # conjugate gradients on H d = -g until the residual r (the gradient the quadratic
        # model predicts after the step) is below min(0.5, |g|) |g| (a forcing term that
        # makes the steps converge quadratically) or its largest component below tol / 2
        # (the step then meets the stopping rule up to the model's error: solving further
        # would not stop the fit sooner)
        gnorm = np.sqrt(gg)
        stop = (min(0.5, gnorm) * gnorm) ** 2
        rinf = gmax
        for i in range(m):
            zd[i] = 0.0
        # Hp holds p's penalty term (its words) before each pass adds C X^T D X p; pHp is
        # |p_words|^2 + sum_i D_i (x_i . p)^2, summed in the same sweeps
        for q in range(P):
            d[q] = 0.0
            r[q] = -g[q]
            p[q] = r[q]
            Hp[q] = r[q]
        Hp[nw] = 0.0
        pp = gg - g[nw] * g[nw]
        rr = gg
        for _k in range(P):
            if rr <= stop or rinf <= 0.5 * tol:
                break
            cg_iter[0] += 1
            # H p = C X^T D X p + p (the intercept unpenalised), one pass over the rows
            pb = p[nw]
            hb = 0.0
            quad = 0.0
            for i in range(m):
                u = pb
                for k in range(ptr[i], ptr[i + 1]):
                    u += val[k] * p[col[k]]
                xp[i] = u
                du = D[i] * u
                quad += du * u
                for k in range(ptr[i], ptr[i + 1]):
                    Hp[col[k]] += du * val[k]
                hb += du
            Hp[nw] = hb
            pHp = pp + quad
            if not pHp > 0.0:
                break
            alpha = rr / pHp
            rinf = 0.0
            rr_new = 0.0
            for q in range(P):
                d[q] += alpha * p[q]
                a = r[q] - alpha * Hp[q]
                r[q] = a
                rr_new += a * a
                rinf = max(rinf, abs(a))
            for i in range(m):
                zd[i] += alpha * xp[i]
            beta = rr_new / rr
            rr = rr_new
            pp = 0.0
            for q in range(nw):
                a = r[q] + beta * p[q]
                p[q] = a
                Hp[q] = a
                pp += a * a
            p[nw] = r[nw] + beta * p[nw]
            Hp[nw] = 0.0
        # backtracking (Armijo): the margins along d are z + step X d, X d summed by CG
        slope = _dot(g, d, P)
        ww = _dot(w, w, nw)
        wd = _dot(w, d, nw)
        dd = _dot(d, d, nw)
        # A rise below ROUNDING * |f| is the objective's rounding, not a rise: near the
        # optimum the fall a step brings is smaller than that and the full step is right.
        step = 1.0
        f_try = f
        for ls in range(30):  # the 30th trial is taken as it is
            loss = 0.0
            for i in range(m):
                a = -t[i] * (z[i] + step * zd[i])
                e[i] = np.exp(-abs(a))
                loss += max(a, 0.0) + np.log1p(e[i])
            f_try = C * loss + 0.5 * (ww + 2.0 * step * wd + step * step * dd)
            if f_try <= f + 1e-4 * step * slope + 1e-12 * abs(f) or ls == 29:
                break
            step *= 0.5
        for q in range(P):
            w[q] += step * d[q]
        for i in range(m):
            z[i] += step * zd[i]
        f = f_try
        steps += 1
    return steps, converged


@compiled
def lr_newton_cg(indptr, indices, data, sign, idx, keep, C, tol, max_iter, theta, n_iter,
                 converged, cg_iter):
    """L2 LR on the counts of S splits, each alone (see the module).

    indptr, indices, data : the task's CSR counts (N, V); sign : (N,) +-1 class signs;
    idx : (S, m) training rows; keep : (S, V) bool words kept; theta : (S, V + 1) zeros,
    filled (words, then the intercept); n_iter : (S,) int64; converged : (S,) bool;
    cg_iter : (1,) int64, the CG steps of all splits added.
    """
    S, m = idx.shape
    V = theta.shape[1] - 1
    local = -np.ones(V, dtype=np.int64)
    word_of = np.empty(V, dtype=np.int64)
    t = np.empty(m)
    for s in range(S):
        nnz = 0
        for r in range(m):
            i = idx[s, r]
            nnz += indptr[i + 1] - indptr[i]
            t[r] = sign[i]
        sp_ptr = np.empty(m + 1, dtype=np.int64)
        sp_col = np.empty(nnz, dtype=np.int32)
        sp_val = np.empty(nnz, dtype=data.dtype)
        n_words, _ = _split_rows(indptr, indices, data, idx[s], keep[s], word_of, local,
                                 sp_ptr, sp_col, sp_val)
        w = np.empty(n_words + 1)
        steps, ok = _newton_cg(sp_ptr, sp_col, sp_val, t, n_words + 1, C, tol, max_iter, w,
                               cg_iter)
        for c in range(n_words):
            theta[s, word_of[c]] = w[c]
            local[word_of[c]] = -1
        theta[s, V] = w[n_words]
        n_iter[s] = steps
        converged[s] = ok


@compiled
def heldout_mistakes(indptr, indices, data, sign, theta, tau, idx):
    """Mistakes of S hyperplanes (S, V + 1) on the rows of a CSR matrix outside each one's
    training rows ``idx`` (S, m): the held-out mistakes (S,), ties (``|score| <= tau[s]``)
    one half each. ``sign`` (N,) is +1 for class 1, -1 for class 0."""
    S = theta.shape[0]
    N = indptr.shape[0] - 1
    V = theta.shape[1] - 1
    m = idx.shape[1]
    out = np.zeros(S)
    train = np.zeros(N, dtype=np.bool_)
    for s in range(S):
        for r in range(m):
            train[idx[s, r]] = True
        b = theta[s, V]
        bad = 0.0
        for i in range(N):
            if train[i]:
                continue
            z = b
            for k in range(indptr[i], indptr[i + 1]):
                z += data[k] * theta[s, indices[k]]
            z *= sign[i]
            if z < -tau[s]:
                bad += 1.0
            elif z <= tau[s]:
                bad += 0.5
        for r in range(m):
            train[idx[s, r]] = False
        out[s] = bad
    return out


@compiled
def heldout_metrics(indptr, indices, data, sign, theta, tau, idx, p_low, p_high, out):
    """``heldout_mistakes`` with the other metrics of the same scores: per hyperplane s,
    ``out[s]`` = (held-out mistakes, held-out log-loss sum, held-out Brier sum, training
    mistakes), each row's score made once. The log-loss of a held-out row is ``-log`` of
    its true class's probability clipped to [p_low, p_high], its Brier term the squared
    probability of the other class; the probabilities as ``kernels.losses`` makes them
    (one ``exp`` per score, no cancellation), a ``log`` per ``losses.BLOCK`` rows of a
    running product. A training row's mistake counts ties one half, as a held-out one's.
    """
    S = theta.shape[0]
    N = indptr.shape[0] - 1
    V = theta.shape[1] - 1
    m = idx.shape[1]
    train = np.zeros(N, dtype=np.bool_)
    for s in range(S):
        for r in range(m):
            train[idx[s, r]] = True
        b = theta[s, V]
        t = tau[s]
        bad = 0.0
        bad_train = 0.0
        loss = 0.0
        brier = 0.0
        prod = 1.0
        held = 0
        for i in range(N):
            z = b
            for k in range(indptr[i], indptr[i + 1]):
                z += data[k] * theta[s, indices[k]]
            sz = z * sign[i]
            miss = 1.0 if sz < -t else (0.5 if sz <= t else 0.0)
            if train[i]:
                bad_train += miss
                continue
            bad += miss
            e = math.exp(-abs(z))
            q = 1.0 / (1.0 + e)  # the larger probability
            small = e * q  # the smaller, with no cancellation
            right = q if sz >= 0.0 else small  # the true class's (a tie: both 1/2)
            other = small if sz >= 0.0 else q
            prod *= min(max(right, p_low), p_high)
            brier += other * other
            held += 1
            if held == BLOCK:
                loss -= math.log(prod)
                prod = 1.0
                held = 0
        loss -= math.log(prod)
        for r in range(m):
            train[idx[s, r]] = False
        out[s, 0] = bad
        out[s, 1] = loss
        out[s, 2] = brier
        out[s, 3] = bad_train


@compiled
def split_class_sums(indptr, indices, data, idx, cls, keep, out):
    """``out[cls[i], s, j] += data`` over the non-zeros (i, j) of every training row i of
    every split s, for the words the split keeps: each class's column sums of the split's
    rows (S splits, idx (S, m); cls (N,) int64 in 0 .. out.shape[0] - 1; keep (S, V) bool;
    out (K, S, V) zeros, filled). Sums of counts: exact whatever the order."""
    S, m = idx.shape
    for s in range(S):
        for r in range(m):
            i = idx[s, r]
            c = cls[i]
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                if keep[s, j]:
                    out[c, s, j] += data[k]
