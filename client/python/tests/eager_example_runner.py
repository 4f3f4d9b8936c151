"""Runs one examples/*.py script with every kernel call verified: the
compiled kernel's outputs are compared with an eager run of the same call
(verify_options enable_pass_verify, set globally before the script starts;
pypto/verify_run.py). A difference raises, so the script fails.

    python eager_example_runner.py examples/ffn.py --run_mode sim

Prints "VERIFIED_CALLS n" last: how many kernel calls were compared.
"""

import runpy
import sys

import pypto
from pypto import verify_run

calls = [0]
_verified_call = verify_run.verified_call


def _counted(*args, **kwargs):
    _verified_call(*args, **kwargs)
    calls[0] += 1  # only once the comparison passed


verify_run.verified_call = _counted
pypto.set_verify_options(enable_pass_verify=True)
path = sys.argv[1]
sys.argv = sys.argv[1:]
try:
    runpy.run_path(path, run_name="__main__")
finally:
    print("VERIFIED_CALLS", calls[0])
