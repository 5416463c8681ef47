"""tx: compile tensor-expression programs (.tx) into fused kernels and call
them on NumPy arrays (CPU) or PyTorch / CuPy CUDA tensors (GPU, zero-copy).

    import tx
    prog = tx.compile("prog.tx", dims={"N": 4096})
    y = prog(x, w)

`import tx` also registers torch.compile(fn, backend="tx") when PyTorch is
importable. Contract: ../shared/spec/tx-language.md section 5; guide:
docs/python.md."""
from ._program import BF16, CompileError, Error, Param, Program, compile, compile_source, lib  # noqa: F401

__all__ = ["compile", "compile_source", "Program", "Param", "Error", "CompileError", "BF16", "lib"]
__version__ = "0.1.0"


def _register_torch_backend():
    """Registers backend "tx" with torch._dynamo when torch is importable."""
    import importlib.util
    if importlib.util.find_spec("torch") is None:
        return
    try:
        from ._torch_backend import register
    except ImportError:  # pragma: no cover - a torch too old for the backend
        return
    register()


_register_torch_backend()
