"""The first op whose compiled value differs from an eager run's.

A verified call (verify_run.py) whose compiled outputs differ from the
eager run knows only the outputs; the op that went wrong may lie many ops
before the one that wrote them. first_differing_op() finds it: the eager
run's ops (loops and branches already taken, so one straight list) are
compiled again with the results of a window of them as extra outputs
(tracer.GraphBuilder.probe_graph), run on the call's incoming arguments,
and each result compared with the eager run's value under the same rule
as the outputs (verify_run.differs). Windows of PROBES_PER_BUILD ops are
tried in program order until one holds a differing op, at most MAX_BUILDS
of them.

Such a build computes the same ops on the same data, but its intermediate
results go to memory, so it is fused and scheduled differently from the
kernel that was verified: when no op of it differs, the difference is in
how the kernel itself was fused or scheduled, and the caller says so.
"""

import numpy as np

from . import backend, config, dtypes, eager
from .errors import CompileError

PROBES_PER_BUILD = 32
MAX_BUILDS = 8


class Finding:
    """What the op-by-op builds found: `record` (eager.OpRecord) of the
    first differing op with one of its differing elements, or None with
    `reason` saying why none was named."""

    def __init__(self, record=None, index=None, compiled=None, eager_value=None, reason=""):
        self.record = record
        self.index = index
        self.compiled = compiled
        self.eager_value = eager_value
        self.reason = reason


def first_differing_op(jit_fn, run, before_args, before_kwargs, tol, differs):
    """Finding for eager Run `run` of `jit_fn` on the arguments as they
    were before the call; `differs(got, want, bound, tol)` is the
    element-wise mismatch mask of verify_run."""
    builder = run.builder
    candidates = [r for r in builder.records if r.vid not in builder._static]
    if not candidates:
        return Finding(reason="the eager run computed no op whose result can be compared")
    arrays, torches, _, specs = jit_fn._bind(before_args, before_kwargs)
    tensor_specs = [s for s in specs if s[0] != "scalar"]
    _, options, timeout = jit_fn.options.effective(config.honoured_now())
    for start in range(0, min(len(candidates), PROBES_PER_BUILD * MAX_BUILDS),
                       PROBES_PER_BUILD):
        window = candidates[start:start + PROBES_PER_BUILD]
        try:
            values = _run_probes(jit_fn.name, builder, [r.vid for r in window], arrays,
                                 torches, tensor_specs, options, timeout)
        except (CompileError, ValueError, NotImplementedError, RuntimeError) as e:
            return Finding(reason=f"a build with each op's result as an output failed: {e}")
        for record, got in zip(window, values):
            want = builder.data[record.vid]
            bad = differs(got, want, builder.bounds[record.vid], tol)
            if bad.any():
                index = tuple(int(i) for i in np.unravel_index(np.flatnonzero(bad)[0],
                                                                 want.shape))
                return Finding(record, index, got[index], want[index])
    if len(candidates) > PROBES_PER_BUILD * MAX_BUILDS:
        return Finding(reason=f"the first {PROBES_PER_BUILD * MAX_BUILDS} of "
                              f"{len(candidates)} ops agree with the eager run when built "
                              f"with their results as outputs")
    return Finding(reason="a build with each op's result as an output agrees with the eager "
                          "run op by op, so the difference comes from how the kernel itself "
                          "was fused or scheduled")


def _run_probes(name, builder, vids, arrays, torches, specs, options, timeout):
    """The compiled values (float64) of `vids`, computed by a build of
    the eager run's ops with those values as outputs."""
    graph = builder.probe_graph(vids)
    compiled = backend.get_kernel(graph, options, timeout, f"{name} (op by op)")
    outputs = [_empty(builder._values[vid][1], builder._values[vid][2]) for vid in vids]
    run_args = [np.ascontiguousarray(a) for a in arrays] + [o[0] for o in outputs]
    kinds = [spec[0] for spec in specs] + [builder._values[vid][1] for vid in vids]
    compiled.kernel.run(run_args, dtypes.run_dtypes(kinds))
    return [eager.input_values(array, t, builder._values[vid][1])
            for (array, t), vid in zip(outputs, vids)]


def _empty(dtype, shape):
    """(array the kernel writes, torch tensor or None) for a `dtype` output."""
    shape = tuple(int(d) for d in shape)
    if dtype == dtypes.DT_BF16:
        import torch  # BF16 data lives in torch tensors: numpy has none
        t = torch.zeros(shape, dtype=torch.bfloat16)
        return t.view(torch.int16).numpy(), t
    return np.zeros(shape, dtype=dtypes.to_numpy(dtypes.DataType(dtype))), None
