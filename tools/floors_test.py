#!/usr/bin/python3
"""floors.py on the repository's C++ sources (through the tables of
docs/contributing.md), and on small trees that break each rule.

    floors_test.py FLOORS_PY   (run in the runfiles tree: the sources the
                                BUILD file's data lists are under the cwd)
"""

import importlib.util
import os
import sys
import tempfile
import unittest

FLOORS_PY = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "tools/floors.py")
_spec = importlib.util.spec_from_file_location("floors", FLOORS_PY)
floors = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(floors)

DOC = """# Contributing

## The floors

C++, from the ground up:

| floor | paths | what |
|---|---|---|
| 1 | `runtime/` | base |
| 2 | `compiler/` | above it |
| 3 | `compiler/lower/` | higher still |

Exceptions, each with its reason:

| file | includes | why |
|---|---|---|
{exceptions}
"""


class SmallTrees(unittest.TestCase):
    def tree(self, files, exceptions=""):
        root = tempfile.mkdtemp()
        files = dict(files)
        files["docs/contributing.md"] = DOC.format(exceptions=exceptions)
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        return floors.check(root)

    def test_includes_down_and_across_a_floor_pass(self):
        self.assertEqual(self.tree({
            "runtime/a.h": "",
            "compiler/b.h": '#include "runtime/a.h"\n#include "compiler/c.h"\n',
            "compiler/c.h": "",
            "compiler/lower/d.cc": '#include "compiler/b.h"\n#include <vector>\n',
        }), [])

    def test_an_include_up_a_floor_is_named_with_its_line(self):
        problems = self.tree({
            "runtime/a.cc": '// one\n#include "compiler/lower/d.h"\n',
            "compiler/lower/d.h": "",
        })
        self.assertEqual(problems, [
            "runtime/a.cc:2: includes compiler/lower/d.h (floor 3) from floor 1: a floor may "
            "include only its own and those below"])

    def test_the_longest_prefix_places_a_file(self):
        problems = self.tree({"compiler/x.cc": '#include "compiler/lower/d.h"\n',
                              "compiler/lower/d.h": ""})
        self.assertEqual(len(problems), 1)
        self.assertIn("(floor 3) from floor 2", problems[0])

    def test_test_code_may_include_anything(self):
        self.assertEqual(self.tree({
            "runtime/a_test.cc": '#include "compiler/lower/d.h"\n',
            "runtime/testing/helper.cc": '#include "compiler/lower/d.h"\n',
            "compiler/lower/d.h": "",
        }), [])

    def test_a_listed_exception_passes_and_needs_a_reason(self):
        files = {"runtime/a.cc": '#include "compiler/b.h"\n', "compiler/b.h": ""}
        self.assertEqual(self.tree(files, "| `runtime/a.cc` | `compiler/b.h` | because |"), [])
        problems = self.tree(files, "| `runtime/a.cc` | `compiler/b.h` |  |")
        self.assertEqual(problems, [
            "docs/contributing.md: the exception runtime/a.cc -> compiler/b.h gives no reason"])

    def test_an_exception_no_longer_needed_is_reported(self):
        problems = self.tree({"runtime/a.cc": ""},
                             "| `runtime/a.cc` | `compiler/b.h` | because |")
        self.assertEqual(len(problems), 1)
        self.assertIn("is not needed", problems[0])

    def test_a_path_on_no_floor_is_reported(self):
        problems = self.tree({"server/s.cc": ""})
        self.assertEqual(problems, ["server/s.cc: on no floor of docs/contributing.md's table"])


class TheRepository(unittest.TestCase):
    def test_no_include_runs_back_up_a_floor(self):
        root = os.getcwd()
        self.assertTrue(os.path.exists(os.path.join(root, "compiler/pipeline.cc")),
                        f"the sources are not in the runfiles tree {root}")
        self.assertEqual(floors.check(root), [])

    def test_the_reference_evaluator_sits_above_the_compiler(self):
        # The compiler never includes the evaluator that its kernels are
        # checked against; ptoc and the Python module do.
        with open(os.path.join(os.getcwd(), floors.DOC)) as f:
            cpp, _ = floors.read_floors(f.read())
        reference = floors.cpp_floor("compiler/reference/reference_eval.h", cpp)
        self.assertGreater(reference, floors.cpp_floor("compiler/compile.h", cpp))
        self.assertLess(reference, floors.cpp_floor("client/ptoc/check.h", cpp))
        self.assertLess(reference, floors.cpp_floor("client/python/native/module.cc", cpp))


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
