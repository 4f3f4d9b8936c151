#!/usr/bin/env python3
"""Coefficients of pto_tile.h's f32 exp polynomial (ExpSteps).

    tools/pypto-python compiler/targets/host/numerics/exp_fit.py

exp(r) on [-ln2/2, ln2/2] as 1 + r + r^2/2 + r^3 q(r), q of degree 3
(c3..c6), fitted for the relative error of exp(r) by least squares on
Chebyshev points, reweighted towards minimax; prints the coefficients rounded
to f32 (as hex, as pto_tile.h writes them) and the fit's maximum relative
error before and after rounding (2^-28). The f32 evaluation then adds its
own rounding: exp_check.cc measures the result over every float.
"""

import numpy as np


def minimax_fit(r, target, w, terms):
    """Coefficients c (increasing powers, `terms` of them) of a polynomial p
    with p(r) ~ target, minimising max |(p(r) - target) * w| (w turns an
    error in p into a relative error of exp): least squares reweighted
    towards minimax. Returns (c rounded to f32, max weighted error of c,
    max weighted error of the f32 coefficients)."""
    v = np.vander(r, terms, increasing=True)
    weights = np.ones_like(r)
    for _ in range(60):
        c, *_ = np.linalg.lstsq(v * (w * weights)[:, None], target * w * weights, rcond=None)
        err = (v @ c - target) * w
        weights *= np.abs(err) ** 0.5 + 1e-30
        weights /= weights.max()
    c32 = c.astype(np.float32)
    err32 = (v @ c32.astype(np.float64) - target) * w
    return c32, np.abs(err).max(), np.abs(err32).max()


def main():
    a = np.log(2) / 2 * 1.0001  # the reduction leaves |r| slightly above ln2/2
    r = np.cos(np.linspace(0, np.pi, 20001)) * a
    r = r[np.abs(r) > 1e-6]
    target = (np.expm1(r) - r - r * r / 2) / r**3
    w = r**3 / np.exp(r)  # an error in q, as a relative error of exp(r)
    c32, err, err32 = minimax_fit(r, target, w, 4)
    for k, x in enumerate(c32, start=3):
        print(f"c{k} = {float(x).hex()}")
    print(f"max relative error: {err:.3g} (f32 coefficients: "
          f"{err32:.3g}, 2^{np.log2(err32):.1f})")


if __name__ == "__main__":
    main()
