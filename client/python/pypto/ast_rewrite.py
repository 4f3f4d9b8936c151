"""Python control flow on symbolic values becomes graph control flow.

Python runs one branch of an `if`; a kernel's branch on a condition known
only at run time (a SymbolicCondition such as `x.shape[0] > 4`, or any
SymbolicScalar) must trace both, once each. pypto.jit therefore compiles the
kernel again from its own source with

  - every `if`/`elif` rewritten to

        __pypto_if1 = __pypto_cf__._If(__pypto_cf__.test(c), ("y",), ("y",),
                                       locals().get("y", __pypto_cf__.UNBOUND))
        for __pypto_branch in __pypto_if1:
            if __pypto_branch:
                A
            else:
                B
            y = __pypto_if1.end("y", locals().get("y", __pypto_cf__.UNBOUND))
        y = __pypto_if1.result("y", locals().get("y", __pypto_cf__.UNBOUND))
        if y is __pypto_cf__.UNBOUND:
            del y

    control_flow._If yields True and then False, recording an `if` op
    around the two traced bodies; for a condition known while tracing (a
    Python value, a constant) it yields only the branch taken, as Python
    does. Names the branches bind (y above) are merged after the `if`:
    tensors are carried through it, ints and SymbolicScalars become a
    symbolic select, lists and tuples merge element by element
    (control_flow._If). The second tuple names the branch-bound names the
    function reads after the `if` (a name bound in one branch only is an
    error there unless it had a value before);
  - an `if` whose branches hold `break`, `continue` or `return` (for the
    `if` itself) to `if __pypto_cf__.static_test(c, message):`: Python's own
    `if` where the condition is known while tracing, an error naming the
    line where it is known only at run time (both branches are traced, so
    each must run to its end);
  - `a if c else b`, `a and b`, `a or b`, `not a` and chained comparisons
    (`0 < i < n`) to calls of control_flow's ifexp, and_, or_, not_ and
    compare, which keep Python's evaluation order and short-circuiting for
    values known while tracing and build a run-time value otherwise;
  - every call `f(...)` to `__pypto_cf__.callee(f)(...)`: builtin min/max
    with a symbolic argument become pypto.min/pypto.max, and a plain Python
    function of the user's (not pypto's, the standard library's or an
    installed package's) or a @pypto.frontend.function helper is called
    rewritten the same way (rewritten(), cached per function object).

The new code keeps the user's file name and line numbers (errors point at
the user's lines), globals and closure cells. A function whose source
inspect cannot find (defined in a REPL or by exec) runs as written: a
symbolic condition in its `if` is a TypeError saying why.
"""

import ast
import builtins
import functools
import inspect
import linecache
import numbers
import os
import sys
import textwrap
import types
import weakref

from . import frames, symbolic
from .control_flow import (  # noqa: F401 - what rewritten code calls (__pypto_cf__)
    UNBOUND, _If, and_, compare, ifexp, not_, or_, static_test, test)
from .errors import TraceError
from .symbolic import is_symbolic

_CF = "__pypto_cf__"
_FLAG = "__pypto_branch"


def _is_call_of(node, *names):
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr in names) or \
        (isinstance(f, ast.Name) and f.id in names)


def _assigned(stmts):
    """Names a branch binds (=, +=, for, with, def), not looking into nested
    functions, lambdas or classes."""
    out = set()

    def walk(node):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            if not node.id.startswith("__pypto"):
                out.add(node.id)
            return
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
            return
        if isinstance(node, ast.Lambda):
            return
        for child in ast.iter_child_nodes(node):
            walk(child)

    for stmt in stmts:
        walk(stmt)
    return out


def _loads(node):
    """(name, line) of every name `node` reads."""
    return [(n.id, n.lineno) for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]


def _cf(attr, node):
    return ast.copy_location(
        ast.Attribute(value=ast.Name(id=_CF, ctx=ast.Load()), attr=attr, ctx=ast.Load()), node)


def _call_cf(attr, node, *args):
    return ast.copy_location(ast.Call(func=_cf(attr, node), args=list(args), keywords=[]), node)


def _thunk(expr):
    """lambda: expr (evaluated later, in the same scope)."""
    return ast.copy_location(ast.Lambda(args=ast.arguments(
        posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None,
        defaults=[]), body=expr), expr)


def _binds_in_place(node):
    """Whether `node` holds := / yield / await, which a lambda would change."""
    return any(isinstance(n, (ast.NamedExpr, ast.Yield, ast.YieldFrom, ast.Await))
               for n in ast.walk(node))


class _Escapes(ast.NodeVisitor):
    """break/continue/return that would leave a branch of an `if`."""

    def __init__(self):
        self.found = None

    def _note(self, node, what):
        if self.found is None:
            self.found = (node.lineno, what)

    def visit_Return(self, node):
        self._note(node, "return")

    def visit_Break(self, node):
        self._note(node, "break")

    def visit_Continue(self, node):
        self._note(node, "continue")

    def _loop(self, node):  # break/continue inside a nested loop stay there
        for child in node.body + node.orelse:
            _only_returns(self, child)

    visit_For = visit_While = visit_AsyncFor = _loop

    def visit_FunctionDef(self, node):
        pass

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def _only_returns(escapes, node):
    for n in ast.walk(node):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.Return):
            escapes._note(n, "return")


_COMPARE_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">",
                ast.GtE: ">=", ast.Is: "is", ast.IsNot: "is not", ast.In: "in",
                ast.NotIn: "not in"}


class _Rewrite(ast.NodeTransformer):
    """The rewrite of one function body (module docstring)."""

    def __init__(self, fdef):
        self.count = 0
        self.loads = _loads(fdef)
        self.loops = []  # the loops around the node being visited

    def _loop(self, node):
        self.loops.append(node)
        try:
            return self.generic_visit(node)
        finally:
            self.loops.pop()

    visit_For = visit_While = visit_AsyncFor = _loop

    def _read_after(self, node, names):
        """Those of `names` the function reads after `node` (or anywhere in
        a loop around it: the next iteration)."""
        later = {n for n, line in self.loads if line > node.end_lineno}
        for loop in self.loops:
            later |= {n.id for n in ast.walk(loop)
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return sorted(set(names) & later)

    def visit_If(self, node):
        label = "`if pypto.cond(...)`" if _is_call_of(node.test, "cond") else "an `if`"
        self.generic_visit(node)
        self.count += 1
        escapes = _Escapes()
        for stmt in node.body + node.orelse:
            escapes.visit(stmt)
        if escapes.found:
            line, what = escapes.found
            message = (f"`{what}` inside a branch of {label} on the run-time condition "
                       f"{{cond}} (the `{what}` is at line {line}): both branches are traced, "
                       f"so a branch must run to its end; write results into tensors instead")
            node.test = _call_cf("static_test", node.test, node.test,
                                 ast.copy_location(ast.Constant(value=message), node))
            return node
        return self._branch(node)

    def _branch(self, node):
        names = sorted(_assigned(node.body) | _assigned(node.orelse))
        branch = f"__pypto_if{self.count}"

        def at(n):
            return ast.copy_location(n, node)

        def strings(items):
            return at(ast.Tuple(elts=[at(ast.Constant(value=n)) for n in items],
                                ctx=ast.Load()))

        def load(name):  # locals().get(name, UNBOUND)
            return at(ast.Call(func=at(ast.Attribute(
                value=at(ast.Call(func=at(ast.Name(id="locals", ctx=ast.Load())), args=[],
                                  keywords=[])), attr="get", ctx=ast.Load())),
                args=[at(ast.Constant(value=name)), _cf("UNBOUND", node)], keywords=[]))

        def merge(method):
            return [at(ast.Assign(targets=[at(ast.Name(id=n, ctx=ast.Store()))], value=at(
                ast.Call(func=at(ast.Attribute(value=at(ast.Name(id=branch, ctx=ast.Load())),
                                               attr=method, ctx=ast.Load())),
                         args=[at(ast.Constant(value=n)), load(n)], keywords=[]))))
                    for n in names]

        def unbind(name):  # if name is UNBOUND: del name
            return at(ast.If(test=at(ast.Compare(
                left=at(ast.Name(id=name, ctx=ast.Load())), ops=[ast.Is()],
                comparators=[_cf("UNBOUND", node)])),
                body=[at(ast.Delete(targets=[at(ast.Name(id=name, ctx=ast.Del()))]))],
                orelse=[]))

        test = _call_cf("test", node.test, node.test)
        setup = at(ast.Assign(targets=[at(ast.Name(id=branch, ctx=ast.Store()))], value=at(
            ast.Call(func=_cf("_If", node), args=[
                test, strings(names), strings(self._read_after(node, names))] +
                [load(n) for n in names], keywords=[]))))
        inner = at(ast.If(test=at(ast.Name(id=_FLAG, ctx=ast.Load())), body=node.body,
                          orelse=node.orelse))
        loop = at(ast.For(target=at(ast.Name(id=_FLAG, ctx=ast.Store())),
                          iter=at(ast.Name(id=branch, ctx=ast.Load())),
                          body=[inner] + merge("end"), orelse=[]))
        return [setup, loop] + merge("result") + [unbind(n) for n in names]

    def visit_IfExp(self, node):
        self.generic_visit(node)
        if _binds_in_place(node):
            return node
        self.count += 1
        return _call_cf("ifexp", node, node.test, _thunk(node.body), _thunk(node.orelse))

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        if _binds_in_place(node):
            return node
        self.count += 1
        name = "and_" if isinstance(node.op, ast.And) else "or_"
        return _call_cf(name, node, node.values[0], *[_thunk(v) for v in node.values[1:]])

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if not isinstance(node.op, ast.Not):
            return node
        self.count += 1
        return _call_cf("not_", node, node.operand)

    def visit_Compare(self, node):
        self.generic_visit(node)
        if len(node.ops) < 2 or _binds_in_place(node):
            return node
        self.count += 1
        ops = ast.copy_location(ast.Tuple(elts=[
            ast.copy_location(ast.Constant(value=_COMPARE_OPS[type(op)]), node)
            for op in node.ops], ctx=ast.Load()), node)
        return _call_cf("compare", node, ops, node.left,
                        *[_thunk(c) for c in node.comparators])

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Name) and (f.id == "super" or f.id.startswith("__pypto")):
            return node
        self.count += 1
        node.func = _call_cf("callee", f, f)
        return node


def _block(code):
    """The source lines of the function `code` compiles, from its first line
    (its first decorator's) to its last: every line after the last one the
    compiler's positions name (in `code` or a nested function) up to the
    first that is not blank and is indented no deeper than the first line;
    None when the file's lines are not at hand.
    A block this cuts short (a string or bracket of the last line that
    reaches further left) does not parse: the caller then asks inspect."""
    linecache.checkcache(code.co_filename)  # (a file changed since: read again)
    lines = linecache.getlines(code.co_filename)
    first = code.co_firstlineno
    if not lines or first > len(lines):
        return None
    last = first
    stack = [code]
    while stack:
        c = stack.pop()
        for _, end, _, _ in c.co_positions():
            if end is not None and end > last:
                last = end
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    head = lines[first - 1]
    indent = len(head) - len(head.lstrip())
    while last < len(lines):
        text = lines[last]
        stripped = text.lstrip()
        if stripped and len(text) - len(stripped) <= indent:
            break
        last += 1
    return lines[first - 1:last]


def _parse_source(fn, code):
    """The ast.Module of fn's source, dedented. The lines are found from
    fn's code object (_block: inspect.getsource tokenizes the file, whose
    regular expressions cost milliseconds to compile in a fresh process);
    inspect.getsource where that does not parse, or for a wrapper
    (__wrapped__: inspect reads the wrapped function's source)."""
    block = None if hasattr(fn, "__wrapped__") else _block(code)
    if block:
        try:
            return ast.parse(textwrap.dedent("".join(block)))
        except (SyntaxError, IndentationError):
            pass
    return ast.parse(textwrap.dedent(inspect.getsource(fn)))


def rewrite(fn):
    """fn rewritten (module docstring), or fn itself when there is nothing
    to rewrite or its source is not available."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return fn
    try:
        tree = _parse_source(fn, code)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return fn
    if not tree.body or not isinstance(tree.body[0], ast.FunctionDef):
        return fn  # a lambda or something else: leave it
    fdef = tree.body[0]
    args = fdef.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    if fdef.name != code.co_name or names != list(
            code.co_varnames[:code.co_argcount + code.co_kwonlyargcount]):
        return fn  # the file changed since the function was defined: not its source
    ast.increment_lineno(tree, code.co_firstlineno - 1)
    fdef.decorator_list = []
    rewriter = _Rewrite(fdef)
    rewriter.visit(fdef)
    if not rewriter.count:
        return fn
    return _rebuild(fn, code, fdef)


def _rebuild(fn, code, fdef):
    """The function of rewritten `fdef` with fn's globals, defaults and
    closure cells."""
    # A factory whose parameters are fn's free variables (and the control
    # flow module) makes the rewritten function's code refer to them as
    # closure cells; it is then rebuilt with fn's own cells.
    freevars = list(code.co_freevars)
    factory = ast.FunctionDef(
        name="__pypto_factory__",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=n) for n in freevars + [_CF]],
                           kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
        decorator_list=[], returns=None, type_comment=None)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.copy_location(factory, fdef)
    ast.fix_missing_locations(module)
    compiled = compile(module, code.co_filename, "exec")
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    new_code = next(c for c in factory_code.co_consts
                    if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    cells[_CF] = types.CellType(sys.modules[__name__])
    closure = tuple(cells[n] for n in new_code.co_freevars)
    new = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                             closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    new.__dict__.update(fn.__dict__)
    return new


_REWRITTEN = weakref.WeakKeyDictionary()


def rewritten(fn):
    """rewrite(fn), once per function object."""
    try:
        return _REWRITTEN[fn]
    except KeyError:
        pass
    except TypeError:  # not weakly referable: rewrite every time
        return rewrite(fn)
    new = _REWRITTEN[fn] = rewrite(fn)
    return new


# What rewritten code calls besides control_flow's names (imported above):
# __pypto_cf__ is this module.


def _symbolic_minmax(builtin, symbolic_fn):
    def minmax(*args, **kwargs):
        items = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) \
            else args
        if not kwargs and items and any(is_symbolic(x) for x in items) and \
                all(isinstance(x, numbers.Integral) for x in items):
            return symbolic_fn(*items) if len(items) > 1 else items[0]
        return builtin(*args, **kwargs)
    minmax.__name__ = builtin.__name__
    return minmax


_MINMAX = {builtins.min: _symbolic_minmax(builtins.min, symbolic.smin),
           builtins.max: _symbolic_minmax(builtins.max, symbolic.smax)}
_STDLIB_DIR = os.path.dirname(os.path.abspath(os.__file__)) + os.sep


@functools.lru_cache(maxsize=None)
def _users_file(filename):
    """Whether functions of `filename` are the user's (translated when a
    kernel calls them), not pypto's, the standard library's or a package's."""
    if filename.startswith("<"):
        return False
    path = os.path.abspath(filename)
    return not (frames.ours(path) or path.startswith(_STDLIB_DIR) or
                "site-packages" in path or "dist-packages" in path)


def callee(f):
    """What a call of `f` in a rewritten function calls: pypto.min/max for
    builtin min/max (with a symbolic argument), the rewritten function for
    a user's function or a @pypto.frontend.function helper, else f."""
    try:
        minmax = _MINMAX.get(f)
    except TypeError:  # unhashable
        return f
    if minmax is not None:
        return minmax
    if type(f) is types.FunctionType:
        inner = f.__dict__.get("__pypto_function__")
        if inner is not None:
            return rewritten(inner)
        if _users_file(f.__code__.co_filename):
            return rewritten(f)
    return f
