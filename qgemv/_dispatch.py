"""Which ISA variant of the kernels runs: chosen once at import, overridable for tests.

Variants, in order of preference: avx512bf16 (avx512 + AVX512_BF16: Zen 4, Sapphire Rapids and
later; not built by MSVC), avx512 (AVX-512 F/BW/VL/DQ/CD + VNNI), avx2 (AVX2 + FMA + F16C +
BMI2), baseline (portable C, any CPU).  ``QGEMV_ISA=baseline|avx2|avx512|avx512bf16`` forces one;
asking for one this CPU cannot run, or that was not compiled, is an error at import.
"""
from __future__ import annotations

import os

from . import _kernels

PREFERENCE = ("avx512bf16", "avx512", "avx2", "baseline")
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
