"""cc_test twins for code whose paths depend on the ISA level it is built for.

pto_tile.h chooses its vector paths by the compiler's predefined macros
(__F16C__, __AVX2__, __AVX512F__), the way kernels built for a host target
get them. A test of those paths is built once per level it covers.
"""

def cc_test_with_v4(name, copts = [], **kwargs):
    """`name` as given, and `name + "_v4"` built with -march=x86-64-v4.

    The _v4 twin replaces any -march in copts; it runs pto_tile.h's AVX-512
    paths (16 lanes). It links //tools:v4_test_skip, which, on a machine that
    cannot run x86-64-v4 code (as CI machines may be), prints "SKIPPED:
    <target> needs ..." and skips every case before it runs, so that
    tools/test.sh lists the target as SKIPPED (Bazel reports it PASSED).
    """
    native.cc_test(name = name, copts = copts, **kwargs)
    v4_kwargs = dict(kwargs)
    v4_kwargs["deps"] = kwargs.get("deps", []) + ["//tools:v4_test_skip"]
    native.cc_test(
        name = name + "_v4",
        copts = [c for c in copts if not c.startswith("-march=")] + ["-march=x86-64-v4"],
        **v4_kwargs
    )
