"""Errors that point at the user's code.

Every op the tracer records remembers the user's statement that created it
(the innermost frame outside the pypto package: file, line, function). Two
kinds of error then name that statement:

  - an error raised while tracing (a TypeError/ValueError/TraceError/
    NotImplementedError from a pypto op, e.g. a dtype the op does not take)
    gets "file:line: " in front of its message, naming the user's line even
    when the op was called through the user's own helper functions; an error
    with no user frame (a kernel that returns a value) names the kernel's
    `def` line;
  - an error the compiler reports about "op #k" (its verifier numbers the
    graph's ops) gets, per op it names, a line saying which statement
    recorded that op, with the statement's source text.

The exception keeps its type; only its message grows.
"""

import re

from . import tracer
from .errors import TraceError
from .frames import describe, innermost_user_frame

_TRACE_ERRORS = (TraceError, TypeError, ValueError, NotImplementedError)
# "op #3", or for an op in a region "op #2 body op #0", "op #1 else op #4".
_OP_REF = re.compile(r"\bop #\d+(?: (?:body|then|else) op #\d+)*")
_REGION_NAMES = {"loop": ("body",), "if": ("then", "else")}


def _set_message(exc, message):
    if exc.args and isinstance(exc.args[0], str):
        exc.args = (message,) + exc.args[1:]
    else:
        exc.args = (message,)


# where[INDEX_CHECKS]: indexing.py's launch checks of index arguments.
INDEX_CHECKS = "index checks"


def trace(fn, name, params, symbols=None, target="host"):
    """tracer.trace for target `target`, returning (graph, where):
    where["op #k"] is the user_frame() of graph.ops[k] (None for ops pypto
    added itself), and where["op #k body op #j"] that of op j of its body
    (as the compiler's verifier labels ops). Errors name the line."""
    builder = tracer.GraphBuilder(name)
    builder.symbols = symbols or {}
    builder.compile_target = target
    try:
        graph = tracer.trace(fn, name, params, builder=builder)
    except _TRACE_ERRORS as e:
        if not getattr(e, "_pypto_located", False):
            where = innermost_user_frame(e.__traceback__.tb_next)
            if where is None:
                code = getattr(fn, "__code__", None)
                if code is not None:
                    where = (code.co_filename, code.co_firstlineno, code.co_name)
            if where is not None:
                _set_message(e, f"{where[0]}:{where[1]}: {e.args[0] if e.args else e}")
            e._pypto_located = True
        raise
    where = {}
    _label_ops(graph.ops, "", builder.where, where)
    checks = getattr(builder, "index_checks", None)
    if checks:  # launch checks of index arguments (indexing.py)
        where[INDEX_CHECKS] = tuple(checks)
    return graph, where


def _label_ops(ops, prefix, frames, out):
    """out[label] = the user frame of each op, labelled as the compiler's
    verifier names it ("op #2", "op #2 body op #0")."""
    for k, op in enumerate(ops):
        label = f"{prefix}op #{k}"
        out[label] = frames.get(op.outputs[0]) if op.outputs else None
        for name, region in zip(_REGION_NAMES.get(op.kind, ()), op.regions):
            _label_ops(region.ops, f"{label} {name} ", frames, out)


def _op_at(graph, label):
    """The op a label names ("op #2 body op #0")."""
    steps = re.findall(r"(?:(body|then|else) )?op #(\d+)", label)
    ops, op = graph.ops, None
    for name, k in steps:
        if name:
            ops = op.regions[_REGION_NAMES[op.kind].index(name)].ops
        op = ops[int(k)]
    return op


def annotate(exc, graph, where):
    """Adds to `exc` (a compile error about `graph`) the user's line of each
    op the message names as "op #k"."""
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
    lines, seen, first = [], set(), None
    for m in _OP_REF.finditer(message):
        label = m.group(0)
        if label in seen:
            continue
        seen.add(label)
        w = where.get(label)
        if w is None:
            continue
        first = first or w
        lines.append(f"  {label} \"{_op_at(graph, label).kind}\" was recorded at {describe(w)}")
    if lines:
        _set_message(exc, f"{first[0]}:{first[1]}: {message}\n" + "\n".join(lines))
