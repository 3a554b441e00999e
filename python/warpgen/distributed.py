"""Reductions of arrays sharded across GPUs and processes, over the engine
the caller already runs (torch.distributed with NCCL or gloo).

    import warpgen.distributed as wd
    i = wd.reduce(shard, "argmax")            # the global index, every rank
    v = wd.reduce(shard, "var", correction=0)
    s = wd.reduce(shard, "sum", map="x * x")

Each rank reduces its own shard to the operator's accumulator, without the
final step (wg_reduce_partial: argmax's index is already global), the ranks
exchange the accumulators, and each rank folds them in rank order and
applies the final step (wg_reduce_combine). warpgen moves no bytes itself:

  - an accumulator that is one integer whose combine the engine's own
    reduction gives bit for bit in any order (integer sum, prod, min, max;
    count_nonzero; wg_accumulator_layout.native) goes through all_reduce;
  - every other one (float scalars, (value, index), (count, mean, M2),
    (max, sum of exp), user combines) goes through all_gather of its bytes,
    then warpgen's combine. Float sums go this way too: NCCL's all_reduce
    does not promise the same bits in every run (its algorithm, protocol
    and channel count may change with the size, the topology and the
    environment), while a one-thread fold of the gathered bytes in rank
    order does. The bytes are a few dozen per rank, so gathering costs no
    more than reducing.

Every rank gets the same bits (the same bytes, folded in the same order by
the same kernel), and the same input gives the same bits on every run.

The pieces are separate so that each can be replaced: a `comm` (how ranks
exchange bytes: TorchComm over torch.distributed, or any object with the
same four methods, e.g. the tests' fake process group) and a `shard` (how a
rank makes and folds accumulators: DeviceShard, warpgen on the GPU).
"""

import ctypes

from . import _lib, expressions
from ._lib import lib
from .arrays import integer, is_dense, view
from .context import default_context
from .errors import ArrayError
from .ops import _context_for, _op_index, _params, _ready, _scalar

# wg_accumulator_layout.native -> the name the comms take
_NATIVE = {"sum": "sum", "prod": "prod", "min": "min", "max": "max"}


class Layout:
    """wg_accumulator_layout as Python: size and align in bytes, fields as
    (name, type, offset), native the operator an engine may all-reduce the
    accumulator with ("sum", "prod", "min", "max"), or None."""

    def __init__(self, c):
        self.size = c.size
        self.align = c.align
        self.fields = [(c.fields[k].name.decode(), _lib.TYPES[c.fields[k].type],
                        c.fields[k].offset) for k in range(c.nfields)]
        native = _lib.OPERATORS[c.native] if c.native else None
        self.native = _NATIVE.get(native)

    def __repr__(self):
        return (f"Layout(size={self.size}, align={self.align}, "
                f"fields={self.fields}, native={self.native})")


def accumulator_layout(spec, context=None):
    """The accumulator layout of a reduce-array spec (a Spec or its text):
    what one rank's bytes are (wg_reduce_accumulator)."""
    ctx = default_context(None) if context is None else context
    c = ctx.c_spec(spec)
    out = _lib.wg_accumulator_layout()
    status = lib.wg_reduce_accumulator(ctypes.byref(out), ctypes.byref(c))
    if status != _lib.WG_OK:
        ctx.validate_spec(c)  # raises with the library's message
        raise ArrayError("no accumulator layout for this spec")
    return Layout(out)


def spec_for(types, op=None, *, map=None, combine=None, identity=None,
             final=None, params=()):
    """The reduce-array spec text of a sharded reduction (params: the
    ordered parameter values, expressions.order_params)."""
    if combine is None and op is None:
        op = "sum"
    if op is not None:
        _op_index(op)
    return expressions.spec_text("reduce-array", list(types), op, map=map,
                                 combine=combine, identity=identity,
                                 final=final, params=params)


# --- how ranks exchange bytes ----------------------------------------------

class TorchComm:
    """The four exchanges over torch.distributed (`group` None: the default
    group). Buffers are uint8 tensors: on the shard's GPU for NCCL, on the
    CPU for gloo (copied there and back)."""

    def __init__(self, group=None, device=None):
        import torch
        import torch.distributed as dist
        self.torch, self.dist, self.group = torch, dist, group
        self.rank = dist.get_rank(group)
        self.world = dist.get_world_size(group)
        backend = str(dist.get_backend(group)).lower()
        self.on_host = "nccl" not in backend
        if device is None and not self.on_host:  # NCCL: the current GPU
            device = torch.device("cuda", torch.cuda.current_device())
        self.device = device

    def _here(self, t):
        return t.cpu() if self.on_host else t

    def _back(self, t, like):
        return t.to(like.device) if self.on_host else t

    def all_gather_counts(self, n):
        """Every rank's element count, in rank order (a list of ints)."""
        t = self.torch.tensor([n], dtype=self.torch.int64,
                              device="cpu" if self.on_host else self.device)
        out = self.torch.empty(self.world, dtype=self.torch.int64,
                               device=t.device)
        self.dist.all_gather_into_tensor(out, t, group=self.group)
        return [int(v) for v in out.tolist()]

    def all_gather(self, buf):
        """Every rank's bytes (uint8 tensor, same size everywhere),
        concatenated in rank order."""
        src = self._here(buf)
        out = self.torch.empty(self.world * src.numel(), dtype=self.torch.uint8,
                               device=src.device)
        self.dist.all_gather_into_tensor(out, src, group=self.group)
        return self._back(out, buf)

    def all_reduce(self, buf, op, type_):
        """buf (one integer of warpgen type `type_`, as bytes) reduced in
        place over every rank with op ("sum", "prod", "min", "max")."""
        dtype = {4: self.torch.int32, 8: self.torch.int64}[_lib.TYPE_SIZES[type_]]
        t = self._here(buf).view(dtype)
        ops = {"sum": self.dist.ReduceOp.SUM, "prod": self.dist.ReduceOp.PRODUCT,
               "min": self.dist.ReduceOp.MIN, "max": self.dist.ReduceOp.MAX}
        self.dist.all_reduce(t, op=ops[op], group=self.group)
        return self._back(t.view(self.torch.uint8), buf)


# --- how a rank makes and folds accumulators --------------------------------

class DeviceShard:
    """One rank's shard on its GPU: wg_reduce_partial into a uint8 tensor of
    the accumulator's bytes, wg_reduce_combine of k of them into a Python
    scalar. x: a torch tensor (or a tuple of up to 4 of one shape)."""

    def __init__(self, x, op=None, *, map=None, combine=None, identity=None,
                 final=None, correction=None, context=None, **params):
        import torch
        self.torch = torch
        arrays = tuple(x) if isinstance(x, (tuple, list)) else (x,)
        self.vs = [view(a) for a in arrays]
        v = self.v = self.vs[0]
        for w in self.vs:
            if w.kind != "torch":
                raise ArrayError("warpgen.distributed reduces torch tensors "
                                 "(torch.distributed moves the bytes)")
            if not is_dense(w.shape, w.strides):
                raise ArrayError("distributed.reduce: pass contiguous shards")
            if w.shape != v.shape:
                raise ArrayError("distributed.reduce: the inputs differ in shape")
        self.ctx = _context_for(v, context)
        names, values = expressions.order_params(params)
        exprs = [None if e is None else expressions.rename(e, names)
                 for e in (map, combine, identity, final)]
        if correction is not None and values:
            raise ArrayError("correction= and expression parameters do not "
                             "go together")
        self.text = spec_for([w.type for w in self.vs], op, map=exprs[0],
                             combine=exprs[1], identity=exprs[2],
                             final=exprs[3], params=values)
        self.c = self.ctx.c_spec(self.text)
        out = lib.wg_reduce_spec_output_type(ctypes.byref(self.c))
        if out < 0:
            self.ctx.validate_spec(self.c)
        self.out_type = _lib.TYPES[out]
        self.layout = accumulator_layout(self.text, self.ctx)
        self.acc_type = self.layout.fields[0][1]
        self.params, self.nparams = (expressions.scalars(values) if values
                                     else _params(correction))
        self.n = v.size
        self.device = v.obj.device

    def empty(self, k):
        return self.torch.empty(k * self.layout.size, dtype=self.torch.uint8,
                                device=self.device)

    def partial(self, base, total):
        acc = self.empty(1)
        _ready(self.ctx, self.v)
        k = len(self.vs)
        inputs = (ctypes.c_uint64 * k)(*[w.ptr or acc.data_ptr() for w in self.vs])
        self.ctx.call(lib.wg_reduce_partial, ctypes.byref(self.c), inputs, k,
                      self.n, base, total, self.params, self.nparams,
                      acc.data_ptr(), self.v.stream)
        return acc

    def combine(self, accs, k, total):
        ptr = accs.data_ptr()

        def launch(handle, scratch):
            return lib.wg_reduce_combine(handle, ctypes.byref(self.c), ptr, k,
                                         total, self.params, self.nparams,
                                         scratch, self.v.stream)
        raw = self.ctx.reduce_to_host(launch, self.v.stream,
                                      _lib.TYPE_SIZES[self.out_type])
        return _scalar(raw, self.out_type)


# --- the reduction ---------------------------------------------------------

def reduce_shards(shard, comm, sizes=None):
    """The protocol, for any shard and comm: counts (unless `sizes`, every
    rank's element count in rank order, is given), this rank's partial at
    its global offset, then all_reduce of a native accumulator or
    all_gather of the bytes, then the combine in rank order."""
    if sizes is None:
        sizes = comm.all_gather_counts(shard.n)
    counts = [integer(s) for s in sizes]
    if any(c is None or c < 0 for c in counts) or sum(counts) >= 2**63:
        raise ArrayError(f"sizes= {sizes} are not element counts (integers "
                         f"from 0, in all less than 2**63)")
    sizes = counts
    if len(sizes) != comm.world or sizes[comm.rank] != shard.n:
        raise ArrayError(f"sizes= {sizes} does not match this rank's shard "
                         f"({shard.n} elements at rank {comm.rank} of "
                         f"{comm.world})")
    base, total = sum(sizes[:comm.rank]), sum(sizes)
    acc = shard.partial(base, total)
    if shard.layout.native is not None:
        acc = comm.all_reduce(acc, shard.layout.native, shard.acc_type)
        return shard.combine(acc, 1, total)
    return shard.combine(comm.all_gather(acc), comm.world, total)


def reduce(x, op=None, group=None, *, map=None, combine=None, identity=None,
           final=None, correction=None, sizes=None, comm=None, context=None,
           **params):
    """Reduces the array whose shards the ranks of `group` hold (x: this
    rank's shard, a CUDA torch tensor or a tuple of up to 4 of one shape;
    shards may differ in size, and be empty) and returns the result, a
    Python scalar, the same bits on every rank. op, the expressions
    (map=, combine=, identity=, final=), correction= and parameters as for
    warpgen.reduce; in map= i is the global index and n the global count;
    argmin/argmax give the global index (the lowest on ties across ranks).
    The shards are in rank order: rank r's elements follow rank r - 1's.
    sizes=: every rank's element count, when known, saves one exchange.
    comm=: the exchange (default TorchComm(group)). Every rank must call
    it, with the same op, expressions and parameters (a collective)."""
    shard = DeviceShard(x, op, map=map, combine=combine, identity=identity,
                        final=final, correction=correction, context=context,
                        **params)
    if comm is None:
        comm = TorchComm(group, shard.device)
    return reduce_shards(shard, comm, sizes)


__all__ = ["DeviceShard", "Layout", "TorchComm", "accumulator_layout",
           "reduce", "reduce_shards", "spec_for"]
