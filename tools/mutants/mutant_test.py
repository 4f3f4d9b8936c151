#!/usr/bin/python3
"""mutant.py's rules on sample mutants, and every committed mutant against the
sources it mutates: each parses, and each original occurs exactly once, so a
change to the code a mutant targets fails here until the mutant is updated
(the mutation check itself, tools/mutants.sh, is too slow for the suite).

    mutant_test.py   (from the runfiles root, or the repository root)
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mutant  # noqa: E402

SOURCE = """int f(int a, int b) {
  return a - b;
}
int g(int x) {
  if (x > 0) return 1;
  return 0;
}
int h() {
  return 0;
}
"""


class SampleTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()
        os.makedirs(os.path.join(self.dir, "src"))
        with open(os.path.join(self.dir, "src", "f.cc"), "w") as f:
            f.write(SOURCE)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, text):
        path = os.path.join(self.dir, "m.mutant")
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_applies_every_edit_in_order(self):
        path = self.write("""# two edits, one deleting
targets: //a:b //c:d
filter //c:d: S.One:S.Two
@@ src/f.cc
<<<<<<< original
  return a - b;
=======
  return b - a;
>>>>>>> mutant
<<<<<<< original
  if (x > 0) return 1;
=======
>>>>>>> mutant
""")
        targets, filters, edits = mutant.parse(path)
        self.assertEqual(targets, ["//a:b", "//c:d"])
        self.assertEqual(filters, {"//c:d": "S.One:S.Two"})
        self.assertEqual(len(edits), 2)
        got = mutant.mutated_files(path, self.dir)
        self.assertEqual(got["src/f.cc"], SOURCE.replace("  return a - b;", "  return b - a;")
                         .replace("  if (x > 0) return 1;\n", ""))
        # Only "apply" writes.
        with open(os.path.join(self.dir, "src", "f.cc")) as f:
            self.assertEqual(f.read(), SOURCE)
        self.assertEqual(mutant.main(["mutant.py", "apply", path, self.dir]), 0)
        with open(os.path.join(self.dir, "src", "f.cc")) as f:
            self.assertEqual(f.read(), got["src/f.cc"])

    def test_an_original_must_occur_exactly_once(self):
        missing = self.write("""targets: //a:b
@@ src/f.cc
<<<<<<< original
  return a + b;
=======
  return a;
>>>>>>> mutant
""")
        with self.assertRaisesRegex(mutant.MutantError, "occurs 0 times"):
            mutant.mutated_files(missing, self.dir)
        twice = self.write("""targets: //a:b
@@ src/f.cc
<<<<<<< original
  return 0;
=======
  return 1;
>>>>>>> mutant
""")
        with self.assertRaisesRegex(mutant.MutantError, "occurs 2 times"):
            mutant.mutated_files(twice, self.dir)
        # A line matches only as a whole line.
        partial = self.write("""targets: //a:b
@@ src/f.cc
<<<<<<< original
return a - b;
=======
return 0;
>>>>>>> mutant
""")
        with self.assertRaisesRegex(mutant.MutantError, "occurs 0 times"):
            mutant.mutated_files(partial, self.dir)
        self.assertEqual(mutant.main(["mutant.py", "check", missing, self.dir]), 2)

    def test_malformed_files_are_refused(self):
        cases = {
            "no 'targets:' line": "@@ src/f.cc\n<<<<<<< original\nx\n=======\ny\n>>>>>>> mutant\n",
            "no edits": "targets: //a:b\n",
            "before any": "targets: //a:b\n<<<<<<< original\nx\n=======\ny\n>>>>>>> mutant\n",
            "an edit without '======='": "targets: //a:b\n@@ src/f.cc\n<<<<<<< original\nx\n",
            "is the original": ("targets: //a:b\n@@ src/f.cc\n<<<<<<< original\nx\n=======\nx\n"
                                ">>>>>>> mutant\n"),
            "not a target": ("targets: //a:b\nfilter //c:d: S.*\n@@ src/f.cc\n<<<<<<< original\n"
                             "x\n=======\ny\n>>>>>>> mutant\n"),
            "unexpected line": "targets: //a:b\nstray\n",
        }
        for message, text in cases.items():
            with self.subTest(message):
                with self.assertRaisesRegex(mutant.MutantError, message):
                    mutant.parse(self.write(text))

    def test_a_missing_file_is_refused(self):
        path = self.write("targets: //a:b\n@@ src/none.cc\n<<<<<<< original\nx\n=======\n"
                          "y\n>>>>>>> mutant\n")
        with self.assertRaisesRegex(mutant.MutantError, "does not exist"):
            mutant.mutated_files(path, self.dir)


class CommittedMutantsTest(unittest.TestCase):
    def test_every_mutant_matches_the_sources(self):
        files = sorted(glob.glob(os.path.join(HERE, "*.mutant")))
        self.assertGreaterEqual(len(files), 10)
        root = os.getcwd()
        for path in files:
            with self.subTest(os.path.basename(path)):
                targets, _, edits = mutant.parse(path)
                for t in targets:
                    self.assertRegex(t, r"^//[\w/.-]*:[\w.-]+$")
                for name, _, _ in edits:
                    self.assertTrue(
                        os.path.isfile(os.path.join(root, name)),
                        f"{name} is not in this test's data (tools/mutants/BUILD)")
                # Raises, naming the mutant and the text, when an original no
                # longer occurs exactly once.
                mutant.mutated_files(path, root)

    def test_the_helper_runs_as_a_program(self):
        path = sorted(glob.glob(os.path.join(HERE, "*.mutant")))[0]
        out = subprocess.run([sys.executable, os.path.join(HERE, "mutant.py"), "targets", path],
                             check=True, capture_output=True, text=True).stdout
        self.assertRegex(out, r"^//\S+\t")


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
