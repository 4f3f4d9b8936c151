"""Dynamic dims (issue 4): one compile serves every size of a DYNAMIC dim.

A tensor annotation marks a dim dynamic with pypto.DYNAMIC (or a name:
pypto.Tensor(["bs", 64], ...)). Each call maps its dynamic dims to symbols:
a named dim is the symbol of that name (the same name in two annotations is
one symbol); an unnamed one is "<param>_d<i>", except that unnamed dynamic
dims with the size of an earlier dynamic dim in the same call share its
symbol (so out = f(x) with both [DYNAMIC, 64] is one symbol). The in-memory
signature holds the symbols instead of the sizes, and the graph is traced
once with each symbol at a large distinct prime size (a sentinel) whose dims
are written as symbols; the disk and ptod caches key on that graph, which has
no sizes in it. So a new size of a dynamic dim neither traces nor compiles:
the runtime binds the symbols from the arguments at launch.

Inside the kernel, x.shape[i] of a dynamic dim is a SymInt: an int (the
sentinel, usable in shape arithmetic of the trace) that prints as its
symbol's name.
"""

import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")
_FIRST_SENTINEL = 1_000_003


class SymInt(int):
    """A dynamic dim inside a traced kernel: int-valued (its sentinel size),
    named after its symbol."""

    def __new__(cls, value, name):
        obj = super().__new__(cls, value)
        obj.name = name
        return obj

    def __repr__(self):
        return self.name

    __str__ = __repr__


def is_symbol_name(name):
    return isinstance(name, str) and _IDENT.match(name) is not None


def _primes_from(n):
    while True:
        if n > 1 and all(n % k for k in range(2, int(n ** 0.5) + 1)):
            yield n
        n += 1


def sentinels(symbols):
    """{symbol: sentinel size} for `symbols` in order."""
    gen = _primes_from(_FIRST_SENTINEL)
    return {s: next(gen) for s in symbols}


def signature_shapes(params, shapes, is_dynamic):
    """Per tensor parameter, its shape with dynamic dims replaced by symbol
    names (str). `params`: names; `shapes`: actual shapes; `is_dynamic(k, i)`:
    None for a static dim, True for an unnamed dynamic one, or the name.
    A named symbol given two sizes is a ValueError naming both arguments."""
    out = [list(s) for s in shapes]
    by_size, named = {}, {}
    # Named dims first, so unnamed ones of the same size join them.
    for want_named in (True, False):
        for k, (pname, shape) in enumerate(zip(params, shapes)):
            for i, size in enumerate(shape):
                d = is_dynamic(k, i)
                if d is None or (isinstance(d, str)) != want_named:
                    continue
                if isinstance(d, str):
                    if d in named and named[d][0] != size:
                        other, oi = named[d][1], named[d][2]
                        raise ValueError(
                            f"argument '{pname}': dim {i} is {size}, but dynamic dim {d} is "
                            f"{named[d][0]} in argument '{other}' dim {oi}")
                    named.setdefault(d, (size, pname, i))
                    by_size.setdefault(size, d)
                    out[k][i] = d
                else:
                    out[k][i] = by_size.setdefault(size, f"{pname}_d{i}")
    return [tuple(s) for s in out]
