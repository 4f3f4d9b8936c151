"""`if pypto.cond(c): A else: B` in a kernel becomes a branch of the graph.

Python runs one branch of an `if`; a kernel's branch on a symbolic condition
must trace both, once each. pypto.jit therefore compiles the kernel again
from its own source with every `if` whose whole test is a call of `cond`
(pypto.cond, or cond imported from pypto) rewritten to

    __pypto_if1 = __pypto_cf__._If(pypto.cond(c), ("y",), locals().get("y"))
    for __pypto_branch in __pypto_if1:
        if __pypto_branch:
            A
        else:
            B
        y = __pypto_if1.end("y", locals().get("y"))
    y = __pypto_if1.result("y", locals().get("y"))

control_flow._If yields True and then False, recording an `if` op around
the two traced bodies (for a constant condition it yields only the branch
taken). Names the branches bind (y above) are merged like tensors carried
through the `if`: at the end of each branch `end` records y's tensor and
gives back y's value from before the `if` (so the else branch starts from
it), and after both `result` gives the tensor the `if` outputs (so
`t = t + 1` in one branch works as in Python). `elif pypto.cond(...)` is an
`if` in the else branch and is rewritten the same way; `and`/`or`/`not`
directly inside pypto.cond(...) become symbolic logic. PyPTO's bare
`if pypto.is_loop_begin(i):` / `is_loop_end(i)` are rewritten too. The new
code keeps the user's file name and line numbers (errors point at the
user's lines), globals and closure cells.

A kernel whose source inspect cannot find (defined in a REPL or by exec)
runs as written: a symbolic pypto.cond there is a TypeError saying why.
`break`, `continue` and `return` directly inside a rewritten branch are
errors at rewrite time: both branches run during tracing, so they would
leave the trace, or the user's own loop, half done.
"""

import ast
import inspect
import textwrap
import types

from . import control_flow
from .errors import TraceError

_CF = "__pypto_cf__"
_FLAG = "__pypto_branch"


def _is_call_of(node, *names):
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    return (isinstance(f, ast.Attribute) and f.attr in names) or \
        (isinstance(f, ast.Name) and f.id in names)


def _is_cond_call(node):
    """pypto.cond(...), or PyPTO's bare pypto.is_loop_begin/is_loop_end(...)."""
    return _is_call_of(node, "cond", "is_loop_begin", "is_loop_end")


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


def _cf(attr, node):
    return ast.copy_location(
        ast.Attribute(value=ast.Name(id=_CF, ctx=ast.Load()), attr=attr, ctx=ast.Load()), node)


class _Logic(ast.NodeTransformer):
    """`a and b`, `a or b`, `not a` inside pypto.cond(...): symbolic logic."""

    def visit_BoolOp(self, node):
        self.generic_visit(node)
        name = "logical_and" if isinstance(node.op, ast.And) else "logical_or"
        out = node.values[0]
        for v in node.values[1:]:
            out = ast.copy_location(ast.Call(func=_cf(name, node), args=[out, v],
                                             keywords=[]), node)
        return out

    def visit_UnaryOp(self, node):
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(ast.Call(func=_cf("logical_not", node),
                                              args=[node.operand], keywords=[]), node)
        return node


class _Escapes(ast.NodeVisitor):
    """break/continue/return that would leave a rewritten branch."""

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


class _RewriteIfs(ast.NodeTransformer):
    def __init__(self, filename):
        self.filename = filename
        self.count = 0

    def visit_If(self, node):
        self.generic_visit(node)
        if not _is_cond_call(node.test):
            return node
        escapes = _Escapes()
        for stmt in node.body + node.orelse:
            escapes.visit(stmt)
        if escapes.found:
            line, what = escapes.found
            raise TraceError(
                f"{self.filename}:{line}: `{what}` inside a branch of `if pypto.cond(...)` "
                f"(line {node.lineno}): both branches are traced, so a branch must run to "
                f"its end; write results into tensors instead")
        self.count += 1
        test = node.test
        if _is_call_of(test, "cond"):
            test.args = [_Logic().visit(a) for a in test.args]
        names = sorted(_assigned(node.body) | _assigned(node.orelse))
        branch = f"__pypto_if{self.count}"

        def at(n):
            return ast.copy_location(n, node)

        def load(name):  # locals().get(name): None while unbound
            return at(ast.Call(func=at(ast.Attribute(
                value=at(ast.Call(func=at(ast.Name(id="locals", ctx=ast.Load())), args=[],
                                  keywords=[])), attr="get", ctx=ast.Load())),
                args=[at(ast.Constant(value=name))], keywords=[]))

        def merge(method):
            return [at(ast.Assign(targets=[at(ast.Name(id=n, ctx=ast.Store()))], value=at(
                ast.Call(func=at(ast.Attribute(value=at(ast.Name(id=branch, ctx=ast.Load())),
                                               attr=method, ctx=ast.Load())),
                         args=[at(ast.Constant(value=n)), load(n)], keywords=[]))))
                    for n in names]

        setup = at(ast.Assign(targets=[at(ast.Name(id=branch, ctx=ast.Store()))], value=at(
            ast.Call(func=_cf("_If", node), args=[test, at(ast.Tuple(
                elts=[at(ast.Constant(value=n)) for n in names], ctx=ast.Load()))] +
                [load(n) for n in names], keywords=[]))))
        inner = at(ast.If(test=at(ast.Name(id=_FLAG, ctx=ast.Load())), body=node.body,
                          orelse=node.orelse))
        loop = at(ast.For(target=at(ast.Name(id=_FLAG, ctx=ast.Store())),
                          iter=at(ast.Name(id=branch, ctx=ast.Load())),
                          body=[inner] + merge("end"), orelse=[]))
        return [setup, loop] + merge("result")


def rewrite(fn):
    """fn with its `if pypto.cond(...)` statements rewritten (module
    docstring), or fn itself when it has none or its source is not available."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return fn
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        tree = ast.parse(source)
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
    rewriter = _RewriteIfs(code.co_filename)
    ast.increment_lineno(tree, code.co_firstlineno - 1)
    rewriter.visit(fdef)
    if not rewriter.count:
        return fn
    fdef.decorator_list = []
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
    cells[_CF] = types.CellType(control_flow)
    closure = tuple(cells[n] for n in new_code.co_freevars)
    new = types.FunctionType(new_code, fn.__globals__, fn.__name__, fn.__defaults__,
                             closure or None)
    new.__kwdefaults__ = fn.__kwdefaults__
    new.__qualname__ = fn.__qualname__
    new.__module__ = fn.__module__
    return new
