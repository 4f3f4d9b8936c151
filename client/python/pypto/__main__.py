"""python -m pypto: the disk kernel cache from the command line.

    python -m pypto cache-dir      # where kernels are cached ($PYPTO_CACHE_DIR)
    python -m pypto cache-info     # how many kernels, how many bytes
    python -m pypto clear-cache    # delete them (same as pypto.clear_cache())
"""

import argparse
import sys

from . import cache


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m pypto", description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=["cache-dir", "cache-info", "clear-cache"])
    args = parser.parse_args(argv)
    if args.command == "cache-dir":
        print(cache.cache_dir())
    elif args.command == "cache-info":
        entries = cache.entries()
        print(f"{cache.cache_dir()}: {len(entries)} kernels, "
              f"{sum(size for _, size in entries)} bytes")
    else:
        print(f"{cache.cache_dir()}: removed {cache.clear_cache()} kernels")
    return 0


if __name__ == "__main__":
    sys.exit(main())
