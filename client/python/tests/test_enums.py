"""PyPTO's "Data types and enums" table, one test per row (several rows per
test where named), plus pypto.error, pypto.platform, pypto.CompStage and
Tensor.format."""

import pytest
import torch

import pypto

ENUMS = {
    "CachePolicy": ["PREFETCH", "NONE_CACHEABLE"],
    "CastMode": ["CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL",
                 "CAST_TRUNC", "CAST_ODD"],
    "PrecisionType": ["INTRINSIC", "HIGH_PRECISION"],
    "LogBaseType": ["LOG_E", "LOG_2", "LOG_10"],
    "OpType": ["EQ", "NE", "LT", "LE", "GT", "GE"],
    "OutType": ["BOOL", "BIT"],
    "ReduceMode": ["ATOMIC_ADD"],
    "ReLuType": ["NO_RELU", "RELU"],
    "ScatterMode": ["None", "ADD", "MULTIPLY"],
    "SaturationMode": ["OFF", "ON"],
    "TileOpFormat": ["TILEOP_ND", "TILEOP_NZ"],
    "TopKAlgo": ["MERGE_SORT", "RADIX_SELECT"],
    "TransMode": ["CAST_NONE", "CAST_RINT", "CAST_ROUND"],
    "CompStage": ["ALL_COMPLETE", "TENSOR_GRAPH", "TILE_GRAPH", "EXECUTE_GRAPH",
                  "CODEGEN_INSTRUCTION", "CODEGEN_BINARY"],
}


@pytest.mark.parametrize("name", sorted(ENUMS), ids=[f"row_pypto_{n}" for n in sorted(ENUMS)])
def test_row_pypto_enum_members(name):
    enum = getattr(pypto, name)
    for member in ENUMS[name]:
        value = getattr(enum, member)
        assert isinstance(value, enum)
        assert enum[member] is value
        assert repr(value).startswith(f"pypto.{name}.")
    assert len({getattr(enum, m) for m in ENUMS[name]}) == len(ENUMS[name])


def test_row_pypto_TileOpFormat_and_Tensor_format(native):  # noqa: N802
    assert pypto.TILEOP_ND is pypto.TileOpFormat.TILEOP_ND
    assert pypto.TILEOP_NZ is pypto.TileOpFormat.TILEOP_NZ
    assert pypto.Tensor([4, 4], pypto.DT_FP32).format is pypto.TileOpFormat.TILEOP_ND
    seen = []

    @pypto.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 4)
        seen.append(x.format)
        out[:] = x + 1

    x, out = torch.rand(4, 4), torch.empty(4, 4)
    k(x, out)
    assert seen == [pypto.TileOpFormat.TILEOP_ND]
    torch.testing.assert_close(out, x + 1)


NEW_DTYPES = ["DT_INT4", "DT_FP8", "DT_HF4", "DT_HF8", "DT_FP4E2M1", "DT_FP8E8M0",
              "DT_FP4_E2M1X2", "DT_FP4_E1M2X2"]
# The name-only ones (DT_FP8E8M0 compiles: test_fp8).
NAME_ONLY_DTYPES = [n for n in NEW_DTYPES if n != "DT_FP8E8M0"]


def test_row_pypto_DataType_members():  # noqa: N802
    for name in ["DT_INT8", "DT_INT16", "DT_INT32", "DT_INT64", "DT_FP16", "DT_FP32", "DT_BF16",
                 "DT_FP8E4M3", "DT_FP8E5M2", "DT_UINT8", "DT_UINT16", "DT_UINT32", "DT_UINT64",
                 "DT_BOOL", "DT_DOUBLE"] + NEW_DTYPES:
        assert getattr(pypto, name) is pypto.DataType[name]


@pytest.mark.parametrize("name", NAME_ONLY_DTYPES)
def test_row_pypto_DataType_compute_with_a_name_only_dtype_is_an_error(name):  # noqa: N802
    dtype = getattr(pypto, name)

    @pypto.jit
    def k(x: pypto.Tensor([], pypto.DT_FP32), out: pypto.Tensor([], pypto.DT_FP32)):
        pypto.set_vec_tile_shapes(4, 4)
        out[:] = pypto.cast(pypto.cast(x, dtype), pypto.DT_FP32)

    with pytest.raises(TypeError, match=name):
        k.trace(torch.rand(4, 4), torch.empty(4, 4))


def test_row_pypto_bytes_of():
    want = {"DT_FP32": 4, "DT_FP16": 2, "DT_BF16": 2, "DT_INT8": 1, "DT_INT16": 2,
            "DT_INT32": 4, "DT_INT64": 8, "DT_UINT8": 1, "DT_UINT16": 2, "DT_UINT32": 4,
            "DT_UINT64": 8, "DT_BOOL": 1, "DT_DOUBLE": 8, "DT_FP8E4M3": 1, "DT_FP8E5M2": 1,
            "DT_FP8": 1, "DT_HF8": 1, "DT_INT4": 1, "DT_FP8E8M0": 1}
    for name, size in want.items():
        assert pypto.bytes_of(getattr(pypto, name)) == size, name
    with pytest.raises(pypto.error.FeError, match=r"pypto.bytes_of: expected a pypto.DT_\*"):
        pypto.bytes_of("fp32")
    with pytest.raises(pypto.error.FeError, match=r"DT_BOTTOM has no element size"):
        pypto.bytes_of(pypto.DT_BOTTOM)


def test_pypto_error_classes():
    from pypto.error import FeError, PassError, PyptoError, VerifyError
    e = FeError(ValueError("bad tile"))
    assert isinstance(e, (PyptoError, ValueError, TypeError))
    assert str(e) == "ErrCode: F00002, ValueError: bad tile"
    assert FeError(TypeError("t")).err_code == 0xF00001
    assert str(PassError("plain")) == "ErrCode: F0FFFF, plain"
    assert issubclass(VerifyError, PyptoError)
    # PyPTO raises FeError for bad front-end input; callers catching the
    # built-in errors still catch it.
    with pytest.raises(FeError, match="must be positive"):
        pypto.set_vec_tile_shapes(0)
    with pytest.raises(ValueError, match="must be positive"):
        pypto.set_vec_tile_shapes(0)


def test_pypto_platform():
    assert pypto.platform.npuarch == "host"
    try:
        pypto.platform.npuarch = "DAV_2201"
        assert pypto.platform.npuarch == "DAV_2201"
        with pytest.raises(pypto.error.FeError, match="npuarch: expected a non-empty str"):
            pypto.platform.npuarch = 3
    finally:
        pypto.platform.npuarch = "host"
