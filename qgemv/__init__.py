"""qgemv: block-quantized (GGUF / ggml) linear algebra on the CPU.

>>> from qgemv import QMatrix
"""
from __future__ import annotations

from . import _dispatch, _formats, _kernels
from ._formats import Format
from ._threads import get_num_threads, set_num_threads
from .gguf import GGUFError, GGUFFile, GGUFWriter, TensorInfo, load_gguf
from .qmatrix import QMatrix, get_repack, set_repack

__version__ = "0.1.0"
__all__ = ["QMatrix", "Format", "formats", "get_num_threads", "set_num_threads", "show_config",
           "set_repack", "get_repack",
           "load_gguf", "GGUFFile", "GGUFWriter", "GGUFError", "TensorInfo"]


def formats(op: str | None = None) -> tuple[Format, ...]:
    """The ggml format table (every type id qgemv knows), or the formats implementing ``op``
    ("dequantize", "matmul", "activation", "quantize").

    >>> [f.name for f in formats("matmul")][:3]
    ['f32', 'f16', 'q4_0']
    """
    return _formats.FORMATS if op is None else _formats.with_op(op)


def show_config(file=None) -> dict:
    """Print (and return) how this qgemv was built and what it will run on this machine."""
    openmp, omp_max = _kernels.openmp()
    config = {
        "version": __version__,
        "isa": _dispatch.isa,
        "isa_compiled": ", ".join(_dispatch.COMPILED),
        "isa_runnable": ", ".join(_dispatch.runnable()),
        "openmp": "yes" if openmp else "no (kernels run serially)",
        "omp_max_threads": omp_max,
        "num_threads": get_num_threads(),
        "gemv_prefetch": ("on" if _dispatch.gemv_prefetch else "off")
                         + f" (single columns from memory; CPU {_dispatch.cpu_vendor or 'unknown'}"
                         + (" with AVX-512)" if _dispatch.cpu_avx512 else ")"),
        "dequant_stream": ("on" if _dispatch.dequant_stream else "off")
                          + " (non-temporal stores for dequantize outputs of 32 MiB and more)",
        "widen_f16": ("on" if _dispatch.widen_f16 else "off")
                     + " (f16 batches' columns widened to float32 once; avx2 and avxvnni variants)",
        "amx": ("on" if _dispatch.amx else "off")
               + " (on AMX tiles: q2_K, q4_K, q5_K, q6_K, iq4_xs batches of 12 and more, IQ grids and iq1 of 32;"
               " avx512bf16 variant)",
        "bf16_pairs": ("on" if _dispatch.bf16_pairs else "off")
                      + " (bf16 products in vdpbf16ps's arithmetic, ggml's there; avx512bf16 variant)",
        "build": _kernels.BUILD_INFO,
    }
    width = max(map(len, config))
    print("\n".join(f"{k:<{width}}  {v}" for k, v in config.items()), file=file)
    return config
