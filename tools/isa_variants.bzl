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

def cc_test_with_v3_v4(name, copts = [], **kwargs):
    """cc_test_with_v4, plus `name + "_v3"` built with -march=x86-64-v3.

    For tests whose baseline build runs the scalar paths: the _v3 twin runs
    the AVX2/F16C paths (8 lanes), which must skip, naming the features, on
    a CPU without them.
    """
    cc_test_with_v4(name = name, copts = copts, **kwargs)
    native.cc_test(
        name = name + "_v3",
        copts = [c for c in copts if not c.startswith("-march=")] + ["-march=x86-64-v3"],
        **kwargs
    )
