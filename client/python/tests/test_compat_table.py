"""docs/pypto-compat.md holds: one row per API of PyPTO's documentation, each
yes / differs / not here, and the rows it says hold name tests that exist.

The table is docs/pypto-compat.md; PyPTO's documented API is
PYPTO_REFERENCE.md beside the repository (../shared), checked where present.
"""

import ast
import os
import re

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
TABLE = os.path.join(REPO, "docs", "pypto-compat.md")
REFERENCE = os.path.join(REPO, "..", "shared", "PYPTO_REFERENCE.md")

# Groups (and rows) whose every "yes"/"differs" row names a test by row.
ROWS_WITH_TESTS = ("Element", "Data types and enums", "Control flow", "Configuration",
                   "Symbolic scalars", "Others")
ROWS_WITH_TESTS_ALSO = ("pypto.Tensor", "pypto.frontend.jit")
# Groups whose every "yes"/"differs" row names a test (or is "as `row`").
ROWS_NAMING_A_TEST = ("Tensor", "Operations", "Element")
# A file whose test_row_ tests are made from a table of rows: a row naming
# the file alone must be in that table.
ROW_TABLE_FILE = "test_elementwise_rows"
STATUSES = ("yes", "differs", "not here")
_ROW = re.compile(r"^\| `([^`]+)` \| ([a-z ]+) \| (.*) \|$")
_TEST_REF = re.compile(r"`(?:(test_\w+)::)?(test_\w+)(\*)?(?:\[[^\]]*\])?`")


def _table():
    """[(group, api, status, note)] of docs/pypto-compat.md."""
    rows, group = [], None
    with open(TABLE, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line.startswith("## "):
                group = line[3:].strip()
            m = _ROW.match(line)
            if m:
                rows.append((group,) + m.groups())
    return rows


def _test_functions():
    """{test file stem: set of its test function names}."""
    out = {}
    for name in os.listdir(HERE):
        if name.startswith("test_") and name.endswith(".py"):
            with open(os.path.join(HERE, name), encoding="utf-8") as f:
                tree = ast.parse(f.read())
            out[name[:-3]] = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return out


def _generated_rows(stem):
    """The "pypto..." keys of the dict literals in a test file: the rows
    its generated test_row_ tests run."""
    with open(os.path.join(HERE, stem + ".py"), encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return {k.value for n in ast.walk(tree) if isinstance(n, ast.Dict) for k in n.keys
            if isinstance(k, ast.Constant) and isinstance(k.value, str)
            and k.value.startswith("pypto")}


def _resolves(test_file, test, glob, functions, last_file):
    files = [test_file or last_file] if (test_file or last_file) else list(functions)
    for f in files:
        names = functions.get(f, set())
        if (glob and any(n.startswith(test) for n in names)) or test in names:
            return True
    return False


def test_every_row_has_a_status_and_a_reason():
    rows = _table()
    assert len(rows) > 200, f"{TABLE}: only {len(rows)} rows"
    bad = [f"{api}: status {status!r}" for _, api, status, _ in rows if status not in STATUSES]
    bad += [f"{api}: '{status}' without saying how or why" for _, api, status, note in rows
            if status in ("differs", "not here") and not note.strip()]
    assert not bad, "\n".join(bad)


def test_the_totals_count_the_rows():
    counts = {st: 0 for st in STATUSES}
    for _, _, status, _ in _table():
        counts[status] = counts.get(status, 0) + 1
    want = (f"**Totals: {counts['yes']} yes, {counts['differs']} differ, "
            f"{counts['not here']} not here.**")
    with open(TABLE, encoding="utf-8") as f:
        assert want in f.read(), f"{TABLE} should say {want}"


def test_rows_that_hold_name_tests_that_exist():
    functions = _test_functions()
    missing = []
    for group, api, status, note in _table():
        last_file = None
        for m in _TEST_REF.finditer(note):
            test_file, test, glob = m.group(1), m.group(2), m.group(3)
            if test_file is None and test.startswith("test_") and test in functions:
                continue  # a file named alone
            if not _resolves(test_file, test, glob, functions, last_file):
                missing.append(f"{api}: `{m.group(0)}` names no test")
            last_file = test_file or last_file
        needs_row_test = group in ROWS_WITH_TESTS or api in ROWS_WITH_TESTS_ALSO
        if needs_row_test and status != "not here" and "test_row_" not in note \
                and not re.search(r"\bas `[^`]+`$", note.split(":")[0]):
            missing.append(f"{api} ({group}): '{status}' names no test_row_ test")
        if group in ROWS_NAMING_A_TEST and status != "not here" and not _TEST_REF.search(note) \
                and not re.fullmatch(r"as `[^`]+`", note.strip()):
            missing.append(f"{api} ({group}): '{status}' names no test")
    assert not missing, "\n".join(missing)


def test_rows_naming_a_generated_row_file_are_in_its_table():
    generated = _generated_rows(ROW_TABLE_FILE)
    absent = [api for _, api, _, note in _table()
              if f"`{ROW_TABLE_FILE}`" in note and api not in generated]
    assert not absent, f"named {ROW_TABLE_FILE} but not among its rows: {absent}"


def test_the_checks_catch_a_missing_test():
    functions = {"test_a": {"test_row_x"}}
    assert _resolves("test_a", "test_row_x", False, functions, None)
    assert not _resolves("test_a", "test_row_y", False, functions, None)
    assert _resolves(None, "test_row_", True, functions, "test_a")


@pytest.mark.skipif(not os.path.exists(REFERENCE),
                    reason=f"{REFERENCE} (PyPTO's documented API) is not beside this checkout")
def test_every_documented_api_has_a_row():
    with open(REFERENCE, encoding="utf-8") as f:
        documented = {m.group(1) for m in map(_ROW_REF.match, f) if m}
    ours = {api for _, api, _, _ in _table()}
    assert documented - ours == set(), f"not in {TABLE}: {sorted(documented - ours)}"


_ROW_REF = re.compile(r"^\| `(pypto\.[^`]+)` \| .* \| .* \|$")
