"""The rows that pure columns peel off a two-class training set, every split in one pass.

``lr.separation.pure_rows`` states the rule: a column whose non-zero entries among a split's
remaining rows of ``A = sign * Z1`` all have one sign is a direction of the recession cone,
and the rows where it is non-zero are separated; repeated until no column is pure. Removing
rows never makes a pure column mixed (it stays pure or becomes empty), so the rows peeled do
not depend on the order in which pure columns are taken: ``peel_rows`` takes them from a
queue, keeping each column's counts of positive and negative entries among the live rows
up to date as rows go, so each split costs a few passes over its non-zeros, whatever the
number of rounds. Compiled (``jit.compiled``).
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled


@compiled
def peel_rows(ptr, cols, positive, ids, sign_pos, width, out):
    """``out[a, i] = True`` for the rows of split a that pure columns peel.

    ptr (u + 1,), cols (nnz,) and positive (nnz,): the distinct rows' non-zeros (row r's
    in ``ptr[r]:ptr[r + 1]``, their columns and whether each entry is > 0); ids (S, m) int64
    each training row's distinct row; sign_pos (S, m) bool its class (sign > 0); width the
    number of columns; out (S, m) bool, filled.
    """
    S, m = ids.shape
    npos = np.zeros(width, dtype=np.int64)
    nneg = np.zeros(width, dtype=np.int64)
    start = np.zeros(width + 1, dtype=np.int64)
    fill = np.zeros(width, dtype=np.int64)
    queued = np.zeros(width, dtype=np.bool_)
    queue = np.zeros(width, dtype=np.int64)
    live = np.zeros(m, dtype=np.bool_)
    most = 0
    for a in range(S):
        n = 0
        for i in range(m):
            n += ptr[ids[a, i] + 1] - ptr[ids[a, i]]
        most = max(most, n)
    members = np.zeros(max(most, 1), dtype=np.int64)  # each column's rows, by column
    for a in range(S):
        npos[:] = 0
        nneg[:] = 0
        for i in range(m):
            u = ids[a, i]
            s = sign_pos[a, i]
            for k in range(ptr[u], ptr[u + 1]):
                if positive[k] == s:
                    npos[cols[k]] += 1
                else:
                    nneg[cols[k]] += 1
        start[0] = 0
        for j in range(width):
            start[j + 1] = start[j] + npos[j] + nneg[j]
            fill[j] = start[j]
        for i in range(m):
            u = ids[a, i]
            for k in range(ptr[u], ptr[u + 1]):
                j = cols[k]
                members[fill[j]] = i
                fill[j] += 1
        head = 0
        tail = 0
        for j in range(width):
            queued[j] = (npos[j] > 0) != (nneg[j] > 0)
            if queued[j]:
                queue[tail] = j
                tail += 1
        live[:] = True
        while head < tail:  # each column is queued at most once
            j = queue[head]
            head += 1
            for q in range(start[j], start[j + 1]):
                i = members[q]
                if not live[i]:
                    continue
                live[i] = False
                out[a, i] = True
                u = ids[a, i]
                s = sign_pos[a, i]
                for k in range(ptr[u], ptr[u + 1]):
                    c = cols[k]
                    if positive[k] == s:
                        npos[c] -= 1
                    else:
                        nneg[c] -= 1
                    if not queued[c] and (npos[c] > 0) != (nneg[c] > 0):
                        queued[c] = True
                        queue[tail] = c
                        tail += 1
