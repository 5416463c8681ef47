"""_torch_backend.py - torch.compile(fn, backend="tx").

Dynamo hands the backend an FX graph; aot_autograd turns it into ATen ops
(functional, no decompositions asked for: softmax, layer_norm, gelu, silu
and the SDPA kernels arrive whole). Each node whose op this file can write
in tx (the OPS table) and whose tensors have tx dtypes is supported; the
FX capability partitioner groups supported nodes into the largest acyclic
partitions; each partition that computes something becomes one tx program
(generated .tx source, compiled once, its kernels fused by tx's planner)
and the rest of the graph stays PyTorch. Symbolic sizes (dynamic shapes)
become symbolic dims, so a new size only rebinds the program's dims.

TX_LOG=backend prints, per graph, every node that runs in tx (and in which
program) and, for every other one, why not; TX_LOG=backend+src also prints
the generated sources. A partition tx cannot compile runs in PyTorch (the
log says why)."""
import math
import operator
import os
import sys

from ._program import CompileError, Error, compile_source

_DTYPES = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16", "torch.int32": "i32",
           "torch.bool": "bool"}
_FLOAT_RANK = {"f16": 1, "bf16": 1, "f32": 2}
_BIG = "3.0e38"  # stands for inf: above every bf16/f32 value a mask competes with, exp() of it minus a max is 0


def _log_on(what="backend"):
    v = os.environ.get("TX_LOG", "")
    return what in v.replace("+", ",").split(",")


def _log(msg):
    if _log_on():
        print("[tx backend] " + msg, file=sys.stderr, flush=True)


class Unsupported(Exception):
    """Why a node cannot be written in tx (the log's reason)."""


# ---- values: dtype and shape of a node, as tx writes them -------------------
def _val(n):
    """The example value (FakeTensor, SymInt, ...) recorded for node n."""
    return n.meta.get("val", n.meta.get("example_value")) if hasattr(n, "meta") else None


def _is_tensor(v):
    import torch
    return isinstance(v, torch.Tensor)


def _tx_dtype(v):
    dt = _DTYPES.get(str(v.dtype))
    if dt is None:
        raise Unsupported(f"dtype {v.dtype} has no tx equivalent")
    return dt


def _dim(d):
    """A size as tx writes it: an integer, or a symbolic size's name; None
    when it is an expression of symbols (2*s0) tx cannot name."""
    if isinstance(d, int):
        return str(d)
    node = getattr(d, "node", None)
    expr = getattr(node, "expr", None)
    if expr is not None and getattr(expr, "is_Symbol", False):
        return str(expr)
    if expr is not None and getattr(expr, "is_Integer", False):
        return str(int(expr))
    try:
        return str(int(d)) if not hasattr(d, "node") else None
    except (TypeError, ValueError):
        return None


def _dims(shape, allow_infer=False):
    out = [_dim(d) for d in shape]
    if None in out:
        if allow_infer and out.count(None) == 1:
            return ["-1" if d is None else d for d in out]
        raise Unsupported("a size that is an expression of symbolic sizes (" +
                          ", ".join(str(d) for d in shape) + ")")
    return out


def _tuple(items):
    items = list(items)
    return "(" + ", ".join(items) + (",)" if len(items) == 1 else ")")


def _promote(a, b):
    """tx's result dtype of a binary op on dtypes a, b (None: a weak literal)."""
    if a is None or a == b:
        return b
    if b is None:
        return a
    if a in _FLOAT_RANK and b in _FLOAT_RANK:
        return "f32" if _FLOAT_RANK[a] == _FLOAT_RANK[b] or "f32" in (a, b) else a
    if a in _FLOAT_RANK:
        return a
    if b in _FLOAT_RANK:
        return b
    return "i32" if "i32" in (a, b) else a


# ---- the generator ------------------------------------------------------------
class _Gen:
    """Writes one FX (sub)graph as a tx function."""

    def __init__(self, graph, ph_vals=None):
        self.graph = graph
        self.ph_vals = ph_vals  # example values of the placeholders, in order (None: their own meta)
        self.splits = {}  # split node -> (source node, dim, [(start, stop)])
        self.expr = {}    # node -> tx name of its value
        self.dtype = {}   # node -> tx dtype
        self.lines = []
        self.params = []  # (name, node) of tensor placeholders
        self.count = 0

    def fresh(self):
        self.count += 1
        return f"v{self.count}"

    def arg(self, a):
        """A node argument as a tx expression (literals weakly typed)."""
        if hasattr(a, "op"):  # an fx Node
            if a not in self.expr:
                raise Unsupported(f"uses {a.name}, which is not a tensor value of the partition")
            return self.expr[a]
        if isinstance(a, bool):
            return "true" if a else "false"
        if isinstance(a, (int, float)):
            if isinstance(a, float) and math.isnan(a):
                raise Unsupported("a NaN literal")
            if isinstance(a, float) and math.isinf(a):  # (tx's frontend has no inf literal yet)
                return _BIG if a > 0 else f"(-{_BIG})"
            s = repr(float(a)) if isinstance(a, float) else str(a)
            return f"({s})" if s.startswith("-") else s
        raise Unsupported(f"argument {a!r} of type {type(a).__name__}")

    def argdt(self, a):
        return self.dtype.get(a) if hasattr(a, "op") else None

    def emit(self, node, text, dtype):
        """Binds node to `text`, cast to the node's torch dtype when tx's
        inferred dtype differs."""
        v = _val(node)
        if isinstance(v, (tuple, list)):
            v = v[0]
        want = _tx_dtype(v) if _is_tensor(v) else dtype
        if want != dtype:
            text = f"{want}({text})"
        name = self.fresh()
        self.lines.append(f"  {name} = {text}")
        self.expr[node] = name
        self.dtype[node] = want

    def source(self, fname="k"):
        ret = None
        k = 0
        for n in self.graph.nodes:
            if n.op == "placeholder":
                v = self.ph_vals[k] if self.ph_vals is not None else _val(n)
                k += 1
                n.meta.setdefault("val", v)
                if _is_tensor(v):
                    name = f"a{len(self.params)}"
                    self.params.append((name, n))
                    self.expr[n] = name
                    self.dtype[n] = _tx_dtype(v)
            elif n.op == "call_function":
                _write(self, n)
            elif n.op == "output":
                ret = n.args[0]
            elif n.op == "get_attr":
                raise Unsupported("a constant attribute inside the partition")
        outs = list(ret) if isinstance(ret, (tuple, list)) else [ret]
        sig = ", ".join(f"{p}: {self.dtype[n]}[{', '.join(_dims(_val(n).shape))}]" for p, n in self.params)
        rets = []
        for o in outs:
            if o not in self.expr:
                raise Unsupported(f"returns {o}, which tx does not compute")
            rets.append(self.expr[o])
        body = "\n".join(self.lines)
        return f"fn {fname}({sig}) {{\n{body}\n  return {', '.join(rets)}\n}}\n", outs, isinstance(ret, (tuple, list))


def _unary(fn):
    return lambda g, n: g.emit(n, f"{fn}({g.arg(n.args[0])})", g.argdt(n.args[0]))


def _binary(op):
    def w(g, n):
        a, b = n.args[0], n.args[1]
        g.emit(n, f"({g.arg(a)} {op} {g.arg(b)})", _promote(g.argdt(a), g.argdt(b)))
    return w


def _compare(op):
    def w(g, n):
        g.emit(n, f"({g.arg(n.args[0])} {op} {g.arg(n.args[1])})", "bool")
    return w


def _add(sign):
    def w(g, n):
        a, b = n.args[0], n.args[1]
        alpha = n.kwargs.get("alpha", 1)
        bt = g.arg(b) if alpha == 1 else f"({g.arg(b)} * {g.arg(alpha)})"
        g.emit(n, f"({g.arg(a)} {sign} {bt})", _promote(g.argdt(a), g.argdt(b)))
    return w


def _rsub(g, n):
    a, b = n.args[0], n.args[1]
    if n.kwargs.get("alpha", 1) != 1:
        raise Unsupported("rsub with alpha")
    g.emit(n, f"({g.arg(b)} - {g.arg(a)})", _promote(g.argdt(a), g.argdt(b)))


def _div(g, n):
    if n.kwargs.get("rounding_mode") is not None:
        raise Unsupported("division with a rounding mode")
    _binary("/")(g, n)


def _axes(n, rank, pos=1):
    dims = n.args[pos] if len(n.args) > pos else n.kwargs.get("dim")
    if dims is None or dims == []:
        return None
    dims = [dims] if isinstance(dims, int) else list(dims)
    dims = [d % rank for d in dims]
    return str(dims[0]) if len(dims) == 1 else _tuple(str(d) for d in dims)


def _reduce(fn):
    def w(g, n):
        x = n.args[0]
        rank = len(_val(x).shape)
        ax = _axes(n, rank)
        keep = n.args[2] if len(n.args) > 2 else n.kwargs.get("keepdim", False)
        if n.kwargs.get("dtype") is not None:
            raise Unsupported("a reduction with dtype=")
        parts = [g.arg(x)] + ([f"axis={ax}"] if ax is not None else []) + (["keepdim=true"] if keep else [])
        g.emit(n, f"{fn}({', '.join(parts)})", g.argdt(x))
    return w


def _cast(g, n):
    v = _val(n)
    dt = _tx_dtype(v)
    if n.kwargs.get("device") is not None and str(n.kwargs["device"]) != str(_val(n.args[0]).device):
        raise Unsupported("a copy to another device")
    g.emit(n, f"{dt}({g.arg(n.args[0])})", dt)


def _reshape(g, n):
    g.emit(n, f"reshape({g.arg(n.args[0])}, {_tuple(_dims(_val(n).shape, allow_infer=True))})", g.argdt(n.args[0]))


def _identity(g, n):
    g.emit(n, g.arg(n.args[0]), g.argdt(n.args[0]))


def _expand(g, n):
    g.emit(n, f"broadcast_to({g.arg(n.args[0])}, {_tuple(_dims(_val(n).shape))})", g.argdt(n.args[0]))


def _t(g, n):
    x = n.args[0]
    if len(_val(x).shape) < 2:
        return _identity(g, n)
    g.emit(n, f"transpose({g.arg(x)}, 0, 1)", g.argdt(x))


def _transpose(g, n):
    g.emit(n, f"transpose({g.arg(n.args[0])}, {n.args[1]}, {n.args[2]})", g.argdt(n.args[0]))


def _permute(g, n):
    rank = len(_val(n.args[0]).shape)
    g.emit(n, f"permute({g.arg(n.args[0])}, {_tuple(str(d % rank) for d in n.args[1])})", g.argdt(n.args[0]))


def _slice(g, n):
    x, dim = n.args[0], n.args[1] if len(n.args) > 1 else 0
    start = n.args[2] if len(n.args) > 2 else 0
    end = n.args[3] if len(n.args) > 3 else None
    step = n.args[4] if len(n.args) > 4 else 1
    shape = _val(x).shape
    dim %= len(shape)
    size = shape[dim]
    if step != 1 or not isinstance(start, int) or (end is not None and not isinstance(end, int)):
        raise Unsupported("a slice with a step or symbolic bounds")
    if not isinstance(size, int):
        raise Unsupported("a slice of a symbolic dim")
    start = max(0, start + size if start < 0 else start)
    end = size if end is None or end > size else (end + size if end < 0 else end)
    g.emit(n, f"slice({g.arg(x)}, axis={dim}, start={start}, stop={end})", g.argdt(x))


def _cat(g, n):
    ts = n.args[0]
    dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
    rank = len(_val(ts[0]).shape)
    dt = None
    for t in ts:
        dt = _promote(dt, g.argdt(t))
    g.emit(n, f"concat({_tuple(g.arg(t) for t in ts)}, axis={dim % rank})", dt)


def _matmul(g, n):
    a, b = n.args[0], n.args[1]
    g.emit(n, f"({g.arg(a)} @ {g.arg(b)})", _promote(g.argdt(a), g.argdt(b)))


def _addmm(g, n):
    bias, a, b = n.args[0], n.args[1], n.args[2]
    if n.kwargs.get("beta", 1) != 1 or n.kwargs.get("alpha", 1) != 1:
        raise Unsupported("addmm with beta or alpha")
    g.emit(n, f"({g.arg(a)} @ {g.arg(b)} + {g.arg(bias)})",
           _promote(_promote(g.argdt(a), g.argdt(b)), g.argdt(bias)))


def _softmax(fn):
    def w(g, n):
        x, dim = n.args[0], n.args[1]
        half_to_float = len(n.args) > 2 and n.args[2]
        xs = g.arg(x)
        if half_to_float:
            xs = f"f32({xs})"
        rank = len(_val(x).shape)
        g.emit(n, f"{fn}({xs}, axis={dim % rank})", "f32" if half_to_float else g.argdt(x))
    return w


def _gelu(g, n):
    approx = n.kwargs.get("approximate", n.args[1] if len(n.args) > 1 else "none")
    _unary("gelu_tanh" if approx == "tanh" else "gelu")(g, n)


def _where(g, n):
    c, a, b = n.args[:3]
    g.emit(n, f"where({g.arg(c)}, {g.arg(a)}, {g.arg(b)})", _promote(g.argdt(a), g.argdt(b)))


def _pow(g, n):
    a, b = n.args[0], n.args[1]
    g.emit(n, f"({g.arg(a)} ** {g.arg(b)})", _promote(g.argdt(a), g.argdt(b)))


def _layer_norm(g, n):
    """native_layer_norm(x, shape, w, b, eps) -> (y, mean, rstd): only y."""
    x, shape, w, b, eps = n.args[:5]
    if len(shape) != 1 or w is None or b is None:
        raise Unsupported("layer_norm over several dims or without weight and bias")
    _only_item0(n)
    g.emit(n, f"layernorm({g.arg(x)}, {g.arg(w)}, {g.arg(b)}, eps={g.arg(float(eps))})", g.argdt(x))


def _rms_norm(g, n):
    x, shape = n.args[0], n.args[1]
    w = n.args[2] if len(n.args) > 2 else n.kwargs.get("weight")
    eps = n.args[3] if len(n.args) > 3 else n.kwargs.get("eps")
    if len(shape) != 1 or w is None:
        raise Unsupported("rms_norm over several dims or without a weight")
    if eps is None:
        eps = 1.1920928955078125e-07 if g.argdt(x) == "f32" else 0.0078125
    g.emit(n, f"rmsnorm({g.arg(x)}, {g.arg(w)}, eps={g.arg(float(eps))})", g.argdt(x))


def _only_item0(n):
    for u in n.users:
        if not (u.op == "call_function" and u.target is operator.getitem and u.args[1] == 0):
            raise Unsupported(f"uses more than the first result ({u.name})")


def _sdpa(q, k, v, mask, causal, scale, g, n):
    """softmax(q @ k^T * scale [+ mask | causal]) @ v, the form tx fuses into one kernel."""
    qv, kv = _val(q), _val(k)
    if len(qv.shape) != 4 or len(kv.shape) != 4:
        raise Unsupported("attention on other than [B, H, S, D] tensors")
    d = qv.shape[-1]
    if scale is None:
        if not isinstance(d, int):
            raise Unsupported("attention with a symbolic head dim and no scale")
        scale = 1.0 / math.sqrt(d)
    if qv.shape[1] != kv.shape[1]:
        raise Unsupported("grouped-query heads (enable_gqa)")
    s = f"f32({g.arg(q)} @ transpose({g.arg(k)}, -1, -2)) * {g.arg(float(scale))}"
    if causal:
        if not _has_iota():
            raise Unsupported("causal attention needs iota(), which this tx's frontend does not have yet")
        sq, sk = _dims([qv.shape[-2], kv.shape[-2]])
        if sq != sk:
            raise Unsupported("causal attention with different query and key lengths")
        s = f"where(iota(({sq}, {sk}), axis=0) >= iota(({sq}, {sk}), axis=1), {s}, -{_BIG})"
    if mask is not None:
        if g.argdt(mask) == "bool":
            s = f"where({g.arg(mask)}, {s}, -{_BIG})"
        else:
            s = f"({s} + {g.arg(mask)})"
    dt = g.argdt(q)
    g.emit(n, f"{dt}(softmax({s}, axis=-1)) @ {g.arg(v)}", dt)


_IOTA = []


def _has_iota():
    """Whether this tx compiles iota (the spec's index space), probed once."""
    if not _IOTA:
        try:
            compile_source("fn probe(x: f32[4, 4]) -> f32[4, 4] "
                           "{ return where(iota((4, 4), axis=0) >= iota((4, 4), axis=1), x, 0.0) }")
            _IOTA.append(True)
        except Error:
            _IOTA.append(False)
    return _IOTA[0]


def _arg(n, i, name, default=None):
    return n.args[i] if len(n.args) > i else n.kwargs.get(name, default)


def _sdpa_flash(g, n):  # (q, k, v, dropout_p, is_causal, return_debug_mask, *, scale)
    if _arg(n, 3, "dropout_p", 0.0):
        raise Unsupported("attention with dropout")
    _only_item0(n)
    _sdpa(n.args[0], n.args[1], n.args[2], None, _arg(n, 4, "is_causal", False), n.kwargs.get("scale"), g, n)


def _sdpa_efficient(g, n):  # (q, k, v, attn_bias, compute_log_sumexp, dropout_p, is_causal, *, scale)
    if _arg(n, 5, "dropout_p", 0.0):
        raise Unsupported("attention with dropout")
    _only_item0(n)
    _sdpa(n.args[0], n.args[1], n.args[2], _arg(n, 3, "attn_bias"), _arg(n, 6, "is_causal", False),
          n.kwargs.get("scale"), g, n)


def _sdpa_cpu(g, n):  # (q, k, v, dropout_p, is_causal, *, attn_mask, scale)
    if _arg(n, 3, "dropout_p", 0.0):
        raise Unsupported("attention with dropout")
    _only_item0(n)
    _sdpa(n.args[0], n.args[1], n.args[2], n.kwargs.get("attn_mask"), _arg(n, 4, "is_causal", False),
          n.kwargs.get("scale"), g, n)


def _sdpa_math(g, n):  # aten.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if _arg(n, 4, "dropout_p", 0.0):
        raise Unsupported("attention with dropout")
    _sdpa(n.args[0], n.args[1], n.args[2], _arg(n, 3, "attn_mask"), _arg(n, 5, "is_causal", False),
          _arg(n, 6, "scale"), g, n)


def _split(g, n):
    """split / split_with_sizes: nothing yet; each getitem is a slice."""
    x = n.args[0]
    size = n.args[1]
    dim = n.args[2] if len(n.args) > 2 else n.kwargs.get("dim", 0)
    shape = _val(x).shape
    dim %= len(shape)
    total = shape[dim]
    if not isinstance(total, int):
        raise Unsupported("a split of a symbolic dim")
    sizes = list(size) if isinstance(size, (list, tuple)) else [size] * ((total + size - 1) // size)
    if not all(isinstance(z, int) for z in sizes):
        raise Unsupported("a split with symbolic sizes")
    bounds, at = [], 0
    for z in sizes:
        bounds.append((at, min(at + z, total)))
        at += z
    g.arg(x)
    g.splits[n] = (x, dim, bounds)


def _getitem(g, n):
    src, i = n.args
    if src in g.splits:
        x, dim, bounds = g.splits[src]
        g.emit(n, f"slice({g.arg(x)}, axis={dim}, start={bounds[i][0]}, stop={bounds[i][1]})", g.argdt(x))
        return
    if i != 0 or src not in g.expr:
        raise Unsupported("an item of a result tx does not compute")
    g.expr[n] = g.expr[src]
    g.dtype[n] = g.dtype[src]


# ATen op (OpOverload name without the overload, or with it) -> writer.
OPS = {
    "aten.add": _add("+"), "aten.sub": _add("-"), "aten.rsub": _rsub, "aten.mul": _binary("*"), "aten.div": _div,
    "aten.maximum": lambda g, n: g.emit(n, f"maximum({g.arg(n.args[0])}, {g.arg(n.args[1])})",
                                        _promote(g.argdt(n.args[0]), g.argdt(n.args[1]))),
    "aten.minimum": lambda g, n: g.emit(n, f"minimum({g.arg(n.args[0])}, {g.arg(n.args[1])})",
                                        _promote(g.argdt(n.args[0]), g.argdt(n.args[1]))),
    "aten.pow": _pow,
    "aten.eq": _compare("=="), "aten.ne": _compare("!="), "aten.lt": _compare("<"), "aten.le": _compare("<="),
    "aten.gt": _compare(">"), "aten.ge": _compare(">="),
    "aten.where": _where,
    "aten.neg": _unary("neg"), "aten.abs": _unary("abs"), "aten.exp": _unary("exp"), "aten.exp2": _unary("exp2"),
    "aten.log": _unary("log"), "aten.log2": _unary("log2"), "aten.sqrt": _unary("sqrt"),
    "aten.rsqrt": _unary("rsqrt"), "aten.reciprocal": _unary("recip"), "aten.sin": _unary("sin"),
    "aten.cos": _unary("cos"), "aten.tanh": _unary("tanh"), "aten.sigmoid": _unary("sigmoid"),
    "aten.relu": _unary("relu"), "aten.erf": _unary("erf"), "aten.floor": _unary("floor"),
    "aten.ceil": _unary("ceil"), "aten.silu": _unary("silu"), "aten.gelu": _gelu,
    "aten.sum": _reduce("sum"), "aten.mean": _reduce("mean"), "aten.amax": _reduce("max"),
    "aten.amin": _reduce("min"),
    "aten._to_copy": _cast, "prims.convert_element_type": _cast,
    "aten.view": _reshape, "aten._unsafe_view": _reshape, "aten.reshape": _reshape,
    "aten.unsqueeze": _reshape, "aten.squeeze": _reshape,
    "aten.clone": _identity, "aten.alias": _identity, "aten.detach": _identity, "aten.contiguous": _identity,
    "aten.expand": _expand, "aten.t": _t, "aten.transpose": _transpose, "aten.permute": _permute,
    "aten.slice": _slice, "aten.cat": _cat, "aten.split": _split, "aten.split_with_sizes": _split,
    "aten.mm": _matmul, "aten.bmm": _matmul, "aten.matmul": _matmul, "aten.addmm": _addmm,
    "aten._softmax": _softmax("softmax"), "aten._log_softmax": _softmax("log_softmax"),
    "aten.native_layer_norm": _layer_norm, "aten.rms_norm": _rms_norm,
    "aten._scaled_dot_product_flash_attention": _sdpa_flash,
    "aten._scaled_dot_product_efficient_attention": _sdpa_efficient,
    "aten._scaled_dot_product_cudnn_attention": _sdpa_efficient,
    "aten._scaled_dot_product_flash_attention_for_cpu": _sdpa_cpu,
    "aten.scaled_dot_product_attention": _sdpa_math,
}
# ops that compute something (a partition of views alone stays in PyTorch)
VIEWS = {"aten.view", "aten._unsafe_view", "aten.reshape", "aten.unsqueeze", "aten.squeeze", "aten.clone",
         "aten.alias", "aten.detach", "aten.contiguous", "aten.expand", "aten.t", "aten.transpose",
         "aten.permute", "aten.slice", "aten.split", "aten.split_with_sizes", "getitem"}


def _op_name(n):
    """'aten.add' for aten.add.Tensor, 'getitem' for operator.getitem."""
    if n.target is operator.getitem:
        return "getitem"
    s = str(n.target)
    parts = s.split(".")
    return ".".join(parts[:2]) if len(parts) >= 2 else s


def _writer(n):
    name = _op_name(n)
    if name == "getitem":
        return _getitem
    w = OPS.get(name)
    if w is None:
        raise Unsupported(f"no tx form for {n.target}")
    return w


def _write(g, n):
    _writer(n)(g, n)


def _check_node(n):
    """Raises Unsupported when node n cannot run in tx."""
    name = _op_name(n)
    if name == "getitem":
        src = n.args[0]
        if hasattr(src, "op") and _op_name(src) in ("aten.split", "aten.split_with_sizes"):
            _check_node(src)
            return
        if n.args[1] != 0 or not hasattr(src, "op") or _op_name(src) not in (
                "aten.native_layer_norm", "aten._scaled_dot_product_flash_attention",
                "aten._scaled_dot_product_efficient_attention", "aten._scaled_dot_product_cudnn_attention",
                "aten._scaled_dot_product_flash_attention_for_cpu"):
            raise Unsupported("an item of a multi-result op tx does not write")
        _check_node(src)
        return
    _writer(n)
    v = _val(n)
    if isinstance(v, (tuple, list)):
        v = v[0]
        if name not in ("aten.split", "aten.split_with_sizes"):
            _only_item0(n)
    if not _is_tensor(v):
        raise Unsupported("its result is not a tensor")
    _tx_dtype(v)
    if len(v.shape) > 8:
        raise Unsupported("rank above 8")
    if any(isinstance(d, int) and d == 0 for d in v.shape):
        raise Unsupported("an empty tensor")
    _dims(v.shape, allow_infer=name in ("aten.view", "aten._unsafe_view", "aten.reshape", "aten.unsqueeze",
                                         "aten.squeeze"))
    if getattr(v, "device", None) is not None and v.device.type not in ("cuda", "cpu"):
        raise Unsupported(f"device {v.device}")
    for a in list(n.args) + list(n.kwargs.values()):
        for x in (a if isinstance(a, (list, tuple)) else [a]):
            if hasattr(x, "op"):
                xv = _val(x)
                if _is_tensor(xv):
                    _tx_dtype(xv)
                    if not isinstance(n.args[0], (list, tuple)) and getattr(xv, "device", None) is not None \
                            and v.device != xv.device:
                        raise Unsupported("inputs on different devices")
    _dry_run(n)


def _dry_run(n):
    """Writes node n alone (its tensor arguments as parameters) so that a
    form tx cannot write (a step, an alpha, ...) is found per node."""
    g = _Gen(None)
    for a in list(n.args) + list(n.kwargs.values()):
        for x in (a if isinstance(a, (list, tuple)) else [a]):
            if hasattr(x, "op") and _is_tensor(_val(x)):
                g.expr[x] = "p"
                g.dtype[x] = _tx_dtype(_val(x))
    _write(g, n)


# ---- the backend ----------------------------------------------------------------
class _TxPartition:
    """Runs one partition as a tx program; calls the PyTorch submodule
    instead when tx could not compile it."""

    def __init__(self, name, sub, target, arg_vals):
        self.name, self.sub = name, sub
        self.prog, self.why = None, None
        self.tensor_args = [i for i, v in enumerate(arg_vals) if _is_tensor(v)]
        try:
            g = _Gen(sub.graph, arg_vals)
            src, self.outs, self.tuple_out = g.source(fname=name)
            self.src = src
            if _log_on("src"):
                _log(f"{name} source:\n{src}")
            self.prog = compile_source(src, target=target, file=f"<torch {name}>")
        except (Unsupported, CompileError, Error) as e:
            self.why = str(e).splitlines()[0]
            _log(f"{name}: runs in PyTorch: tx cannot compile it: {self.why}")

    def __call__(self, *args):
        if self.prog is None:
            return self.sub(*args)
        res = self.prog(*[args[i] for i in self.tensor_args])
        if not self.tuple_out:
            return res
        return res if isinstance(res, tuple) else (res,)


def _target_for(example_inputs):
    try:
        import torch
        for t in example_inputs:
            if isinstance(t, torch.Tensor) and t.is_cuda:
                major, minor = torch.cuda.get_device_capability(t.device)
                cc = major * 10 + minor
                for sm in (90, 89, 86, 80):
                    if cc >= sm:
                        return f"sm_{sm}"
    except Exception:  # noqa: BLE001 - the default target then
        pass
    return None


def _partition(gm, example_inputs):
    """Replaces the supported partitions of gm by tx programs; returns gm."""
    from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
    from torch.fx.passes.operator_support import OperatorSupport

    why = {}

    class Support(OperatorSupport):
        def is_node_supported(self, submodules, node):
            if node.op != "call_function":
                return False
            try:
                _check_node(node)
                return True
            except Unsupported as e:
                why[node.name] = str(e)
                return False

    part = CapabilityBasedPartitioner(gm, Support(), allows_single_node_partition=True)
    parts = part.propose_partitions()
    keep = []
    for p in parts:
        nodes = list(p.nodes)
        if all(_op_name(n) in VIEWS for n in nodes):
            for n in nodes:
                why[n.name] = "its partition only moves data (views stay in PyTorch)"
            continue
        keep.append(p)
    ops = [(n.name, str(n.target)) for n in gm.graph.nodes if n.op == "call_function"]
    fused = part.fuse_partitions(keep) if keep else gm
    target = _target_for(example_inputs)
    ran, placed = {}, {}
    for node in list(fused.graph.nodes):
        if node.op == "call_module" and node.target.startswith("fused_"):
            sub = getattr(fused, node.target)
            for sn in sub.graph.nodes:
                if sn.op == "call_function":
                    placed[sn.name] = node.target
            tp = _TxPartition(node.target, sub, target, [_val(a) if hasattr(a, "op") else a for a in node.args])
            ran[node.target] = tp
            setattr(fused, node.target, _Module(tp))
    if _log_on():
        _log(f"graph of {len(ops)} ops, {len(keep)} tx partitions")
        for name, tgt in ops:
            if name in placed:
                tp = ran.get(placed[name])
                if tp is not None and tp.prog is not None:
                    _log(f"  tx    {name}: {tgt} [{placed[name]}]")
                else:
                    _log(f"  torch {name}: {tgt}: its partition {placed[name]} did not compile"
                         f" ({tp.why if tp else 'not found'})")
            else:
                _log(f"  torch {name}: {tgt}: {why.get(name, 'not supported')}")
    fused.recompile()
    return fused


def _module_class():
    import torch

    class _M(torch.nn.Module):
        def __init__(self, tp):
            super().__init__()
            self.tp = tp

        def forward(self, *args):
            return self.tp(*args)

    return _M


_MODULE = None


def _Module(tp):
    global _MODULE
    if _MODULE is None:
        _MODULE = _module_class()
    return _MODULE(tp)


def _fw_compiler(gm, example_inputs):
    return _partition(gm, example_inputs)


def tx_backend(gm, example_inputs, **kwargs):
    """The torch.compile backend: aot_autograd to ATen, then tx partitions."""
    from torch._dynamo.backends.common import aot_autograd
    return aot_autograd(fw_compiler=_fw_compiler)(gm, example_inputs, **kwargs)


def register():
    """Registers "tx" as a torch.compile backend (idempotent)."""
    try:
        from torch._dynamo import list_backends, register_backend
    except ImportError:
        return
    if "tx" not in list_backends(exclude_tags=()):
        register_backend(name="tx")(tx_backend)
