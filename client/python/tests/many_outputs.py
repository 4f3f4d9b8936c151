"""One pypto kernel computing several functions of the same inputs: the
numerics tests compare many ops per compile this way."""

import pypto

ANY = pypto.Tensor[...]


def run_many(fns, inputs, outs, tile):
    """One kernel writing outs[k][:] = fns[k](*inputs); runs it on `inputs`
    (numpy arrays or torch tensors) and fills `outs`."""
    ins = ", ".join(f"a{i}: ANY" for i in range(len(inputs)))
    results = ", ".join(f"o{k}: ANY" for k in range(len(outs)))
    args = ", ".join(f"a{i}" for i in range(len(inputs)))
    body = "".join(f"    o{k}[:] = fns[{k}]({args})\n" for k in range(len(outs)))
    ns = {"ANY": ANY, "pypto": pypto, "fns": fns, "tile": tile}
    exec(f"def kernel({ins}, {results}):\n"
         f"    pypto.set_vec_tile_shapes(*tile)\n{body}", ns)
    pypto.jit(ns["kernel"])(*inputs, *outs)
    return outs
