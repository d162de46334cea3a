"""Which ISA variant of the kernels runs: chosen once at import, overridable for tests.

Variants, in order of preference: avx512bf16 (avx512 + AVX512_BF16: Zen 4, Sapphire Rapids and
later; not built by MSVC), avx512 (AVX-512 F/BW/VL/DQ/CD + VNNI), avxvnni (avx2 + AVX-VNNI:
Intel's cores without AVX-512 from Alder Lake on; built where the compiler has it, not by MSVC),
avx2 (AVX2 + FMA + F16C + BMI2), baseline (portable C, any CPU).
``QGEMV_ISA=baseline|avx2|avxvnni|avx512|avx512bf16`` forces one;
asking for one this CPU cannot run, or that was not compiled, is an error at import.

Speed policies are chosen here too, per CPU rather than per variant: whether a single column
streaming from memory asks for its lines ahead in software (``gemv_prefetch``: its rows and
panels, include/qgemv/simd.h; with it, the formats without panels take the row tiles rather than
one row after another, qgemv/qmatrix.py, and q4_K's and q6_K's panels go in pairs,
src/formats/superblocks_x16.h), ``QGEMV_GEMV_PREFETCH=0|1`` forcing it; whether large dequantize
outputs go out with non-temporal stores (``dequant_stream``, ``QGEMV_DEQUANT_STREAM=0|1``);
whether f16 batches widen their columns once (``widen_f16``, ``QGEMV_WIDEN_F16=0|1``); and
whether batches may run on AMX tiles where the CPU and the OS offer them (``amx``,
``QGEMV_AMX=0|1``).  One policy changes results, in their last bits: whether the avx512bf16
variant's bf16 products run vdpbf16ps's arithmetic, ggml's own there (``bf16_pairs``,
``QGEMV_BF16_PAIRS=0|1``).
"""
from __future__ import annotations

import os

from . import _kernels

PREFERENCE = ("avx512bf16", "avx512", "avxvnni", "avx2", "baseline")
COMPILED: tuple[str, ...] = _kernels.COMPILED_ISAS


def runnable() -> tuple[str, ...]:
    """The compiled variants this CPU can execute, best first."""
    return tuple(isa for isa in PREFERENCE if isa in COMPILED and _kernels.cpu_runs(isa))


def choose(env: str | None = None) -> str:
    """The variant to use: ``env`` (QGEMV_ISA) if given and runnable, else the best runnable."""
    env = os.environ.get("QGEMV_ISA") if env is None else env
    can = runnable()
    if not env:
        return can[0]
    env = env.strip().lower()
    if env not in PREFERENCE:
        raise RuntimeError(f"QGEMV_ISA={env!r}: expected one of {', '.join(PREFERENCE)}")
    if env not in COMPILED:
        raise RuntimeError(f"QGEMV_ISA={env!r}: this build has only {', '.join(COMPILED)}")
    if env not in can:
        raise RuntimeError(f"QGEMV_ISA={env!r}: this CPU cannot run it (it runs {', '.join(can)})")
    return env


#: the variant every QMatrix operation uses (tests may reassign it)
isa: str = choose()


# CPUs whose own prefetcher streams a single column (its panels and rows) faster than with
# software prefetches on top: the vendors here on CPUs with AVX-512, AMD's from Zen 4 (the
# figures: include/qgemv/simd.h, src/formats/superblocks_x16.h, qgemv/qmatrix.py); elsewhere they
# stay on, a Zen 3 among them (its AVX2 8-row panels ran 1.0-1.2x faster with them:
# src/formats/q32_x8.h)
_STREAMS_ALONE = ("AuthenticAMD",)


#: the CPU's CPUID vendor string, read once ("" off x86)
cpu_vendor: str = _kernels.cpu_vendor()
#: whether the CPU runs AVX-512 (the avx512 variant's instructions, compiled or not)
cpu_avx512: bool = _kernels.cpu_runs("avx512")


def _forced(name: str, env: str | None) -> bool | None:
    """A speed policy's override: ``env``, or the environment variable ``name`` when env is
    None, as "0" or "1"; None when unset or empty."""
    env = os.environ.get(name) if env is None else env
    if not env:
        return None
    if env.strip() not in ("0", "1"):
        raise RuntimeError(f"{name}={env!r}: expected 0 or 1")
    return env.strip() == "1"


def _by_vendor(name: str, env: str | None, vendor: str | None, vendors: tuple[str, ...],
               listed: bool = True) -> bool:
    """A policy chosen by the CPU vendor: ``env`` or the variable ``name`` if set (_forced), else
    ``listed`` for the vendors in ``vendors`` and not ``listed`` for the others (``vendor``:
    this CPU's when None)."""
    forced = _forced(name, env)
    if forced is not None:
        return forced
    return ((cpu_vendor if vendor is None else vendor) in vendors) is listed


def choose_gemv_prefetch(env: str | None = None, vendor: str | None = None, avx512: bool | None = None) -> bool:
    """Whether a single column's streams prefetch: ``env`` (QGEMV_GEMV_PREFETCH, "0" or "1") if
    given, else off for the CPU vendors in _STREAMS_ALONE on CPUs with AVX-512 (``avx512``,
    this CPU's when None) and on for the others."""
    forced = _forced("QGEMV_GEMV_PREFETCH", env)
    if forced is not None:
        return forced
    vendor = cpu_vendor if vendor is None else vendor
    return not (vendor in _STREAMS_ALONE and (cpu_avx512 if avx512 is None else avx512))


#: the single-column prefetch every variant uses (set_gemv_prefetch changes it)
gemv_prefetch: bool = choose_gemv_prefetch()
_kernels.set_prefetch_one_column(gemv_prefetch)


def set_gemv_prefetch(on: bool) -> None:
    """Turn the single-column prefetch on or off in every variant (speed only)."""
    global gemv_prefetch
    gemv_prefetch = bool(on)
    _kernels.set_prefetch_one_column(gemv_prefetch)


# CPUs whose plain stores of a large output ran slower than a copy out of a row in L1 with
# non-temporal stores: an Intel Xeon (AMX, a KVM guest) read each line before writing it
# (dequantize 4096 x 4096, 1 thread: benches/RESULTS.md, twenty-ninth session); a Zen 4 ran
# 30-50% slower that way, a Zen 3 7-12% faster (twelfth session), so AMD keeps plain stores
_STREAMS_STORES = ("GenuineIntel",)


def choose_dequant_stream(env: str | None = None, vendor: str | None = None) -> bool:
    """Whether QMatrix.dequantize writes outputs of STREAM_STORES_BYTES and more with
    non-temporal stores: ``env`` (QGEMV_DEQUANT_STREAM, "0" or "1") if given, else on for the
    CPU vendors in _STREAMS_STORES only."""
    return _by_vendor("QGEMV_DEQUANT_STREAM", env, vendor, _STREAMS_STORES)


#: whether large dequantize outputs are written with non-temporal stores (speed only: same bits)
dequant_stream: bool = choose_dequant_stream()


# CPUs that run vcvtph2ps beside their fmas, so f16 batches lose nothing widening every value of
# both operands and gain from half the column bytes: a Zen 3, the avx2 variant's batch 32 of
# 4096 x 4096 1.2x faster with f16 columns through QMatrix (1.2-1.4x in a C harness), batch 8
# even; an Intel Xeon (AMX) ran the avx2 and avxvnni variants' batches 8 and 32 1.07-1.15x
# faster widened (src/formats/elements.h; measured before their sums were pinned in registers)
_F16_COLUMNS_KEPT = ("AuthenticAMD",)


def choose_widen_f16(env: str | None = None, vendor: str | None = None) -> bool:
    """Whether f16 batches widen their columns to float32 once per product (the avx2 and
    avxvnni variants; AVX-512's float panels widen their own way): ``env`` (QGEMV_WIDEN_F16,
    "0" or "1") if given, else off for the CPU vendors in _F16_COLUMNS_KEPT."""
    return _by_vendor("QGEMV_WIDEN_F16", env, vendor, _F16_COLUMNS_KEPT, listed=False)


#: whether f16 batches widen their columns once (speed only: same bits)
widen_f16: bool = choose_widen_f16()
_kernels.set_widen_f16(widen_f16)


def set_widen_f16(on: bool) -> None:
    """Turn the widening of f16 batches' columns on or off in every variant (speed only)."""
    global widen_f16
    widen_f16 = bool(on)
    _kernels.set_widen_f16(widen_f16)


def choose_amx(env: str | None = None) -> bool:
    """Whether batches may run on AMX tiles (the same bits: src/formats/superblocks_x16.h,
    src/packed_tile.h): on where this process may run AMX-INT8 (_kernels.amx_request: the CPU
    has it, Linux grants it), unless ``env`` (QGEMV_AMX) is "0"; "1" where it may not is an
    error."""
    forced = _forced("QGEMV_AMX", env)
    if forced is False:
        return False
    if _kernels.amx_request():
        return True
    if forced:
        raise RuntimeError("QGEMV_AMX=1: this CPU or OS offers no AMX-INT8 tiles")
    return False


#: whether batches may run on AMX tiles (speed only: same bits)
amx: bool = choose_amx()
_kernels.set_amx_tiles(amx)


def set_amx(on: bool) -> None:
    """Turn the AMX tile paths on or off (on only where choose_amx found the tiles granted)."""
    global amx
    if on and not _kernels.amx_request():
        raise RuntimeError("this CPU or OS offers no AMX-INT8 tiles")
    amx = bool(on)
    _kernels.set_amx_tiles(amx)


# CPUs that run vdpbf16ps at fma's instruction rate, 32 products where an fma makes 16: a Zen 4,
# 3.66 against 3.63 G instructions a second a thread in a C loop (benches/RESULTS.md, 38th
# session); an Intel Xeon (AMX) ran it at a quarter of fma's rate in an asm loop (thirtieth)
_BF16_PAIRS_FAST = ("AuthenticAMD",)


def choose_bf16_pairs(env: str | None = None, vendor: str | None = None) -> bool:
    """Whether bf16 products run vdpbf16ps's arithmetic in the avx512bf16 variant
    (src/formats/float_panels.h): ``env`` (QGEMV_BF16_PAIRS, "0" or "1") if given, else on for
    the CPU vendors in _BF16_PAIRS_FAST.  Unlike the policies above it changes results (pairs,
    subnormals flushed: the arithmetic ggml's bf16 products take on such CPUs)."""
    return _by_vendor("QGEMV_BF16_PAIRS", env, vendor, _BF16_PAIRS_FAST)


#: whether the avx512bf16 variant's bf16 products run vdpbf16ps's arithmetic
bf16_pairs: bool = choose_bf16_pairs()
_kernels.set_bf16_pairs(bf16_pairs)


def set_bf16_pairs(on: bool) -> None:
    """Turn vdpbf16ps's arithmetic for bf16 on or off (the avx512bf16 variant; results change)."""
    global bf16_pairs
    bf16_pairs = bool(on)
    _kernels.set_bf16_pairs(bf16_pairs)
