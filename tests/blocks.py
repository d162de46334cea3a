"""Random valid blocks of every format, for the tests (not a test module).

"Valid" means random bytes everywhere except the float fields, which hold finite values:
scales are what makes a block decode to finite floats, and the oracles disagree on NaN
payloads, not on maths.  Each format lists where its float fields sit in the block.
"""
from __future__ import annotations

import numpy as np

from qgemv import _formats

# format -> [(byte offset in the block, field type)]; field types: f16, f32, e8m0, ue4m3, and
# f16_top_nibbles (iq1_m: an f16 whose 4 nibbles are the top nibbles of 4 uint16 words, whose
# other 12 bits stay random)
SCALE_FIELDS: dict[str, list[tuple[int, str]]] = {
    "q4_0": [(0, "f16")],
    "q4_1": [(0, "f16"), (2, "f16")],
    "q5_0": [(0, "f16")],
    "q5_1": [(0, "f16"), (2, "f16")],
    "q8_0": [(0, "f16")],
    "q8_1": [(0, "f16"), (2, "f16")],
    "iq4_nl": [(0, "f16")],
    "mxfp4": [(0, "e8m0")],
    "iq2_xxs": [(0, "f16")],
    "iq2_xs": [(0, "f16")],
    "iq2_s": [(0, "f16")],
    "iq3_xxs": [(0, "f16")],
    "iq3_s": [(0, "f16")],
    "tq1_0": [(52, "f16")],          # d after qs[48], qh[4]
    "tq2_0": [(64, "f16")],          # d after qs[64]
    "nvfp4": [(0, "ue4m3"), (1, "ue4m3"), (2, "ue4m3"), (3, "ue4m3")],
    "q1_0": [(0, "f16")],
    "q2_0": [(0, "f16")],
    "iq4_xs": [(0, "f16")],
    "iq1_s": [(0, "f16")],
    "iq1_m": [(48, "f16_top_nibbles")],
    "q2_K": [(80, "f16"), (82, "f16")],
    "q3_K": [(108, "f16")],
    "q4_K": [(0, "f16"), (2, "f16")],
    "q5_K": [(0, "f16"), (2, "f16")],
    "q6_K": [(208, "f16")],
}


def _finite_f16_bits(rng, n: int, moderate: bool) -> np.ndarray:
    if moderate:   # products stay well inside float32 and keep their precision
        return (rng.standard_normal(n) * 0.02).astype(np.float16).view(np.uint16)
    bits = rng.integers(0, 1 << 16, n, dtype=np.uint32).astype(np.uint16)
    bad = (bits & 0x7C00) == 0x7C00              # inf / nan: move to the largest finite exponent
    bits[bad] &= 0xFBFF
    return bits


def _field_bytes(rng, kind: str, n: int, moderate: bool) -> np.ndarray:
    if kind == "f16":
        return _finite_f16_bits(rng, n, moderate).view(np.uint8).reshape(n, 2)
    if kind == "f32":
        v = rng.standard_normal(n).astype(np.float32) * (0.02 if moderate else 1e3)
        return v.view(np.uint8).reshape(n, 4)
    if kind == "e8m0":
        lo, hi = (118, 134) if moderate else (0, 255)
        return rng.integers(lo, hi, n, dtype=np.uint8).reshape(n, 1)
    if kind == "ue4m3":
        hi = 0x50 if moderate else 0x100
        return rng.integers(0, hi, n, dtype=np.uint8).reshape(n, 1)
    raise ValueError(kind)


def _spread_f16_top_nibbles(rng, words8: np.ndarray, moderate: bool) -> np.ndarray:
    """(n, 8) bytes of 4 little-endian uint16 words with an f16's nibble k as word k's top nibble."""
    words = words8.copy().view("<u2")
    h = _finite_f16_bits(rng, len(words), moderate)
    for k in range(4):
        words[:, k] = (words[:, k] & 0x0FFF) | (((h >> (4 * k)) & 0xF) << 12)
    return words.view(np.uint8)


def random_elements(fmt, rng, n: int) -> np.ndarray:
    """n random values of an element format (block size 1), as bytes."""
    if fmt.kind == "float":
        v = rng.standard_normal(n) * 3
        dtype = {"f32": np.float32, "f16": np.float16, "f64": np.float64}.get(fmt.name)
        if fmt.name == "bf16":
            return (v.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16).view(np.uint8)
        return v.astype(dtype).view(np.uint8)
    info = np.iinfo(np.dtype(fmt.name.replace("i", "int")))
    return rng.integers(info.min, info.max, n, dtype=np.dtype(fmt.name.replace("i", "int")),
                        endpoint=True).view(np.uint8)


def random_blocks(name: str, rows: int, cols: int, seed: int = 0, moderate: bool = False) -> np.ndarray:
    """A (rows, row_nbytes) uint8 array of random valid blocks of format ``name``.

    moderate=True keeps scales small and normal (for products); otherwise every finite
    scale bit pattern may appear, subnormals and the largest values included.
    """
    fmt = _formats.lookup(name)
    rng = np.random.default_rng(seed)
    if fmt.block_size == 1:
        return random_elements(fmt, rng, rows * cols).reshape(rows, -1)
    n_blocks = rows * cols // fmt.block_size
    blocks = rng.integers(0, 256, (n_blocks, fmt.type_size), dtype=np.uint8)
    for offset, kind in SCALE_FIELDS[fmt.name]:
        if kind == "f16_top_nibbles":
            blocks[:, offset:offset + 8] = _spread_f16_top_nibbles(rng, blocks[:, offset:offset + 8], moderate)
            continue
        field = _field_bytes(rng, kind, n_blocks, moderate)
        blocks[:, offset:offset + field.shape[1]] = field
    return blocks.reshape(rows, fmt.row_nbytes(cols))
