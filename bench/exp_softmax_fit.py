#!/usr/bin/env python3
"""Coefficients of pto_tile.h's softmax exp on x86-64-v4 (Exp16Softmax).

    tools/pypto-python bench/exp_softmax_fit.py

exp(x) = 2^(n/32) e^r with n = round(x * 32 / ln2) and |r| <= ln2/64 (a
little more: n comes from log2(e) rounded to f32). 2^(n/32) is a table of
32 floats times a power of two; e^r = 1 + q(r) with q(r) = r (c1 + c2 r)
(degree 2) or r (c1 + c2 r + c3 r^2) (degree 3), fitted for the relative
error of exp(r) by least squares on Chebyshev points, reweighted towards
minimax. Prints, for each degree, the coefficients rounded to f32 (as hex,
as pto_tile.h writes them), the fit's maximum relative error before and
after rounding, and that error in units of 2^-24 (half an ulp of 1: the
error the final rounding adds on its own). bench/exp_softmax_check.cc
measures the f32 result over every float <= 0.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from exp_fit import minimax_fit  # noqa: E402


def fit(degree):
    a = np.log(2) / 64 * 1.001
    r = np.cos(np.linspace(0, np.pi, 20001)) * a
    r = r[np.abs(r) > 1e-9]
    target = np.expm1(r) / r  # q(r) / r
    w = r / np.exp(r)  # an error in q / r, as a relative error of exp(r)
    return minimax_fit(r, target, w, degree)


def main():
    for degree in (2, 3):
        c32, err, err32 = fit(degree)
        print(f"degree {degree}: " + ", ".join(
            f"c{k} = {float(x).hex()}" for k, x in enumerate(c32, start=1)))
        print(f"  max relative error {err:.3g}; f32 coefficients {err32:.3g} "
              f"(2^{np.log2(err32):.1f}, {err32 / 2.0**-24:.3f} x 2^-24)")
    table = [np.float32(2.0 ** (j / 32)) for j in range(32)]
    worst = max(abs(float(t) / 2.0 ** (j / 32) - 1) for j, t in enumerate(table))
    print("table 2^(j/32), j = 0..31, f32: " + ", ".join(float(t).hex() for t in table))
    print(f"  max relative error of the table {worst:.3g} ({worst / 2.0**-24:.3f} x 2^-24)")


if __name__ == "__main__":
    main()
