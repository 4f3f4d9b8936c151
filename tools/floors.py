"""The C++ floors check: no #include runs back up a floor.

docs/contributing.md ("The floors") holds the facts: a table of C++ floors
(paths) and the exceptions with their reasons. check(root) reads them from
`root`'s docs/contributing.md, scans the sources under `root` and returns
one line per violation:

  - a C++ file on floor F that includes a header of this repository on a
    floor above F, unless (file, header) is an exception;
  - a path the table does not place, an exception without a reason or no
    longer needed.

pypto's modules have their floors in client/python/tests/test_import_layers.py.

Test code (TEST_CODE) may include anything and is not checked.

Usage: floors.py [ROOT]   (prints the violations; exit status 1 if any)
"""

import os
import re
import sys

DOC = "docs/contributing.md"
CPP_ROOTS = ("proto", "runtime", "compiler", "server", "client")
INCLUDE = re.compile(r'\s*#\s*include\s+"([^"]+)"')
TEST_CODE = re.compile(r"(^|/)(tests|bench|tools|examples|testing|fuzz|numerics)/|_test\.cc$|"
                       r"_fuzz\w*\.cc$")


def _table_after(lines, marker):
    """The rows (lists of cells) of the first Markdown table after the
    line starting with `marker`."""
    start = next((i for i, line in enumerate(lines) if line.startswith(marker)), None)
    if start is None:
        raise ValueError(f"{DOC}: no line starting with {marker!r}")
    rows, seen = [], False
    for line in lines[start + 1:]:
        if line.startswith("|"):
            seen = True
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif seen:
            break
    return rows[1:]  # without the header


def _names(cell):
    return re.findall(r"`([^`]+)`", cell)


def read_floors(doc_text):
    """(cpp: path prefix -> floor, exceptions: {(file, header): reason})
    from the text of docs/contributing.md."""
    lines = doc_text.splitlines()
    cpp = {p.rstrip("/"): int(row[0])
           for row in _table_after(lines, "C++, from the ground up") for p in _names(row[1])}
    exceptions = {}
    for row in _table_after(lines, "Exceptions, each with its reason"):
        files, headers = _names(row[0]), _names(row[1])
        if len(files) != 1 or len(headers) != 1:
            raise ValueError(f"{DOC}: an exception row names one file and one header: {row}")
        exceptions[(files[0], headers[0])] = row[2] if len(row) > 2 else ""
    return cpp, exceptions


def cpp_floor(path, cpp):
    """The floor of repository path `path` (longest prefix), or None."""
    best = None
    for prefix, floor in cpp.items():
        if path == prefix or path.startswith(prefix + "/"):
            if best is None or len(prefix) > len(best[0]):
                best = (prefix, floor)
    return None if best is None else best[1]


def _sources(root, top, suffixes):
    for dirpath, dirnames, filenames in os.walk(os.path.join(root, top), followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(("bazel-", ".")))
        for f in sorted(filenames):
            if f.endswith(suffixes):
                yield os.path.relpath(os.path.join(dirpath, f), root)


def check_cpp(root, cpp, exceptions):
    problems, used = [], set()
    for top in CPP_ROOTS:
        for path in _sources(root, top, (".h", ".cc")):
            if TEST_CODE.search(path):
                continue
            floor = cpp_floor(path, cpp)
            if floor is None:
                problems.append(f"{path}: on no floor of {DOC}'s table")
                continue
            with open(os.path.join(root, path), errors="replace") as f:
                for number, line in enumerate(f, 1):
                    m = INCLUDE.match(line)
                    if not m or m.group(1).split("/")[0] not in CPP_ROOTS:
                        continue
                    header = m.group(1)
                    to = cpp_floor(header, cpp)
                    if to is None or to <= floor or TEST_CODE.search(header):
                        continue
                    if (path, header) in exceptions:
                        used.add((path, header))
                        continue
                    problems.append(f"{path}:{number}: includes {header} (floor {to}) from "
                                    f"floor {floor}: a floor may include only its own and "
                                    f"those below")
    for (path, header), reason in exceptions.items():
        if not reason:
            problems.append(f"{DOC}: the exception {path} -> {header} gives no reason")
        elif (path, header) not in used:
            problems.append(f"{DOC}: the exception {path} -> {header} is not needed (no such "
                            f"include runs up a floor): remove it")
    return problems


def check(root):
    with open(os.path.join(root, DOC)) as f:
        cpp, exceptions = read_floors(f.read())
    return check_cpp(root, cpp, exceptions)


def main(argv):
    root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = check(root)
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
