"""Reads and applies the mutant files of tools/mutants.sh.

A mutant file (tools/mutants/<name>.mutant) holds:

  # Comment lines: the bug, and which tests must fail because of it.
  targets: //pkg:test_a //pkg:test_b
  filter //pkg:test_b: Suite.Case:Suite.Other*
  @@ path/in/the/repo.cc
  <<<<<<< original
  exact original lines (whole lines; they must occur exactly once in the file)
  =======
  the lines that replace them (may be none)
  >>>>>>> mutant

One or more @@ blocks, each with one or more original/mutant pairs. `filter`
(optional, once per target) runs that target with --test_filter.

Usage:
  mutant.py targets FILE          one line per target: TARGET<TAB>FILTER
  mutant.py check FILE TREE       exit 2 unless every original matches once
  mutant.py apply FILE TREE       check, then write the mutated files
"""
import os
import sys


class MutantError(Exception):
    pass


def parse(path):
    targets, filters, edits = [], {}, []
    current_file = None
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#") or not line.strip():
            i += 1
        elif line.startswith("targets:"):
            targets += line[len("targets:"):].split()
            i += 1
        elif line.startswith("filter "):
            target, _, pattern = line[len("filter "):].partition(": ")
            if not pattern.strip():
                raise MutantError(f"{path}:{i + 1}: filter needs 'TARGET: PATTERN'")
            filters[target.strip()] = pattern.strip()
            i += 1
        elif line.startswith("@@ "):
            current_file = line[3:].strip()
            i += 1
        elif line == "<<<<<<< original":
            if current_file is None:
                raise MutantError(f"{path}:{i + 1}: an edit before any '@@ FILE' line")
            start = i + 1
            try:
                mid = lines.index("=======", start)
                end = lines.index(">>>>>>> mutant", mid + 1)
            except ValueError:
                raise MutantError(f"{path}:{i + 1}: an edit without '=======' "
                                  "and '>>>>>>> mutant'")
            original = "".join(l + "\n" for l in lines[start:mid])
            replacement = "".join(l + "\n" for l in lines[mid + 1:end])
            if not original:
                raise MutantError(f"{path}:{i + 1}: an empty original")
            if original == replacement:
                raise MutantError(f"{path}:{i + 1}: the replacement is the original")
            edits.append((current_file, original, replacement))
            i = end + 1
        else:
            raise MutantError(f"{path}:{i + 1}: unexpected line: {line!r}")
    if not targets:
        raise MutantError(f"{path}: no 'targets:' line")
    if not edits:
        raise MutantError(f"{path}: no edits")
    for target in filters:
        if target not in targets:
            raise MutantError(f"{path}: filter for {target}, which is not a target")
    return targets, filters, edits


def mutated_files(path, tree):
    """{file: mutated contents}, or MutantError if an original does not match."""
    _, _, edits = parse(path)
    contents = {}
    for name, original, replacement in edits:
        full = os.path.join(tree, name)
        if name not in contents:
            if not os.path.isfile(full):
                raise MutantError(f"{path}: {name} does not exist")
            contents[name] = open(full, encoding="utf-8").read()
        # Whole lines: the original matches only from the start of a line.
        text = "\n" + contents[name]
        count = text.count("\n" + original)
        if count != 1:
            first = original.strip().split("\n")[0]
            raise MutantError(
                f"{path}: the original text occurs {count} times in {name} "
                f"(must be once), starting: {first!r}")
        contents[name] = text.replace("\n" + original, "\n" + replacement)[1:]
    return contents


def main(argv):
    if len(argv) < 3 or argv[1] not in ("targets", "check", "apply"):
        sys.stderr.write(__doc__)
        return 1
    try:
        if argv[1] == "targets":
            targets, filters, _ = parse(argv[2])
            for t in targets:
                print(f"{t}\t{filters.get(t, '')}")
            return 0
        contents = mutated_files(argv[2], argv[3])
        if argv[1] == "apply":
            for name, text in contents.items():
                with open(os.path.join(argv[3], name), "w", encoding="utf-8") as f:
                    f.write(text)
                print(name)
        return 0
    except MutantError as e:
        print(f"mutant: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
