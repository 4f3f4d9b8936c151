"""RuntimeInt: a loop index of an eager run (eager.py), an int that remembers
it stands for a value the compiled kernel knows only at run time.

Where the front end treats a run-time index differently from a constant, an
eager run must do as the compiled kernel does: `out[i:, :] = y` with i a
loop index writes y's extent from row i (layout.py), not rows i to the end.
Arithmetic on a RuntimeInt gives a RuntimeInt, so `out[i * 16:, :] = y`
reads the same. `bounds` is its loop's (start, stop, step) on the index
itself (pypto.is_loop_begin / is_loop_end read it), None on results of
arithmetic.
"""


class RuntimeInt(int):
    """An int standing for a loop index (or arithmetic on one) in an eager run."""

    def __new__(cls, value, bounds=None):
        self = super().__new__(cls, value)
        self.bounds = bounds
        return self

    def __repr__(self):
        return int.__repr__(self)


def _wrap(name):
    op = getattr(int, name)

    def method(self, *other):
        r = op(self, *other)
        return RuntimeInt(r) if type(r) is int else r
    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__neg__", "__pos__",
              "__abs__"):
    setattr(RuntimeInt, _name, _wrap(_name))
del _name
