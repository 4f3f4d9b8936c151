#!/usr/bin/python3
"""list_skips.py against sample test.xml trees and a real gtest report, and
test.sh's exit status around it.

    list_skips_test.py LIST_SKIPS_PY V4_TEST_SKIP_DEMO TEST_SH
"""

import os
import subprocess
import sys
import tempfile
import unittest

LIST_SKIPS = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "tools/list_skips.py")
DEMO = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 and sys.argv[2] else ""
TEST_SH = os.path.abspath(sys.argv[3]) if len(sys.argv) > 3 and sys.argv[3] else ""

GTEST_ALL_SKIPPED = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="0" disabled="0" errors="0" name="AllTests">
  <testsuite name="PtoTileExp" tests="2" failures="0" disabled="0" skipped="2" errors="0">
    <testcase name="Exp8" file="x.cc" line="3" status="run" result="skipped" time="0." classname="PtoTileExp">
      <skipped message="compiler/targets/host/pto_tile_exp_test.cc:76&#x0A;this CPU lacks the ISA this test is built for"><![CDATA[compiler/targets/host/pto_tile_exp_test.cc:76
this CPU lacks the ISA this test is built for]]></skipped>
    </testcase>
    <testcase name="Exp16" file="x.cc" line="9" status="run" result="skipped" time="0." classname="PtoTileExp">
      <skipped message="compiler/targets/host/pto_tile_exp_test.cc:100&#x0A;this CPU lacks the ISA this test is built for"><![CDATA[...]]></skipped>
    </testcase>
  </testsuite>
</testsuites>
"""

GTEST_PARTLY_SKIPPED = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="0" disabled="1" errors="0" name="AllTests">
  <testsuite name="PtoCubeTest" tests="4" failures="0" disabled="1" skipped="1" errors="0">
    <testcase name="Matmul" status="run" result="completed" time="0.01" classname="PtoCubeTest" />
    <testcase name="Avx512AndAvx2PathsAgreeBitwise" status="run" result="skipped" time="0." classname="PtoCubeTest">
      <skipped message="compiler/targets/host/pto_cube_test.cc:140&#x0A;no AVX-512F on this CPU"><![CDATA[compiler/targets/host/pto_cube_test.cc:140
no AVX-512F on this CPU]]></skipped>
    </testcase>
    <testcase name="DISABLED_Slow" status="notrun" result="suppressed" time="0" classname="PtoCubeTest" />
    <testcase name="Bare" status="run" result="skipped" time="0." classname="PtoCubeTest" />
  </testsuite>
</testsuites>
"""

# gtest when a global environment's SetUp skips: no case runs, each reads
# "completed"; the _v4 notice records pto_skip_reason on <testsuites>.
GTEST_ENVIRONMENT_SKIPPED = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="0" disabled="0" errors="0" name="AllTests" pto_skip_reason="needs AVX-512 F, BW, CD, DQ and VL; this CPU or OS lacks them">
  <testsuite name="PtoTile" tests="2" failures="0" disabled="0" skipped="0" errors="0">
    <testcase name="A" status="run" result="completed" time="0." classname="PtoTile" />
    <testcase name="B" status="run" result="completed" time="0." classname="PtoTile" />
  </testsuite>
</testsuites>
"""


def pytest_shard(skips):
    cases = ['<testcase classname="tests.test_run" name="test_ok_%d" time="0.1" />' % i
             for i in range(2)]
    cases.append('<testcase classname="tests.test_loops" name="test_xf" time="0.1">'
                 '<skipped type="pytest.xfail" message="known" /></testcase>')
    for name, reason in skips:
        cases.append(
            '<testcase classname="tests.test_amx" name="%s" time="0.0">'
            '<skipped type="pytest.skip" message="%s">tests/test_amx.py:12: %s'
            '</skipped></testcase>' % (name, reason, reason))
    return ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" '
            'errors="0" failures="0" skipped="%d" tests="%d">%s</testsuite></testsuites>'
            % (len(skips) + 1, len(cases), "".join(cases)))


# What Bazel writes for a test that writes no XML of its own.
BAZEL_DEFAULT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
<testsuite name="//deploy:deploy_test" tests="1" failures="0" errors="0">
<testcase name="//deploy:deploy_test" status="run" duration="3" time="3"></testcase>
</testsuite>
</testsuites>
"""


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def run_lister(*args):
    return subprocess.run([sys.executable, LIST_SKIPS] + list(args),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True)


class ListSkipsTest(unittest.TestCase):

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.logs = os.path.join(self.tmp.name, "testlogs")
        os.makedirs(self.logs)

    def tearDown(self):
        self.tmp.cleanup()

    def listing(self, *extra):
        r = run_lister(self.logs, *extra)
        self.assertEqual(r.returncode, 0, r.stderr)
        return r.stdout, r.stderr

    def test_no_skips(self):
        write(self.logs, "deploy/deploy_test/test.xml", BAZEL_DEFAULT)
        write(self.logs, "compiler/cube_test/test.xml",
              '<testsuites><testsuite name="S"><testcase name="A" status="run" '
              'result="completed" classname="S" /></testsuite></testsuites>')
        out, _ = self.listing()
        self.assertEqual(out, "No skipped tests.\n")

    def test_gtest_all_skipped_is_a_skipped_target(self):
        write(self.logs, "compiler/pto_tile_exp_test/test.xml", GTEST_ALL_SKIPPED)
        write(self.logs, "deploy/deploy_test/test.xml", BAZEL_DEFAULT)
        out, _ = self.listing()
        self.assertIn(
            "SKIPPED //compiler:pto_tile_exp_test (2 cases) - "
            "this CPU lacks the ISA this test is built for\n", out)
        self.assertNotIn("deploy", out)
        self.assertNotIn("skipped: ", out)
        self.assertIn("2 skipped cases; 1 target skipped every case, 0 skipped some", out)

    def test_gtest_partly_skipped_lists_each_case(self):
        write(self.logs, "compiler/pto_cube_test/test.xml", GTEST_PARTLY_SKIPPED)
        out, _ = self.listing()
        self.assertNotIn("SKIPPED //", out)
        self.assertIn("skipped: //compiler:pto_cube_test "
                      "PtoCubeTest.Avx512AndAvx2PathsAgreeBitwise - no AVX-512F on this CPU\n",
                      out)
        self.assertIn("skipped: //compiler:pto_cube_test PtoCubeTest.Bare - "
                      "(no reason given)\n", out)
        self.assertNotIn("DISABLED_Slow", out)  # not run: not a skip
        self.assertIn("2 skipped cases; 0 targets skipped every case, 1 skipped some", out)

    def test_environment_skip_is_a_skipped_target(self):
        write(self.logs, "compiler/pto_tile_test_v4/test.xml", GTEST_ENVIRONMENT_SKIPPED)
        out, _ = self.listing()
        self.assertIn("SKIPPED //compiler:pto_tile_test_v4 (2 cases) - needs AVX-512 F, "
                      "BW, CD, DQ and VL; this CPU or OS lacks them\n", out)
        self.assertIn("2 skipped cases; 1 target skipped every case", out)

    def test_pytest_shards_merge_into_one_target(self):
        base = "client/python/pypto_test"
        write(self.logs, base + "/shard_1_of_3/test.xml",
              pytest_shard([("test_bf16_matmul", "needs AMX-BF16 on this CPU")]))
        write(self.logs, base + "/shard_2_of_3/test.xml",
              pytest_shard([("test_tiles[16]", "/root/.cache/bazel/x/bin/client/python/"
                             "pypto_test.runfiles/pto/server/ptod not built")]))
        write(self.logs, base + "/shard_3_of_3/test.xml", pytest_shard([]))
        out, _ = self.listing()
        self.assertIn("skipped: //client/python:pypto_test tests.test_amx.test_bf16_matmul"
                      " - needs AMX-BF16 on this CPU\n", out)
        self.assertIn("skipped: //client/python:pypto_test tests.test_amx.test_tiles[16]"
                      " - server/ptod not built\n", out)
        self.assertNotIn("test_xf", out)  # an expected failure ran
        self.assertNotIn("shard", out)
        self.assertIn("2 skipped cases; 0 targets skipped every case, 1 skipped some", out)

    def test_sharded_gtest_all_skipped_across_shards(self):
        for k in (1, 2):
            write(self.logs, "compiler/rows_v4/shard_%d_of_2/test.xml" % k,
                  GTEST_ALL_SKIPPED)
        out, _ = self.listing()
        self.assertIn("SKIPPED //compiler:rows_v4 (4 cases) - ", out)

    def test_one_skipped_shard_does_not_skip_the_target(self):
        write(self.logs, "compiler/rows/shard_1_of_2/test.xml", GTEST_ALL_SKIPPED)
        write(self.logs, "compiler/rows/shard_2_of_2/test.xml", GTEST_PARTLY_SKIPPED)
        out, _ = self.listing()
        self.assertNotIn("SKIPPED //", out)
        self.assertIn("skipped: //compiler:rows PtoTileExp.Exp8 - ", out)

    def test_malformed_file_is_named_and_the_rest_listed(self):
        write(self.logs, "a/broken/test.xml", "<testsuites><testcase")
        write(self.logs, "compiler/pto_tile_exp_test/test.xml", GTEST_ALL_SKIPPED)
        out, err = self.listing()
        self.assertIn("cannot read", err)
        self.assertIn("a/broken/test.xml", err)
        self.assertIn("SKIPPED //compiler:pto_tile_exp_test", out)

    def test_missing_directory_is_an_error(self):
        r = run_lister(os.path.join(self.tmp.name, "nope"))
        self.assertEqual(r.returncode, 2)
        self.assertIn("no test logs", r.stderr)

    def test_workspace_finds_the_package_of_a_slashed_name(self):
        ws = os.path.join(self.tmp.name, "ws")
        write(ws, "a/BUILD", "")
        write(self.logs, "a/b/c/test.xml", GTEST_ALL_SKIPPED)
        out, _ = self.listing("--workspace", ws)
        self.assertIn("SKIPPED //a:b/c ", out)
        out, _ = self.listing()
        self.assertIn("SKIPPED //a/b:c ", out)

    def test_real_v4_report_without_avx512(self):
        self.assertTrue(DEMO, "usage: list_skips_test.py LIST_SKIPS_PY V4_TEST_SKIP_DEMO")
        xml = os.path.join(self.logs, "tools/demo_v4/test.xml")
        env = dict(os.environ, TEST_TARGET="//tools:demo_v4")
        for var in ("XML_OUTPUT_FILE", "GTEST_OUTPUT", "TEST_SHARD_INDEX",
                    "TEST_TOTAL_SHARDS", "TEST_SHARD_STATUS_FILE",
                    "TESTBRIDGE_TEST_ONLY", "GTEST_FILTER"):
            env.pop(var, None)
        r = subprocess.run([DEMO, "--gtest_output=xml:" + xml], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stdout)
        notices = [line for line in r.stdout.splitlines() if line.startswith("SKIPPED:")]
        self.assertEqual(len(notices), 1, r.stdout)
        self.assertTrue(notices[0].startswith("SKIPPED: //tools:demo_v4 needs AVX-512 F, BW"),
                        r.stdout)
        self.assertTrue(notices[0].endswith("; this CPU or OS lacks them"), r.stdout)
        # Before any test runs.
        self.assertLess(r.stdout.index("SKIPPED:"), r.stdout.index("[ RUN      ]"))
        self.assertIn("[  SKIPPED ] 3 tests", r.stdout)
        self.assertNotIn("ran without AVX-512", r.stdout)
        self.assertNotIn("SetUp ran", r.stdout)
        with open(xml) as f:
            report = f.read()
        self.assertEqual(report.count('result="skipped"'), 3, report)
        self.assertIn('pto_skip_reason="needs AVX-512', report)
        out, _ = self.listing()
        self.assertIn("SKIPPED //tools:demo_v4 (3 cases) - needs AVX-512 F, BW", out)
        self.assertIn("3 skipped cases; 1 target skipped every case, 0 skipped some", out)


FAKE_BAZEL = """#!/bin/bash
if [[ "$1" == info ]]; then echo "${FAKE_TESTLOGS}"; exit 0; fi
echo "fake bazel $*"
exit "${FAKE_BAZEL_STATUS}"
"""


class TestShTest(unittest.TestCase):
    """tools/test.sh in a scratch tree, with a stand-in bazel on PATH."""

    def setUp(self):
        self.assertTrue(TEST_SH, "usage: list_skips_test.py LIST_SKIPS_PY DEMO TEST_SH")
        self.tmp = tempfile.TemporaryDirectory()
        root = self.tmp.name
        with open(TEST_SH) as f:
            write(root, "tree/tools/test.sh", f.read())
        with open(LIST_SKIPS) as f:
            write(root, "tree/tools/list_skips.py", f.read())
        write(root, "tree/tools/setup.sh", "#!/bin/bash\n")
        write(root, "tree/tools/pypto-python", '#!/bin/bash\nexec %s "$@"\n' % sys.executable)
        write(root, "bin/bazel", FAKE_BAZEL)
        for rel in ("tree/tools/test.sh", "tree/tools/setup.sh",
                    "tree/tools/pypto-python", "bin/bazel"):
            os.chmod(os.path.join(root, rel), 0o755)
        self.logs = os.path.join(root, "testlogs")
        os.makedirs(self.logs)

    def tearDown(self):
        self.tmp.cleanup()

    def run_test_sh(self, bazel_status):
        env = dict(os.environ, FAKE_BAZEL_STATUS=str(bazel_status),
                   FAKE_TESTLOGS=self.logs,
                   PATH=os.path.join(self.tmp.name, "bin") + ":" + os.environ["PATH"])
        return subprocess.run([os.path.join(self.tmp.name, "tree/tools/test.sh"),
                               "--test_output=errors"], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              universal_newlines=True)

    def test_keeps_bazels_status_and_lists_skips(self):
        write(self.logs, "compiler/pto_tile_exp_test/test.xml", GTEST_ALL_SKIPPED)
        for status in (0, 1, 3):
            r = self.run_test_sh(status)
            self.assertEqual(r.returncode, status, r.stdout)
            self.assertIn("fake bazel test //... --test_output=errors", r.stdout)
            self.assertIn("SKIPPED //compiler:pto_tile_exp_test (2 cases)", r.stdout)

    def test_a_broken_lister_changes_no_status(self):
        with open(os.path.join(self.tmp.name, "tree/tools/list_skips.py"), "w") as f:
            f.write("import sys\nsys.exit(7)\n")
        for status in (0, 1):
            r = self.run_test_sh(status)
            self.assertEqual(r.returncode, status, r.stdout)
            self.assertIn("could not list the skipped tests (exit 7)", r.stdout)

    def test_a_malformed_report_changes_no_status(self):
        write(self.logs, "a/broken/test.xml", "<testsuites><testcase")
        for status in (0, 1):
            r = self.run_test_sh(status)
            self.assertEqual(r.returncode, status, r.stdout)
            self.assertIn("cannot read", r.stdout)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1], verbosity=2)
