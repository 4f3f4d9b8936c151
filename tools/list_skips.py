#!/usr/bin/python3
"""Lists the skipped tests of a Bazel test run, which Bazel reports PASSED.

    tools/list_skips.py [--workspace DIR] TESTLOGS_DIR

Reads every test.xml under TESTLOGS_DIR (bazel-testlogs: one per target,
<package>/<target>/test.xml, or one per shard or run under
<package>/<target>/shard_K_of_N/ and run_K_of_N/) in the JUnit form that
gtest and pytest (--junitxml) write, and prints

    SKIPPED //pkg:target (N cases) - reason
        for a target that skipped every case it ran, or whose gtest binary
        recorded a pto_skip_reason on its <testsuites> element (the _v4
        targets on a CPU without AVX-512: tools/v4_test_skip.cc);
    skipped: //pkg:target Suite.case - reason
        for each skipped case of a target that ran others;

then a count. A gtest case is skipped when its result is "skipped" or it has
a <skipped> element; a pytest case when it has <skipped> of a type other than
pytest.xfail (an expected failure ran). Cases gtest did not run (disabled,
filtered, another shard's) are not counted.

--workspace names the source tree, so a target whose name has a slash gets
its package right (the longest directory with a BUILD file); without it the
package is the directory above the target's.

A file that cannot be parsed is named on stderr and left out; the exit status
is 0 unless TESTLOGS_DIR is missing (2), so the caller's own status (tools/
test.sh keeps Bazel's) decides whether the run passed.
"""

import argparse
import collections
import os
import re
import sys
import xml.etree.ElementTree as ET

RUN_DIR = re.compile(r"^(shard_\d+_of_\d+|run_\d+_of_\d+|shard_\d+_of_\d+_run_\d+_of_\d+)$")
LOCATION = re.compile(r"^\S+:\d+:?$")  # gtest's "file.cc:31" first line
RUNFILES = re.compile(r"/\S*?\.runfiles/[^/\s]+/")  # a test's runfiles root


class TargetSkips:
    def __init__(self):
        self.cases = 0          # cases that ran (or were skipped)
        self.skipped = []       # (case name, reason)
        self.target_reason = ""  # pto_skip_reason: the whole binary skipped


def _reason(skipped):
    """The reason of a <skipped> element, on one line, paths in a test's
    runfiles tree shortened to their part below it."""
    text = skipped.get("message") or (skipped.text or "")
    lines = text.strip().splitlines()
    if len(lines) > 1 and LOCATION.match(lines[0].strip()):
        lines = lines[1:]  # gtest: "file:line\nreason"
    reason = RUNFILES.sub("", " ".join(" ".join(lines).split()))
    if reason == "Skipped":
        reason = ""
    if len(reason) > 200:
        reason = reason[:197] + "..."
    return reason or "(no reason given)"


def _label(rel_dir, workspace):
    """//pkg:name for a target's directory relative to the testlogs root."""
    parts = rel_dir.split("/")
    if workspace:
        for cut in range(len(parts) - 1, -1, -1):
            pkg = "/".join(parts[:cut])
            base = os.path.join(workspace, pkg)
            if any(os.path.isfile(os.path.join(base, b))
                   for b in ("BUILD", "BUILD.bazel")):
                return "//%s:%s" % (pkg, "/".join(parts[cut:]))
    return "//%s:%s" % ("/".join(parts[:-1]), parts[-1])


def _target_dir(rel_xml):
    """The target's directory for a test.xml path (shard/run dirs dropped)."""
    parts = rel_xml.split("/")[:-1]
    if len(parts) > 1 and RUN_DIR.match(parts[-1]):
        parts = parts[:-1]
    return "/".join(parts)


def read_file(path, into):
    """Adds the cases of one test.xml to `into` (a TargetSkips)."""
    root = ET.parse(path).getroot()
    reason = root.get("pto_skip_reason")
    if reason:
        into.target_reason = reason
    for case in root.iter("testcase"):
        if case.get("status") == "notrun" or case.get("result") == "suppressed":
            continue
        into.cases += 1
        name = case.get("name", "?")
        suite = case.get("classname", "")
        full = "%s.%s" % (suite, name) if suite else name
        skipped = [s for s in case.findall("skipped")
                   if s.get("type") != "pytest.xfail"]
        xfail = [s for s in case.findall("skipped")
                 if s.get("type") == "pytest.xfail"]
        if skipped:
            into.skipped.append((full, _reason(skipped[0])))
        elif case.get("result") == "skipped" and not xfail:
            into.skipped.append((full, "(no reason given)"))


def collect(testlogs, workspace=None, err=sys.stderr):
    """label -> TargetSkips for every test.xml under `testlogs`."""
    targets = collections.OrderedDict()
    for dirpath, dirnames, filenames in os.walk(testlogs):
        dirnames.sort()
        if "test.xml" not in filenames:
            continue
        path = os.path.join(dirpath, "test.xml")
        rel = os.path.relpath(path, testlogs).replace(os.sep, "/")
        if rel.startswith("external/"):
            continue
        label = _label(_target_dir(rel), workspace)
        skips = targets.setdefault(label, TargetSkips())
        try:
            read_file(path, skips)
        except (ET.ParseError, OSError) as e:
            print("list_skips: cannot read %s: %s" % (path, e), file=err)
    return targets


def report(targets, out=sys.stdout):
    """Prints the listing; returns (skipped targets, skipped cases)."""
    whole, cases, partial = 0, 0, 0
    lines = []
    for label, t in sorted(targets.items()):
        if t.target_reason or (t.cases and len(t.skipped) == t.cases):
            whole += 1
            n = max(t.cases, len(t.skipped))
            cases += n
            reasons = [t.target_reason] if t.target_reason else []
            for _, r in t.skipped:
                if r not in reasons:
                    reasons.append(r)
            lines.append("SKIPPED %s (%d cases) - %s" %
                         (label, n, "; ".join(reasons)))
        elif t.skipped:
            partial += 1
            cases += len(t.skipped)
            for case, r in t.skipped:
                lines.append("skipped: %s %s - %s" % (label, case, r))
    if not lines:
        print("No skipped tests.", file=out)
        return 0, 0
    print("Skipped tests (Bazel reports these targets PASSED):", file=out)
    for line in lines:
        print(line, file=out)
    print("%d skipped case%s; %d target%s skipped every case, %d skipped some" %
          (cases, "" if cases == 1 else "s", whole, "" if whole == 1 else "s",
           partial), file=out)
    return whole, cases


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("testlogs")
    parser.add_argument("--workspace")
    args = parser.parse_args(argv)
    if not os.path.isdir(args.testlogs):
        print("list_skips: no test logs at %s" % args.testlogs, file=sys.stderr)
        return 2
    report(collect(args.testlogs, args.workspace))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
