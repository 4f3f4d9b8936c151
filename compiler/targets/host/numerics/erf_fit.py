"""Coefficients of pto_tile.h's Erf8 (kErfPieces).

erf(z), z >= 0, on 8 pieces of width W centred at k*W (piece 0 is [0, W/2), a
polynomial in z with no constant term, so erf(0) = 0 and tiny z keep their
relative accuracy); piece 7 runs to ZMAX, where |x| is clamped. Each piece is
a degree-DEG polynomial in u = z - k*W fitted in double (least squares on
Chebyshev nodes, reweighted towards minimax) and rounded to f32. Prints each
piece's fit error and its error in f32 Horner form (FMA) on a dense grid,
P(ZMAX) (which must be 1.0 so erfc(+inf) = 0), and the C++ table.

    tools/pypto-python compiler/targets/host/numerics/erf_fit.py [DEG]    # DEG 6: pto_tile.h's table

The exhaustive check is erf_check.cc.
"""
import math, sys, numpy as np
W, ZMAX = 0.55, 4.12
erf = np.vectorize(math.erf)
def f32(a): return np.asarray(a, np.float64).astype(np.float32).astype(np.float64)
def horner32(c, u):
    p = np.full_like(u, c[-1])
    for ck in c[-2::-1]:
        p = f32(p * u + ck)
    return p
def fit(k, deg):
    lo, hi = max(0.0, (k - 0.5) * W), min(ZMAX, (k + 0.5) * W)
    cen = k * W
    t = np.cos(np.pi * (np.arange(3000) + 0.5) / 3000)
    zn = lo + (hi - lo) * (t + 1) / 2
    u = zn - cen
    first = 1 if k == 0 else 0
    A = np.stack([u ** j for j in range(first, deg + 1)], 1)
    y = erf(zn)
    W8 = np.ones_like(zn)
    for it in range(40):   # Lawson-style reweighting towards minimax
        Aw = A * np.sqrt(W8)[:, None]
        c = np.linalg.lstsq(Aw, y * np.sqrt(W8), rcond=None)[0]
        r = np.abs(y - A @ c)
        W8 = W8 * (r / r.max() + 1e-3)
        W8 /= W8.sum()
    if k == 0: c = np.concatenate([[0.0], c])
    cf = f32(c)
    z = f32(np.linspace(lo, hi, 40001))
    ed = np.max(np.abs(np.polyval(c[::-1], z - cen) - erf(z)))
    ef = np.max(np.abs(horner32(cf, f32(z - cen)) - erf(z)))
    return cf, ed, ef
deg = int(sys.argv[1]) if len(sys.argv) > 1 else 6
tabs = []
for k in range(8):
    cf, ed, ef = fit(k, deg)
    tabs.append(cf)
    print(k, "fit %.3g  f32 horner %.3g" % (ed, ef))
tabs = np.array(tabs)
pz = horner32(tabs[7], f32(np.array([ZMAX]) - f32(7 * W)))
print("P(ZMAX) = %r" % pz[0])


def hexf(v):
    if v == 0: return "0.0f"
    m, e = float(v).hex().split("p")
    return m.rstrip("0") + "p" + e + "f"


for j in range(deg + 1):
    h = [hexf(v) for v in tabs[:, j]]
    print("    {" + ", ".join(h[:4]) + ",  // u^%d" % j)
    print("     " + ", ".join(h[4:]) + "},")
