"""The compiler's op registry (compiler/ops/op_registry.cc), read through the
native extension when pypto is imported: each op kind's arity, attributes,
operand dtypes and result rule, as the verifier applies them. The front
end's strict checks (primitives.py, int_arith.py) ask this table, so an op
added to the registry needs no second table here.

    op("adds").attrs                 # (Attr("scalar", "f", True, True),)
    op("neg").operand_dtypes         # (DT_FP32, DT_FP16, DT_BF16, DT_INT32, ...)
    OPERAND_TYPES["float"]           # (DT_FP32, DT_FP16, DT_BF16)
    kinds(category="elementwise_binary", bool_result=True)   # eq ne lt le gt ge

and what a target's code generator maps, asked of the target itself:

    target_maps("ascend-a2a3", "TIMG2COL")   # False: conv.py composes instead
"""

from collections import namedtuple

from . import dtypes
from .extension import native

# One attribute a kind accepts: its name, its type ("i", "f", "s", "b",
# "dtype", "ints", "expr", "exprs"), whether it must be present, and whether
# an expression over symbols may stand in for it (op_registry.h AttrSpec).
Attr = namedtuple("Attr", "name type required symbolic")

# One kind's facts. category: "elementwise_binary", "elementwise_scalar",
# "elementwise_unary", "select", "cast", "reduce", "create", "matmul",
# "layout", "index", "scan" or "control"; num_inputs and num_outputs -1 for "one
# or more"; operands: the registry's OperandTypes ("float", "any",
# "numeric", "float_or_double", "integer") and operand_dtypes the dtypes it
# admits for the data operands (all but where's condition); bool_result:
# the result is DT_BOOL; result_dtypes: a reduction's result dtype per
# input dtype (the verifier's ReduceResultDType), else empty.
OpFacts = namedtuple("OpFacts", "kind category num_inputs num_outputs attrs needs_vec_tile "
                                "operands operand_dtypes bool_result result_dtypes")


def _facts(entry):
    return OpFacts(
        kind=entry["kind"], category=entry["category"], num_inputs=entry["num_inputs"],
        num_outputs=entry["num_outputs"],
        attrs=tuple(Attr(*a) for a in entry["attrs"]),
        needs_vec_tile=entry["needs_vec_tile"], operands=entry["operands"],
        operand_dtypes=tuple(dtypes.DataType(d) for d in entry["operand_dtypes"]),
        bool_result=entry["bool_result"],
        result_dtypes={dtypes.DataType(a): dtypes.DataType(b)
                       for a, b in entry["result_dtypes"].items()})


_REGISTRY = native().op_registry()
# Every kind's facts, in registry order.
OPS = {e["kind"]: _facts(e) for e in _REGISTRY["ops"]}
# The dtypes each OperandTypes admits: "float" (FP32, FP16, BF16), "any",
# "numeric", "float_or_double", "integer".
OPERAND_TYPES = {name: tuple(dtypes.DataType(d) for d in ds)
                 for name, ds in _REGISTRY["operand_types"].items()}


def op(kind):
    """The registry's facts for `kind`; KeyError naming it when unknown."""
    try:
        return OPS[kind]
    except KeyError:
        raise KeyError(f"op kind {kind!r} is not in the compiler's op registry") from None


def kinds(**match):
    """The kinds whose facts equal every `field=value` given, in registry
    order: kinds(operands="integer"), kinds(category="reduce")."""
    return tuple(k for k, f in OPS.items()
                 if all(getattr(f, name) == value for name, value in match.items()))


_maps = {}  # (target, instruction) -> bool (target_maps)


def target_maps(target, instruction):
    """Whether the target named `target` ("host", "ascend-a2a3", ...) maps
    the PTO instruction `instruction` ("TIMG2COL") in some form, as its own
    code generator says (_native.target_maps: compiler/targets/
    target_maps.h), asked once per target and instruction. An unknown target
    or instruction is the compiler's ValueError naming it."""
    key = (target, instruction)
    maps = _maps.get(key)
    if maps is None:
        maps = _maps.setdefault(key, native().target_maps(target, instruction))
    return maps


def accepts(kind, dtype):
    """Whether `kind` takes data operands of `dtype` (the verifier's rule)."""
    return dtype in op(kind).operand_dtypes
