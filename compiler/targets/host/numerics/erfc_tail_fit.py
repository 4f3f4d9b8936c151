"""Coefficients of pto_tile.h's ErfcTail8 (kErfcTailPieces).

erfcx(x) = erfc(x) exp(x^2) on pieces [m, m + 1], m = 2..9, each a degree-DEG
polynomial in u = x - (m + 0.5) fitted in double for RELATIVE error (least
squares on Chebyshev nodes, reweighted towards minimax), rounded to f32 and
scaled by 2^-64 (ErfcTail8 scales exp by 2^64). Prints each piece's fit
error and its error in f32 Horner form, then the C++ table (piece m at index
m & 7).

    tools/pypto-python compiler/targets/host/numerics/erfc_tail_fit.py 6
"""
import math, sys, numpy as np
def f32(a): return np.asarray(a, np.float64).astype(np.float32).astype(np.float64)
def horner32(c, u):
    p = np.full_like(u, c[-1])
    for ck in c[-2::-1]:
        p = f32(p * u + ck)
    return p
erfcx = np.vectorize(lambda x: math.erfc(x) * math.exp(x * x))
def fit(m, deg):
    lo, hi, cen = m - 0.02, m + 1.02, m + 0.5
    t = np.cos(np.pi * (np.arange(3000) + 0.5) / 3000)
    zn = lo + (hi - lo) * (t + 1) / 2
    u = zn - cen
    A = np.stack([u ** j for j in range(deg + 1)], 1)
    y = erfcx(zn)
    A = A / y[:, None]; yy = np.ones_like(y)   # relative
    W8 = np.ones_like(zn)
    for it in range(40):
        Aw = A * np.sqrt(W8)[:, None]
        c = np.linalg.lstsq(Aw, yy * np.sqrt(W8), rcond=None)[0]
        r = np.abs(yy - A @ c)
        W8 = W8 * (r / r.max() + 1e-3); W8 /= W8.sum()
    cf = f32(c)
    z = f32(np.linspace(lo, hi, 40001))
    ref = erfcx(z)
    ed = np.max(np.abs(np.polyval(c[::-1], z - cen) / ref - 1))
    ef = np.max(np.abs(horner32(cf, f32(z - cen)) / ref - 1))
    return cf, ed, ef
deg = int(sys.argv[1])
for m in range(2, 10):
    cf, ed, ef = fit(m, deg); print(m, "%.3g %.3g" % (ed, ef))
def hexf(v):
    if v == 0: return "0.0f"
    m, e = float(v).hex().split("p")
    return m.rstrip("0") + "p" + e + "f"
tabs = np.zeros((8, deg + 1))
for m in range(2, 10):
    tabs[m & 7] = fit(m, deg)[0] * 2.0**-64
for j in range(deg + 1):
    h = [hexf(v) for v in tabs[:, j]]
    print("    {" + ", ".join(h[:4]) + ",  // u^%d" % j)
    print("     " + ", ".join(h[4:]) + "},")
