"""The training-set draw of ``splits.draw_train_sets``, compiled: the same numbers as numpy.

For each split, ``splits.draw_train_sets`` builds ``SeedSequence(seed, spawn_key=...)``, a
``PCG64`` generator from it, and calls ``Generator.choice(n, m, replace=False,
shuffle=False)`` until the set holds every class. Through numpy's Python layer that was
most of the cost of drawing Figure 1's 327,000 training sets (benchmarks/RESULTS.md). This
module does the same arithmetic in one compiled loop over the splits, bit for bit:

- ``SeedSequence``: the entropy words (seed, padded to the pool size, then the spawn key),
  mixed into a pool of four 32-bit words, then ``generate_state(4, uint64)``
  (numpy's ``bit_generator.pyx``; O'Neill's seed_seq_fe, 32-bit hash multipliers);
- ``PCG64``: the 128-bit LCG with numpy's multiplier and the XSL-RR output, seeded as
  ``pcg_setseq_128_srandom_r``; 32-bit draws take the low half of a 64-bit output and keep
  the high half for the next one;
- bounded integers in ``[0, j]``: Lemire's multiply-and-reject on 32-bit draws;
- ``choice`` without replacement, ``shuffle=False``: Floyd's algorithm, or the tail of a
  partial Fisher-Yates shuffle when ``N > 10000`` and ``m > N // 20`` (numpy's own switch).

Only the set matters (``draw_train_sets`` sorts it), so Floyd's set is kept in a mark array
rather than numpy's hash table: the members are the same. tests/unit/test_splits.py compares the
result with numpy's own per-split draw on many (N, m, seed) cases, including both
``choice`` paths and rejected draws. A split whose ``MAX_TRIES`` draws all lack a class is
reported with its generator's state, from which ``draw_train_sets`` makes the forced draw
with numpy, as numpy's own loop would after the same tries.
"""

from __future__ import annotations

import numpy as np

from nbvslr.kernels.jit import compiled

_U64 = np.uint64
_M32 = _U64(0xFFFFFFFF)
# PCG64's multiplier (numpy's PCG_DEFAULT_MULTIPLIER_128), as two 64-bit halves
_MUL_HI = _U64(0x2360ED051FC65DA4)
_MUL_LO = _U64(0x4385DF649FCCF645)
# SeedSequence's hash constants (numpy/random/bit_generator.pyx)
_INIT_A = _U64(0x43B0D7E5)
_MULT_A = _U64(0x931E8875)
_INIT_B = _U64(0x8B51F9DD)
_MULT_B = _U64(0x58F38DED)
_MIX_L = _U64(0xCA01F9DD)
_MIX_R = _U64(0x4973F715)
_XSHIFT = _U64(16)
POOL_SIZE = 4
FLOYD_MIN_N = 10000  # numpy's choice: tail shuffle when N > 10000 and m > N // 20
FLOYD_CUTOFF = 20


def int_words(value: int) -> list[int]:
    """An integer >= 0 as little-endian 32-bit words, as numpy's SeedSequence reads it."""
    if value < 0:
        raise ValueError("seed words must be >= 0")
    words = [value & 0xFFFFFFFF]
    value >>= 32
    while value:
        words.append(value & 0xFFFFFFFF)
        value >>= 32
    return words


@compiled
def _mulhi64(a, b):
    """High 64 bits of the 128-bit product of two uint64."""
    a_lo = a & _M32
    a_hi = a >> _U64(32)
    b_lo = b & _M32
    b_hi = b >> _U64(32)
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> _U64(32)) + (p1 & _M32) + (p2 & _M32)
    return p3 + (p1 >> _U64(32)) + (p2 >> _U64(32)) + (mid >> _U64(32))


@compiled
def _step(st):
    """state = state * MUL + inc (mod 2**128); st = [s_hi, s_lo, inc_hi, inc_lo, has32, buf]."""
    s_hi = st[0]
    s_lo = st[1]
    hi = _mulhi64(s_lo, _MUL_LO) + s_lo * _MUL_HI + s_hi * _MUL_LO
    lo = s_lo * _MUL_LO
    new_lo = lo + st[3]
    carry = _U64(1) if new_lo < lo else _U64(0)
    st[0] = hi + st[2] + carry
    st[1] = new_lo


@compiled
def _next64(st):
    _step(st)
    hi = st[0]
    xored = hi ^ st[1]
    rot = hi >> _U64(58)
    return (xored >> rot) | (xored << ((_U64(64) - rot) & _U64(63)))


@compiled
def _next32(st):
    if st[4] != _U64(0):
        st[4] = _U64(0)
        return st[5]
    v = _next64(st)
    st[4] = _U64(1)
    st[5] = v >> _U64(32)
    return v & _M32


@compiled
def _bounded(st, rng):
    """Uniform integer in [0, rng], rng < 2**32 - 1 (Lemire, as numpy's 32-bit path)."""
    if rng == _U64(0):
        return _U64(0)
    excl = rng + _U64(1)
    prod = _next32(st) * excl
    left = prod & _M32
    if left < excl:
        threshold = (_M32 - rng) % excl
        while left < threshold:
            prod = _next32(st) * excl
            left = prod & _M32
    return prod >> _U64(32)


@compiled
def _hashmix(value, hc):
    """SeedSequence's hashmix; ``hc`` is a one-element array (the running hash constant)."""
    value = (value ^ hc[0]) & _M32
    hc[0] = (hc[0] * _MULT_A) & _M32
    value = (value * hc[0]) & _M32
    return value ^ (value >> _XSHIFT)


@compiled
def _mix(x, y):
    r = ((_MIX_L * x) - (_MIX_R * y)) & _M32
    return r ^ (r >> _XSHIFT)


@compiled
def _seed(st, words):
    """Seed ``st`` as ``PCG64(SeedSequence(entropy))`` whose entropy words are ``words``."""
    pool = np.zeros(POOL_SIZE, dtype=np.uint64)
    hc = np.empty(1, dtype=np.uint64)
    hc[0] = _INIT_A
    n = words.size
    for i in range(POOL_SIZE):
        pool[i] = _hashmix(words[i] if i < n else _U64(0), hc)
    for i_src in range(POOL_SIZE):
        for i_dst in range(POOL_SIZE):
            if i_src != i_dst:
                pool[i_dst] = _mix(pool[i_dst], _hashmix(pool[i_src], hc))
    for i_src in range(POOL_SIZE, n):
        for i_dst in range(POOL_SIZE):
            pool[i_dst] = _mix(pool[i_dst], _hashmix(words[i_src], hc))
    # generate_state(4, uint64): 8 words of 32 bits, paired little-endian
    state = np.empty(8, dtype=np.uint64)
    hb = _INIT_B
    for i in range(8):
        v = (pool[i % POOL_SIZE] ^ hb) & _M32
        hb = (hb * _MULT_B) & _M32
        v = (v * hb) & _M32
        state[i] = v ^ (v >> _XSHIFT)
    seed_hi = state[0] | (state[1] << _U64(32))
    seed_lo = state[2] | (state[3] << _U64(32))
    inc_hi = state[4] | (state[5] << _U64(32))
    inc_lo = state[6] | (state[7] << _U64(32))
    # pcg_setseq_128_srandom_r: inc = (initseq << 1) | 1; step; state += initstate; step
    st[0] = _U64(0)
    st[1] = _U64(0)
    st[2] = (inc_hi << _U64(1)) | (inc_lo >> _U64(63))
    st[3] = (inc_lo << _U64(1)) | _U64(1)
    st[4] = _U64(0)
    st[5] = _U64(0)
    _step(st)
    lo = st[1] + seed_lo
    carry = _U64(1) if lo < st[1] else _U64(0)
    st[0] = st[0] + seed_hi + carry
    st[1] = lo
    _step(st)


@compiled
def _choice(st, n, m, mark, perm, out):
    """``Generator.choice(n, m, replace=False, shuffle=False)`` as a set, into ``out``.

    ``mark`` (n,) uint8 is all zero on entry and on exit; ``perm`` (n,) int64 is scratch
    for the tail-shuffle path.
    """
    if n > FLOYD_MIN_N and m > n // FLOYD_CUTOFF:
        for i in range(n):
            perm[i] = i
        first = max(n - m, 1)
        for i in range(n - 1, first - 1, -1):
            j = np.int64(_bounded(st, _U64(i)))
            tmp = perm[j]
            perm[j] = perm[i]
            perm[i] = tmp
        for k in range(m):
            out[k] = perm[n - m + k]
        return
    k = 0
    for j in range(n - m, n):
        t = np.int64(_bounded(st, _U64(j)))
        if mark[t]:
            t = j
        mark[t] = 1
        out[k] = t
        k += 1
    for k in range(m):
        mark[out[k]] = 0


@compiled
def _entropy(prefix, split, child):
    """The entropy words of one split's seed: ``prefix``, the split index, the child."""
    n_split = 1
    v = split >> 32
    while v > 0:
        n_split += 1
        v >>= 32
    p = prefix.size
    words = np.empty(p + n_split + 1, dtype=np.uint64)
    words[:p] = prefix
    v = split
    for w in range(n_split):
        words[p + w] = _U64(v & 0xFFFFFFFF)
        v >>= 32
    words[p + n_split] = _U64(child)
    return words


@compiled
def seed_states(prefix, splits, child):
    """PCG64's internal (state, inc) of ``PCG64(SeedSequence(...))`` for each split, as
    (S, 4) uint64 ``[state_hi, state_lo, inc_hi, inc_lo]`` (``splits.each_generator``)."""
    S = splits.size
    out = np.empty((S, 4), dtype=np.uint64)
    st = np.zeros(6, dtype=np.uint64)
    for s in range(S):
        _seed(st, _entropy(prefix, splits[s], child))
        out[s, :] = st[:4]
    return out


@compiled
def draw_sets(y, m, n_classes, prefix, splits, child, max_tries, out, failed, states):
    """Training sets of m rows for each split, rejection until every class is present.

    y : (N,) int64 class codes ``0 .. K - 1`` (K = n_classes; for two classes, 1 for the
    positive rows); prefix : uint64 32-bit words of the seed (padded to the pool size), the
    task key and m; splits : (S,) int64 split indices; child : int, the last spawn-key
    word. out : (S, m) int64, the rows of each split (in draw order: the caller sorts them,
    numpy's sort being much quicker to compile than numba's); failed : (S,) bool, set where
    every try missed a class (out's row is then undefined); states : (S, 6) uint64, the
    generator's words after the last try of a failed split (``splits.draw_train_sets``
    continues from there with the forced draw, as numpy's own loop would).
    """
    n = y.size
    S = splits.size
    mark = np.zeros(n, dtype=np.uint8)
    seen = np.zeros(n_classes, dtype=np.uint8)
    big = n > FLOYD_MIN_N and m > n // FLOYD_CUTOFF
    perm = np.empty(n if big else 1, dtype=np.int64)
    st = np.zeros(6, dtype=np.uint64)
    for s in range(S):
        _seed(st, _entropy(prefix, splits[s], child))
        row = out[s]
        failed[s] = True
        for _ in range(max_tries):
            _choice(st, n, m, mark, perm, row)
            if n_classes == 2:
                first = y[row[0]]
                every = False
                for k in range(1, m):
                    if y[row[k]] != first:
                        every = True
                        break
            else:
                seen[:] = 0
                left = n_classes
                for k in range(m):
                    c = y[row[k]]
                    if not seen[c]:
                        seen[c] = 1
                        left -= 1
                every = left == 0
            if every:
                failed[s] = False
                break
        if failed[s]:
            states[s, :] = st
