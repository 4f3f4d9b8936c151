#!/usr/bin/env python3
"""Coefficients of pto_tile.h's softmax exps: x86-64-v4's Exp16Softmax (a table of 32) and x86-64-v3's
Exp8Softmax (a table of 8, vpermps).

    tools/pypto-python compiler/targets/host/numerics/exp_softmax_fit.py

exp(x) = 2^(n/T) e^r with n = round(x * T / ln2) and |r| <= ln2/(2T) (a
little more: n comes from log2(e) rounded to f32), T = 32 or 8. 2^(n/T) is a
table of T floats times a power of two; e^r = 1 + q(r) with q(r) = r (c1 + c2 r)
(degree 2) or r (c1 + c2 r + c3 r^2) (degree 3), fitted for the relative
error of exp(r) by least squares on Chebyshev points, reweighted towards
minimax. Prints, for each degree, the coefficients rounded to f32 (as hex,
as pto_tile.h writes them), the fit's maximum relative error before and
after rounding, and that error in units of 2^-24 (half an ulp of 1: the
error the final rounding adds on its own). exp_softmax_check.cc
measures the f32 result over every float <= 0.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exp_fit import minimax_fit  # noqa: E402


def fit(degree, table=32):
    a = np.log(2) / (2 * table) * 1.001
    r = np.cos(np.linspace(0, np.pi, 20001)) * a
    r = r[np.abs(r) > 1e-9]
    target = np.expm1(r) / r  # q(r) / r
    w = r / np.exp(r)  # an error in q / r, as a relative error of exp(r)
    return minimax_fit(r, target, w, degree)


def main():
    for table, degree in ((32, 2), (32, 3), (8, 3)):
        c32, err, err32 = fit(degree, table)
        print(f"table {table}, degree {degree}: " + ", ".join(
            f"c{k} = {float(x).hex()}" for k, x in enumerate(c32, start=1)))
        print(f"  max relative error {err:.3g}; f32 coefficients {err32:.3g} "
              f"(2^{np.log2(err32):.1f}, {err32 / 2.0**-24:.3f} x 2^-24)")
    for size in (32, 8):
        table = [np.float32(2.0 ** (j / size)) for j in range(size)]
        worst = max(abs(float(t) / 2.0 ** (j / size) - 1) for j, t in enumerate(table))
        print(f"table 2^(j/{size}), j = 0..{size - 1}, f32: " + ", ".join(float(t).hex() for t in table))
        print(f"  max relative error of the table {worst:.3g} ({worst / 2.0**-24:.3f} x 2^-24)")


if __name__ == "__main__":
    main()
