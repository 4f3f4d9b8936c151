"""pypto's modules import each other by floors, never in a circle.

FLOORS is the package's layering, bottom up (as JAX keeps lax under
jax.numpy): a module imports only modules on floors below its own, at the
top of the file or inside a function. An import inside a function says why
it is not at the top in a comment on its line.
"""

import ast
import os

import pytest

import pypto

PACKAGE = os.path.dirname(pypto.__file__)

FLOORS = [
    # what everything uses: the generated protobuf modules, errors (ours and
    # PyPTO's pypto.error), the user's frames, the disk cache, the SIM run
    # folder, option keys; the native extension's loader
    ("_proto", "extension", "errors", "error", "frames", "cache", "run_folder", "jit_options"),
    # the debug switches (eager runs, verification); eager runs' loop indices
    ("debug_switch", "runtime_int"),
    # dtypes, PyPTO's enums, tile shapes
    ("dtypes", "enums", "tiling"),
    # FP8 values to and from numpy floats
    ("fp8",),
    # the compiler's op registry, read through the native extension
    ("op_table",),
    # symbolic scalars; Element; option values in force; comparing two traces
    ("symbolic", "element", "config", "trace_compare"),
    # recording a graph (knows no Tensor class); pypto.symbolic_scalar.SymInt
    ("tracer", "symbolic_scalar"),
    # eager runs: recording and computing each op at once (knows no Tensor class)
    ("eager",),
    # Tensor: annotation and traced value (operators bound late); a traced
    # tensor's static shape and valid region
    ("tensors", "valid_region"),
    # strict primitives: op tables, recording, cast, full, reduce
    ("primitives",),
    # policy: integer arithmetic, layout, the cube path; torch interop
    ("int_arith", "layout", "matmul", "interop"),
    # the public ops and control flow
    ("ops", "control_flow"),
    # the ops addressed by an index tensor (gather, scatter, index_*)
    ("indexing",),
    # cast's rounding and saturation modes
    ("casting",),
    # ops composed of the public ops (var, one_hot, ...; pypto.experimental;
    # topk/argsort; cumsum/cumprod; uniform/normal; pack, atomic_add, scaled_mm, quant_mx, ...)
    ("composites", "experimental", "sorting", "scans", "rng", "extra_ops"),
    # convolution, composed of pad, cast and matmul
    ("conv",),
    # Tensor's operators; the AST rewrite; errors at user lines; backends
    ("tensor_methods", "ast_rewrite", "locations", "backend", "verification"),
    # the first op a compiled kernel computes differently from its eager run
    ("verify_probe",),
    # which path a call takes under the debug switches (eager, verified)
    ("verify_run",),
    # the jit function
    ("jit_function",),
    # PyPTO's frontend module; graphs for ptoc; pypto.function
    ("frontend", "debug", "recorded_function"),
    # the package
    ("__init__", "__main__"),
]


def _modules():
    return sorted(f[:-3] for f in os.listdir(PACKAGE) if f.endswith(".py"))


def _imports(module):
    """[(imported module, line, in a function, source line)] of `module`'s
    imports of sibling modules."""
    path = os.path.join(PACKAGE, module + ".py")
    with open(path, encoding="utf-8") as f:
        source = f.read()
    lines = source.splitlines()
    siblings = set(_modules())
    found = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ImportFrom) and child.level == 1:
                names = ([child.module.split(".")[0]] if child.module
                         else [a.name for a in child.names])
                for name in names:
                    if name in siblings:
                        found.append((name, child.lineno, in_function,
                                      lines[child.lineno - 1]))
            visit(child, in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), False)
    return found


def _floor_of():
    return {m: k for k, floor in enumerate(FLOORS) for m in floor}


def test_every_module_is_on_a_floor():
    floor = _floor_of()
    missing = [m for m in _modules() if m not in floor]
    assert not missing, f"modules on no floor of FLOORS: {missing}"
    gone = [m for m in floor if m not in _modules()]
    assert not gone, f"FLOORS names modules that do not exist: {gone}"


@pytest.mark.parametrize("module", _modules())
def test_imports_go_down_only(module):
    floor = _floor_of()
    if module not in floor:
        pytest.skip("not on a floor (test_every_module_is_on_a_floor fails)")
    up = [f"{module}.py:{line}: imports {name} (floor {floor.get(name)}, "
          f"{module} is on floor {floor[module]})"
          for name, line, _, _ in _imports(module)
          if name != module and floor.get(name, -1) >= floor[module]]
    assert not up, "\n".join(up)


@pytest.mark.parametrize("module", _modules())
def test_imports_inside_functions_say_why(module):
    with open(os.path.join(PACKAGE, module + ".py"), encoding="utf-8") as f:
        source = f.read()
    lines = source.splitlines()
    silent = []

    def visit(node, in_function):
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)) and \
                    "#" not in lines[child.lineno - 1]:
                silent.append(f"{module}.py:{child.lineno}: {lines[child.lineno - 1].strip()}")
            visit(child, in_function or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(source), False)
    assert not silent, ("imports inside a function need a comment saying why they are not "
                        "at the top:\n" + "\n".join(silent))


def test_no_import_cycle():
    graph = {m: {name for name, _, _, _ in _imports(m) if name != m} for m in _modules()}
    state = {}

    def visit(m, path):
        state[m] = "open"
        for n in sorted(graph[m]):
            if state.get(n) == "open":
                cycle = path[path.index(n):] + [n]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if n not in state:
                visit(n, path + [n])
        state[m] = "done"

    for m in graph:
        if m not in state:
            visit(m, [m])


def test_the_checks_catch_a_cycle(tmp_path, monkeypatch):
    """The cycle check fails on a package whose modules import in a circle."""
    (tmp_path / "a.py").write_text("from . import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from . import a  # lazy\n")
    monkeypatch.setattr(__import__(__name__), "PACKAGE", str(tmp_path))
    with pytest.raises(pytest.fail.Exception, match="import cycle: a -> b -> a"):
        test_no_import_cycle()
