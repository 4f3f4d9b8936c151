"""bench/ceilings' triad and FMA loops in this process (libceilings.so, ctypes).

    lib = CeilingsLib("bazel-bin/bench/libceilings.so")   # bazel build //bench:libceilings.so
    triad = lib.triad(nbytes, threads)   # arrays allocated and warmed now
    seconds = triad()                    # one pass; bytes moved: triad.bytes
    read = lib.read(nbytes, threads)     # the triad's reads alone (sums of one array)
    fma = lib.fma(flops, threads)        # about `flops` of FMA chains per call
    seconds = fma()                      # flops done: fma.flops

Each call runs the loop on its threads and returns the loop's own wall time
as bench/ceilings measures it (a triad pass on threads kept between passes,
wake-ups included, until its last chunk is done; an FMA pass from all
threads started; see bench/ceilings_kernels.h): bench/kernels.py times these beside
each row, in the same interleaved blocks, so that a row and its ceiling see
the same machine. Plain Python (ctypes only), so tests can use it without
numpy.
"""

import ctypes

# An FMA call does at least this many iterations per thread (16 chains of
# one vector FMA each): about 0.4 ms on AVX-512 at 2.5 GHz, so the threads'
# start and join (microseconds) stay a small part of what is timed.
MIN_FMA_ITERS = 1 << 17


class CeilingsLib:
    """libceilings.so, loaded; raises OSError naming the path when it cannot be."""

    def __init__(self, path):
        lib = ctypes.CDLL(path)
        for name in ("pto_ceilings_triad_new", "pto_ceilings_read_new"):
            getattr(lib, name).restype = ctypes.c_void_p
            getattr(lib, name).argtypes = [ctypes.c_int64, ctypes.c_int]
        lib.pto_ceilings_triad_bytes.restype = ctypes.c_int64
        lib.pto_ceilings_triad_bytes.argtypes = [ctypes.c_void_p]
        for name in ("pto_ceilings_triad_elements", "pto_ceilings_triad_unwritten"):
            getattr(lib, name).restype = ctypes.c_int64
            getattr(lib, name).argtypes = [ctypes.c_void_p]
        lib.pto_ceilings_triad_pass.restype = ctypes.c_double
        lib.pto_ceilings_triad_pass.argtypes = [ctypes.c_void_p]
        lib.pto_ceilings_triad_free.restype = None
        lib.pto_ceilings_triad_free.argtypes = [ctypes.c_void_p]
        lib.pto_ceilings_chunk_bytes.restype = ctypes.c_int64
        lib.pto_ceilings_chunk_bytes.argtypes = []
        lib.pto_ceilings_triad_isa.restype = ctypes.c_char_p
        lib.pto_ceilings_triad_isa.argtypes = []
        lib.pto_ceilings_fma_isa.restype = ctypes.c_char_p
        lib.pto_ceilings_fma_isa.argtypes = []
        lib.pto_ceilings_fma_pass.restype = ctypes.c_double
        lib.pto_ceilings_fma_pass.argtypes = [ctypes.c_int, ctypes.c_int64,
                                              ctypes.POINTER(ctypes.c_double)]
        self._lib, self.path = lib, path
        self.fma_isa = lib.pto_ceilings_fma_isa().decode()
        self.triad_isa = lib.pto_ceilings_triad_isa().decode()
        # Bytes a pass's unit of work moves (triad or read): a pass over one
        # per thread is an empty pass (its fixed cost).
        self.chunk_bytes = lib.pto_ceilings_chunk_bytes()

    def triad(self, nbytes, threads):
        return Triad(self._lib, nbytes, threads)

    def read(self, nbytes, threads):
        return Triad(self._lib, nbytes, threads, read_only=True)

    def fma(self, flops, threads):
        return Fma(self._lib, flops, threads, self.fma_isa)


def _check_threads(what, threads):
    if not isinstance(threads, int) or threads < 1:
        raise ValueError(f"{what}: threads must be an int >= 1, got {threads!r}")


class Triad:
    """A triad over three arrays totalling about nbytes, or (read_only) its reads
    alone over one array of about nbytes; call it for one pass (seconds)."""

    def __init__(self, lib, nbytes, threads, read_only=False):
        self.kind = "read" if read_only else "triad"
        least = 4 if read_only else 12
        if not isinstance(nbytes, int) or nbytes < least:
            raise ValueError(f"{self.kind}: nbytes must be an int >= {least} (one element of "
                             f"each float array), got {nbytes!r}")
        _check_threads(self.kind, threads)
        self._lib, self.threads = lib, threads
        new = lib.pto_ceilings_read_new if read_only else lib.pto_ceilings_triad_new
        self._handle = new(nbytes, threads)
        if not self._handle:
            raise MemoryError(f"{self.kind}: could not set up {nbytes} bytes on {threads} threads")
        self.bytes = lib.pto_ceilings_triad_bytes(self._handle)

    def __call__(self):
        return self._lib.pto_ceilings_triad_pass(self._handle)

    def elements(self):
        return self._lib.pto_ceilings_triad_elements(self._handle)

    def unwritten(self):
        """Elements of the output no pass has written yet (tests)."""
        return self._lib.pto_ceilings_triad_unwritten(self._handle)

    def __del__(self):
        if getattr(self, "_handle", None):
            self._lib.pto_ceilings_triad_free(self._handle)
            self._handle = None


class Fma:
    """FMA chains of about `flops` (at least MIN_FMA_ITERS per thread) per call (seconds)."""

    def __init__(self, lib, flops, threads, isa):
        if flops <= 0:
            raise ValueError(f"fma: flops must be > 0, got {flops!r}")
        _check_threads("fma", threads)
        lanes = {"avx512": 16, "avx2": 8}.get(isa, 1)
        per_iter = 2 * lanes * 16  # 16 chains, two flops per FMA lane
        self._lib, self.threads, self.isa = lib, threads, isa
        self.iters = max(MIN_FMA_ITERS, int(flops) // (threads * per_iter))
        self.flops = float(self.iters * per_iter * threads)
        self._done = ctypes.c_double()

    def __call__(self):
        seconds = self._lib.pto_ceilings_fma_pass(self.threads, self.iters,
                                                  ctypes.byref(self._done))
        self.flops = self._done.value
        return seconds
