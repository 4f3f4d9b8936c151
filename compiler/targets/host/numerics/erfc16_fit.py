"""Coefficients of pto_tile.h's Erfc16 main path (kErfcPieces16, x86-64-v4).

erfc(x) for x <= 2 (lanes x > 2 take the tail form, ErfcTail16) on 16 pieces
of width W centred at k*W, k = KMIN..KMIN+15: piece k is a degree-DEG
polynomial in u = x - k*W (W rounded to f32, as the code's FMA uses it), so
erfc needs no |x|, no sign and no 1 - erf: k's low 4 bits index vpermps's
16-entry tables directly (k = -10..5 are 16 distinct values mod 16). x is
clamped below at XMIN, past which the f32 erfc is 2 (erfc(-3.85) =
2 - 5.3e-8 rounds to 2). Fitted in double (least
squares on Chebyshev nodes, reweighted towards minimax) and rounded to f32;
prints each piece's fit error and its error in f32 Horner form on a dense
grid, P(XMIN) (which must be 2.0 so erfc(-inf) = 2), and the C++ table.

    tools/pypto-python compiler/targets/host/numerics/erfc16_fit.py [DEG] [W] [XMIN]   # 5 0.37 -3.85: pto_tile.h's

The exhaustive check is erf_check.cc (built for v4: //compiler/targets/host/numerics:erf_check_v4).
"""
import math, sys, numpy as np
deg = int(sys.argv[1]) if len(sys.argv) > 1 else 5
W = float(np.float32(float(sys.argv[2]) if len(sys.argv) > 2 else 0.37))
XMIN = float(np.float32(float(sys.argv[3]) if len(sys.argv) > 3 else -3.85))
XMAX = 2.0
KMIN = -int(round(-XMIN / W))
assert round(XMAX / W) - KMIN < 16, "more than 16 pieces"
erfc = np.vectorize(math.erfc)
def f32(a): return np.asarray(a, np.float64).astype(np.float32).astype(np.float64)
def horner32(c, u):
    p = np.full_like(u, c[-1])
    for ck in c[-2::-1]:
        p = f32(p * u + ck)
    return p
def fit(k):
    # A little past the piece's edges: k = round(x / W) is computed in f32.
    lo, hi = max(XMIN, (k - 0.5) * W - 1e-6), min(XMAX + 1e-6, (k + 0.5) * W + 1e-6)
    cen = k * W
    t = np.cos(np.pi * (np.arange(3000) + 0.5) / 3000)
    xn = lo + (hi - lo) * (t + 1) / 2
    u = xn - cen
    A = np.stack([u ** j for j in range(deg + 1)], 1)
    y = erfc(xn)
    wt = np.ones_like(xn)
    for it in range(40):   # Lawson-style reweighting towards minimax
        Aw = A * np.sqrt(wt)[:, None]
        c = np.linalg.lstsq(Aw, y * np.sqrt(wt), rcond=None)[0]
        r = np.abs(y - A @ c)
        wt = wt * (r / r.max() + 1e-3)
        wt /= wt.sum()
    cf = f32(c)
    x = f32(np.linspace(lo, hi, 40001))
    ed = np.max(np.abs(np.polyval(c[::-1], x - cen) - erfc(x)))
    ef = np.max(np.abs(horner32(cf, f32(x - cen)) - erfc(x)))
    return cf, ed, ef
tabs = {}
for k in range(KMIN, KMIN + 16):
    if k * W - W / 2 > XMAX:  # an unused slot (lanes x > 2 take the tail)
        tabs[k] = np.zeros(deg + 1)
        continue
    cf, ed, ef = fit(k)
    tabs[k] = cf
    print(k, "fit %.3g  f32 horner %.3g" % (ed, ef))
pmin = horner32(tabs[KMIN], f32(np.array([XMIN]) - KMIN * W))
print("P(XMIN) = %r" % pmin[0])


def hexf(v):
    if v == 0: return "0.0f"
    m, e = float(v).hex().split("p")
    return m.rstrip("0") + "p" + e + "f"


# Table slot i holds piece k with k mod 16 = i.
slots = [tabs[next(k for k in tabs if k % 16 == i)] for i in range(16)]
for j in range(deg + 1):
    h = [hexf(s[j]) for s in slots]
    print("    {" + ", ".join(h[:4]) + ",  // u^%d" % j)
    for r in range(4, 16, 4):
        print("     " + ", ".join(h[r:r + 4]) + ("}," if r == 12 else ","))
