"""_program.py - compiled tx programs: inspection and calls on NumPy arrays
(CPU, reference interpreter), PyTorch and CuPy tensors (GPU, zero-copy).

Threads: a Program's C handle is used under the Program's lock (compiles,
text forms, host runs); each GPU is opened once per process (its primary
context, shared with PyTorch and CuPy) and used under that device's lock;
loaded kernels are kept per (program, GPU, input types, stream), so two
streams never share intermediates. The program cache is process-wide,
under its own lock."""
import ctypes
import json
import os
import re
import threading
from collections import namedtuple

import numpy as np

from . import _lib

try:  # bf16 arrays as ml_dtypes.bfloat16 where installed
    import ml_dtypes as _ml_dtypes

    BF16 = np.dtype(_ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    BF16 = None


class Error(Exception):
    """A tx call failed: wrong inputs (dtype, shape, device; the message names
    the parameter), a missing GPU, or a driver error."""


class CompileError(Error):
    """A source error; str() is the `FILE:LINE:COL: error: ...` diagnostic
    with the source line and caret, as txc prints it."""


Param = namedtuple("Param", "name dtype shape")
Param.__doc__ = "A parameter or result: name, dtype ('f32' ...), shape (ints; None where unbound)."

_LIB = None
_LIB_LOCK = threading.Lock()
_ERRCAP = 1 << 16
_DIAG_RE = re.compile(r"^[^\n]*:\d+:\d+: error: ", re.M)


def lib():
    """The loaded libtx.so (loaded on first use)."""
    global _LIB
    with _LIB_LOCK:
        if _LIB is None:
            _LIB = _lib.load()
        return _LIB


def _errbuf():
    return ctypes.create_string_buffer(_ERRCAP)


def _np_dtype(dt):
    """The NumPy dtype tx host data of dtype `dt` is stored as."""
    return {"f32": np.float32, "f16": np.float16, "bf16": np.uint16, "i32": np.int32, "bool": np.uint8}[dt]


def _f32_to_bf16_bits(a):
    """bf16 bit patterns of float32 array a, rounded to nearest even (spec section 3)."""
    u = np.asarray(a, dtype=np.float32).view(np.uint32)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)


def _bf16_bits_to_f32(b):
    return (b.astype(np.uint32) << 16).view(np.float32)


class _Loaded:
    """Kernels of one program loaded on one GPU for one set of input types
    and one stream, with the output types at those sizes."""

    def __init__(self, handle, outputs):
        self.handle = handle
        self.outputs = outputs  # [(dtype, shape)]


class _Device:
    """A GPU opened on its primary context (one per ordinal per process)."""

    _all = {}
    _all_lock = threading.Lock()

    def __init__(self, ordinal):
        err = _errbuf()
        self.ordinal = ordinal
        self.lock = threading.Lock()
        self.handle = lib().tx_device_open_primary(ordinal, err, _ERRCAP)
        if not self.handle:
            raise Error(err.value.decode(errors="replace"))
        self.name = lib().tx_device_name(self.handle).decode()

    @classmethod
    def get(cls, ordinal):
        with cls._all_lock:
            if ordinal not in cls._all:
                cls._all[ordinal] = cls(ordinal)
            return cls._all[ordinal]


class Program:
    """A compiled tx program. Create with tx.compile / tx.compile_source."""

    def __init__(self, handle, file, key, target):
        self._h = handle
        self._file = file
        self._key = key
        self._target = target
        self._lock = threading.RLock()
        self._loaded = {}
        L = lib()
        self.inputs = tuple(self._param(L, i) for i in range(L.tx_program_num_inputs(handle)))
        self.outputs = tuple(self._result(L, k) for k in range(L.tx_program_num_outputs(handle)))
        # the declared types with their dim names, for messages: {param: "f32[M, D]"}
        self._decl = {}
        for m in re.finditer(r"^\s*%\d+ (\S+) = input (\d+) : (\w+\[[^\]]*\])", self._text(_lib.TEXT_IR), re.M):
            self._decl[int(m.group(2))] = m.group(3)

    def __del__(self):
        h, self._h = getattr(self, "_h", None), None
        if h and _LIB is not None:
            for ld in getattr(self, "_loaded", {}).values():
                _LIB.tx_unload(ld.handle)
            _LIB.tx_program_free(h)

    def _param(self, L, i):
        t, name = _lib.Tensor(), ctypes.c_char_p()
        L.tx_program_input(self._h, i, ctypes.byref(t), ctypes.byref(name))
        return Param(name.value.decode() or f"in{i}", _lib.DTYPES[t.dtype], _shape(t))

    def _result(self, L, k):
        t = _lib.Tensor()
        L.tx_program_output(self._h, k, ctypes.byref(t))
        return Param(f"out{k}", _lib.DTYPES[t.dtype], _shape(t))

    def __repr__(self):
        sig = ", ".join(f"{p.name}: {_type_str(p)}" for p in self.inputs)
        res = ", ".join(_type_str(p) for p in self.outputs)
        return f"<tx.Program {os.path.basename(self._file)}({sig}) -> ({res})>"

    # ---- inspection -------------------------------------------------------
    def _text(self, kind):
        err = _errbuf()
        with self._lock:
            s = lib().tx_program_text(self._h, kind, err, _ERRCAP)
        if s is None:
            raise Error(err.value.decode(errors="replace"))
        return s.decode()

    def ir(self):
        """The final IR with its fused regions (txc --emit=ir)."""
        return self._text(_lib.TEXT_IR)

    def report(self):
        """The cost report of spec section 4 as a dict (txc --emit=json)."""
        return json.loads(self._text(_lib.TEXT_JSON))

    def report_text(self):
        """The cost report as text (txc --emit=report)."""
        return self._text(_lib.TEXT_REPORT)

    def report_svg(self):
        """The roofline and timeline picture as SVG text (txc --emit=svg)."""
        return self._text(_lib.TEXT_SVG)

    def dot(self):
        """The Graphviz graph with fused regions as clusters (txc --emit=dot)."""
        return self._text(_lib.TEXT_DOT)

    def explain(self):
        """Why each producer/consumer pair was left unfused (txc --explain)."""
        return self._text(_lib.TEXT_EXPLAIN)

    # ---- calls ------------------------------------------------------------
    def __call__(self, *args, device=None):
        """Runs the program: NumPy arrays (and CPU torch tensors) on the CPU
        (host JIT; device="ref": the reference interpreter; device="gpu":
        the GPU with copies), PyTorch / CuPy CUDA tensors on their GPU
        without copies. One result, or a tuple of several."""
        if len(args) != len(self.inputs):
            raise Error(f"the program takes {len(self.inputs)} inputs "
                        f"({', '.join(p.name for p in self.inputs)}), {len(args)} were given")
        kinds = {_kind(a) for a in args}
        if kinds & {"torch_cuda", "cupy"}:
            if device not in (None, "gpu"):
                raise Error(f"CUDA tensors run on the GPU, not device={device!r}")
            return self._call_gpu(args)
        if device not in (None, "cpu", "ref", "gpu"):
            raise Error(f"unknown device {device!r} (cpu, ref, gpu)")
        where = {"ref": _lib.ON_REF, "gpu": _lib.ON_GPU}.get(device, _lib.ON_CPU)
        raw = self._call_host(args, where)
        conv = _to_torch if "torch_cpu" in kinds else _to_numpy
        outs = tuple(conv(dt, a) for dt, a in raw)
        return outs[0] if len(outs) == 1 else outs

    def _host_array(self, p, a):
        """a as C-ordered host data of parameter p's dtype; Error naming p."""
        if _kind(a) == "torch_cpu":
            a = _torch_cpu_to_numpy(a, p)
        if np.isscalar(a) and not p.shape:
            a = np.asarray(a, dtype=np.float32 if p.dtype == "bf16" else _np_dtype(p.dtype))
        a = np.asarray(a)
        want = {"f32": [np.float32], "f16": [np.float16], "i32": [np.int32], "bool": [np.bool_],
                "bf16": [np.float32] + ([BF16] if BF16 is not None else [])}[p.dtype]
        if a.dtype not in [np.dtype(w) for w in want]:
            raise Error(f"parameter '{p.name}': expected {self._decl_str(p)} "
                        f"({' or '.join(str(np.dtype(w)) for w in want)} array), got {a.dtype}")
        a = a if a.flags.c_contiguous else a.copy(order="C")  # (ascontiguousarray makes 0-d arrays 1-d)
        if p.dtype == "bf16":
            return a.view(np.uint16) if a.dtype == BF16 else _f32_to_bf16_bits(a)
        return a.view(np.uint8) if p.dtype == "bool" else a

    def _decl_str(self, p):
        return self._decl.get(self.inputs.index(p), _type_str(p))

    def _check_shapes(self, shapes):
        """Checks ranks, bound dims and that each dim name has one size."""
        seen = {}
        for i, (p, shp) in enumerate(zip(self.inputs, shapes)):
            decl = self._decl_str(p)
            names = decl[decl.index("[") + 1:-1].split(", ") if "[" in decl else []
            if len(shp) != len(p.shape):
                raise Error(f"parameter '{p.name}': expected rank {len(p.shape)} ({decl}), got shape {tuple(shp)}")
            for d, (want, got) in enumerate(zip(p.shape, shp)):
                if got <= 0:
                    raise Error(f"parameter '{p.name}': dim {d} is {got}; sizes must be positive")
                if want is not None and want != got:
                    raise Error(f"parameter '{p.name}': dim {d} must be {want} ({decl}), got shape {tuple(shp)}")
                if want is None and d < len(names):
                    first = seen.setdefault(names[d], (p.name, got))
                    if first[1] != got:
                        raise Error(f"parameter '{p.name}': dim {d} ({names[d]}) is {got}, but {names[d]} is "
                                    f"{first[1]} from '{first[0]}' ({decl}, shape {tuple(shp)})")

    def _call_host(self, args, where):
        arrs = [self._host_array(p, a) for p, a in zip(self.inputs, args)]
        self._check_shapes([a.shape for a in arrs])
        n, m = len(arrs), len(self.outputs)
        ins = (_lib.Tensor * max(n, 1))()
        for i, a in enumerate(arrs):
            ins[i].dtype = _lib.DTYPES.index(self.inputs[i].dtype)
            ins[i].rank = a.ndim
            for d, v in enumerate(a.shape):
                ins[i].dim[d] = v
            ins[i].data = a.ctypes.data
        outs = (_lib.Tensor * max(m, 1))()
        err = _errbuf()
        with self._lock:
            rc = lib().tx_run(self._h, where, ins, n, outs, m, err, _ERRCAP)
        if rc != 0:
            raise Error(_strip(err.value.decode(errors="replace")))
        return tuple(self._take_output(outs[k]) for k in range(m))

    def _take_output(self, t):
        """Copies a tx_run output into a NumPy array of its stored form
        (bf16 as uint16 bits, bool as uint8) and releases it: (dtype, array)."""
        dt = _lib.DTYPES[t.dtype]
        shape = tuple(t.dim[d] for d in range(t.rank))
        count = int(np.prod(shape, dtype=np.int64))
        npdt = np.dtype(_np_dtype(dt))
        buf = (ctypes.c_char * (count * npdt.itemsize)).from_address(t.data) if count else b""
        a = np.frombuffer(bytes(buf), dtype=npdt).reshape(shape).copy()
        lib().tx_tensor_release(ctypes.byref(t))
        return dt, a

    # ---- the GPU, zero-copy -------------------------------------------------
    def _call_gpu(self, args):
        views = [_cuda_view(p, a) for p, a in zip(self.inputs, args)]
        ordinals = {v.ordinal for v in views}
        if len(ordinals) != 1:
            raise Error("inputs are on different GPUs (" + ", ".join(
                f"'{p.name}' on cuda:{v.ordinal}" for p, v in zip(self.inputs, views)) + ")")
        if len({v.framework for v in views}) != 1:
            raise Error("inputs mix PyTorch and CuPy tensors; use one framework per call")
        self._check_shapes([v.shape for v in views])
        dev = _Device.get(views[0].ordinal)
        stream = views[0].stream()
        key = (dev.ordinal, tuple((v.dtype, v.shape) for v in views), stream)
        with dev.lock:
            ld = self._loaded.get(key) or self._load(dev, views, key)
            outs = [views[0].empty(dt, shp) for dt, shp in ld.outputs]
            L = lib()
            for i, v in enumerate(views):
                if L.tx_bind_input(ld.handle, i, v.ptr) != 0:
                    raise Error(f"parameter '{self.inputs[i].name}': " + L.tx_device_error(dev.handle).decode())
            for k, o in enumerate(outs):
                if L.tx_bind_output(ld.handle, k, _data_ptr(o)) != 0:
                    raise Error(f"result {k}: " + L.tx_device_error(dev.handle).decode())
            if L.tx_launch_on(ld.handle, stream) != 0:
                raise Error(L.tx_device_error(dev.handle).decode(errors="replace"))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _load(self, dev, views, key):
        n = len(views)
        types = (_lib.Tensor * max(n, 1))()
        for i, v in enumerate(views):
            types[i].dtype = _lib.DTYPES.index(v.dtype)
            types[i].rank = len(v.shape)
            for d, s in enumerate(v.shape):
                types[i].dim[d] = s
        err = _errbuf()
        L = lib()
        with self._lock:
            h = L.tx_load(dev.handle, self._h, types, n, err, _ERRCAP)
        if not h:
            raise Error(err.value.decode(errors="replace"))
        outs = []
        for k in range(len(self.outputs)):
            t = _lib.Tensor()
            L.tx_loaded_output(h, k, ctypes.byref(t), None)
            outs.append((_lib.DTYPES[t.dtype], tuple(t.dim[d] for d in range(t.rank))))
        ld = _Loaded(h, outs)
        self._loaded[key] = ld
        return ld

    def num_kernels(self, *args):
        """Kernels launched for CUDA inputs like args (loads them if needed)."""
        views = [_cuda_view(p, a) for p, a in zip(self.inputs, args)]
        dev = _Device.get(views[0].ordinal)
        key = (dev.ordinal, tuple((v.dtype, v.shape) for v in views), views[0].stream())
        with dev.lock:
            ld = self._loaded.get(key) or self._load(dev, views, key)
            return lib().tx_loaded_num_kernels(ld.handle)


def _to_numpy(dt, a):
    """A stored-form output as the NumPy array users get (section 5)."""
    if dt == "bool":
        return a.view(np.bool_)
    if dt == "bf16":
        return a.view(BF16) if BF16 is not None else _bf16_bits_to_f32(a)
    return a


def _to_torch(dt, a):
    """A stored-form output as a CPU torch tensor of the program's dtype."""
    import torch
    if dt == "bf16":
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(a.view(np.bool_) if dt == "bool" else a)


def _strip(msg):
    """A C-side message without txc's "txc: error: " prefix."""
    return msg[len("txc: error: "):] if msg.startswith("txc: error: ") else msg


def _shape(t):
    return tuple(None if t.dim[d] < 0 else t.dim[d] for d in range(t.rank))


def _type_str(p):
    return f"{p.dtype}[{', '.join('?' if d is None else str(d) for d in p.shape)}]"


def _kind(a):
    """'torch_cuda', 'torch_cpu', 'cupy' or 'host' (NumPy or anything array-like)."""
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        return "torch_cuda" if a.is_cuda else "torch_cpu"
    if mod == "cupy" or (hasattr(a, "__cuda_array_interface__") and not isinstance(a, np.ndarray)):
        return "cupy"
    return "host"


def _torch_cpu_to_numpy(t, p):
    import torch
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        bits = t.view(torch.int16).numpy().view(np.uint16)
        return bits.view(BF16) if BF16 is not None else _bf16_bits_to_f32(bits)
    return t.numpy()


def _data_ptr(o):
    return o.data_ptr() if hasattr(o, "data_ptr") else o.data.ptr


class _CudaView:
    """A CUDA tensor's address, dtype, shape and framework (no copy)."""

    def __init__(self, framework, obj, ptr, dtype, shape, ordinal):
        self.framework, self.obj, self.ptr = framework, obj, ptr
        self.dtype, self.shape, self.ordinal = dtype, tuple(int(s) for s in shape), ordinal

    def stream(self):
        """The caller's current CUDA stream on this device, as a CUstream value."""
        if self.framework == "torch":
            import torch
            return torch.cuda.current_stream(self.ordinal).cuda_stream
        import cupy
        return cupy.cuda.get_current_stream().ptr

    def empty(self, dtype, shape):
        """A new tensor of the same framework on the same device."""
        if self.framework == "torch":
            import torch
            tdt = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
                   "i32": torch.int32, "bool": torch.bool}[dtype]
            return torch.empty(shape, dtype=tdt, device=self.obj.device)
        import cupy
        if dtype == "bf16":
            raise Error("CuPy has no bfloat16: a bf16 result cannot be returned as a CuPy array")
        with cupy.cuda.Device(self.ordinal):
            return cupy.empty(shape, dtype=_np_dtype(dtype) if dtype != "bool" else np.bool_)


def _cuda_view(p, a):
    """The zero-copy view of CUDA tensor a for parameter p; Error naming p."""
    k = _kind(a)
    if k == "torch_cuda":
        import torch
        tmap = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16", torch.int32: "i32",
                torch.bool: "bool"}
        dt = tmap.get(a.dtype)
        if dt != p.dtype:
            raise Error(f"parameter '{p.name}': expected {_type_str(p)}, got a {a.dtype} tensor")
        if a.requires_grad:
            a = a.detach()
        if not a.is_contiguous():
            a = a.contiguous()
        return _CudaView("torch", a, a.data_ptr(), dt, a.shape, a.device.index or 0)
    if k == "cupy":
        import cupy
        a = cupy.asarray(a)
        cmap = {np.dtype(np.float32): "f32", np.dtype(np.float16): "f16", np.dtype(np.int32): "i32",
                np.dtype(np.bool_): "bool"}
        dt = cmap.get(a.dtype)
        if dt != p.dtype:
            raise Error(f"parameter '{p.name}': expected {_type_str(p)}, got a {a.dtype} CuPy array")
        if not a.flags.c_contiguous:
            a = cupy.ascontiguousarray(a)
        return _CudaView("cupy", a, a.data.ptr, dt, a.shape, a.device.id)
    raise Error(f"parameter '{p.name}': a host array among CUDA tensors; move it to the GPU "
                f"(the other inputs are CUDA tensors)")


# ---- compiling and the program cache ----------------------------------------
_CACHE = {}
_CACHE_LOCK = threading.Lock()


def compile_source(text, dims=None, entry=None, target=None, no_fuse=False, gpu=None, file="<string>"):
    """Compiles tx source text; CompileError with the diagnostic on a source
    error. Cached per (source, dims, entry, target, no_fuse, gpu)."""
    if not isinstance(text, str):
        raise TypeError("compile_source takes the source text as a str")
    return _compile(text.encode(), dims, entry, target, no_fuse, gpu, file)


def compile(path, dims=None, entry=None, target=None, no_fuse=False, gpu=None):
    """Compiles the .tx file at path (see compile_source)."""
    path = os.fspath(path)
    with open(path, "rb") as f:
        return _compile(f.read(), dims, entry, target, no_fuse, gpu, path)


def _compile(src, dims, entry, target, no_fuse, gpu, file):
    dims = dict(dims or {})
    for k, v in dims.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v <= 0:
            raise Error(f"dims: {k!r}={v!r}: expected a dim name and a positive integer")
    key = (src, tuple(sorted((k, int(v)) for k, v in dims.items())), entry, target or "sm_90", bool(no_fuse),
           gpu or "h200", file)
    with _CACHE_LOCK:
        if key in _CACHE:
            return _CACHE[key]
    defs = [f"{k}={v}".encode() for k, v in key[1]]
    arr = (ctypes.c_char_p * max(len(defs), 1))(*defs)
    opt = _lib.Options(entry.encode() if entry else None, arr, len(defs), key[3].encode(), key[5].encode(),
                       1 if no_fuse else 0)
    err = _errbuf()
    h = lib().tx_compile(file.encode(), src, len(src), ctypes.byref(opt), err, _ERRCAP)
    if not h:
        msg = err.value.decode(errors="replace")
        raise (CompileError if _DIAG_RE.search(msg) else Error)(msg)
    prog = Program(h, file, key, key[3])
    with _CACHE_LOCK:
        return _CACHE.setdefault(key, prog)
