#!/usr/bin/env python3
"""Generate include/qgemv/grids.h: every lookup table of ggml's IQ and FP4 formats.

Input: ggml's ``ggml-common.h`` as vendored by the llama-cpp-python 0.3.36 sdist (ggml 0.25.3),
given either as the header itself or as the sdist tarball (the header is read from
``llama_cpp_python-<version>/vendor/llama.cpp/ggml/src/ggml-common.h`` inside it)::

    pip download --no-deps --no-binary :all: -d /tmp/dl llama-cpp-python==0.3.36
    python tools/gen_grids.py /tmp/dl/llama_cpp_python-0.3.36.tar.gz

The tables are read from the header's ``GGML_TABLE_BEGIN(type, name, size) ... GGML_TABLE_END()``
blocks, parsed to integers (the element count is checked against the declared size), and
written back out uniformly, each declared once.  The output names its input (package, version,
path, sha256 of the header).  tests/test_grids.py checks the compiled tables against gguf-py's
own decoding of the grids.
"""
from __future__ import annotations

import argparse
import hashlib
import re
import sys
import tarfile
from pathlib import Path

HEADER_IN_SDIST = "vendor/llama.cpp/ggml/src/ggml-common.h"
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "include" / "qgemv" / "grids.h"

# (ggml table name, name in grids.h, what it is): in output order
TABLES = (
    ("kmask_iq2xs", "kmask_iq2xs", "bit j set: the sign mask of value j of 8"),
    ("ksigns_iq2xs", "ksigns_iq2xs",
     "7 stored sign bits -> 8 sign bits (bit 7 makes the count of negatives even)"),
    ("ksigns64", "ksigns64", "ksigns_iq2xs[i] expanded: byte j is 0xff where bit j is set"),
    ("iq2xxs_grid", "iq2xxs_grid", "iq2_xxs: 256 points of 8 magnitudes in {8, 25, 43}"),
    ("iq2xs_grid", "iq2xs_grid", "iq2_xs: 512 points of 8 magnitudes in {8, 25, 43}"),
    ("iq2s_grid", "iq2s_grid", "iq2_s: 1024 points of 8 magnitudes in {8, 25, 43}"),
    ("iq3xxs_grid", "iq3xxs_grid", "iq3_xxs: 256 points of 4 magnitudes in {4, 12, ..., 62}"),
    ("iq3s_grid", "iq3s_grid", "iq3_s: 512 points of 4 magnitudes in {1, 3, ..., 15}"),
    ("iq1s_grid", "iq1s_grid", "iq1_s / iq1_m: 2048 points of 8 values in {-1, 0, 1}"),
    ("kvalues_iq4nl", "kvalues_iq4nl", "the 16 non-linear levels of iq4_nl / iq4_xs"),
    ("kvalues_fp4", "kvalues_mxfp4",
     "E2M1 values doubled (0, .5, 1, 1.5, 2, 3, 4, 6 and negatives, x2): mxfp4 and nvfp4"),
)
DEFINES = ("NGRID_IQ1S", "IQ1S_DELTA", "IQ1M_DELTA")

C_BITS = {"int8_t": 8, "uint8_t": 8, "uint16_t": 16, "uint32_t": 32, "uint64_t": 64}
PER_LINE = {8: 16, 16: 12, 32: 8, 64: 4}


def read_header(path: Path) -> tuple[bytes, str, str]:
    """(header bytes, package version label, path of the header inside its source)."""
    if path.name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(path) as tar:
            members = [m for m in tar.getmembers() if m.name.endswith("/" + HEADER_IN_SDIST)]
            if len(members) != 1:
                sys.exit(f"{path}: expected one */{HEADER_IN_SDIST}, found {len(members)}")
            member = members[0]
            data = tar.extractfile(member).read()
            inner = member.name
            ggml_version = _ggml_version(tar, inner)
    else:
        data = path.read_bytes()
        inner = str(path.resolve())
        cmake = path.resolve().parent.parent / "CMakeLists.txt"  # ggml/src/x.h -> ggml/CMakeLists.txt
        ggml_version = _cmake_version(cmake.read_text()) if cmake.exists() else None
    if "llama_cpp_python-" in inner:  # the same record whether given the sdist or its tree
        inner = inner[inner.index("llama_cpp_python-"):]
    m = re.search(r"llama[_-]cpp[_-]python-(\d[\w.]*?)(?:\.tar\.gz|\.tgz|\.tar|/|$)", str(path) + "/" + inner)
    package = f"llama-cpp-python {m.group(1)}" if m else "unknown package (pass the sdist to record it)"
    if ggml_version:
        package += f" (ggml {ggml_version})"
    return data, package, inner


def _cmake_version(cmake: str) -> str | None:
    parts = [re.search(rf"set\(GGML_VERSION_{p}\s+(\d+)\)", cmake) for p in ("MAJOR", "MINOR", "PATCH")]
    return ".".join(p.group(1) for p in parts) if all(parts) else None


def _ggml_version(tar: tarfile.TarFile, header_member: str) -> str | None:
    """ggml's version from ggml/CMakeLists.txt beside the header in the sdist."""
    name = header_member[: -len("src/ggml-common.h")] + "CMakeLists.txt"
    try:
        return _cmake_version(tar.extractfile(name).read().decode())
    except KeyError:
        return None


def parse_defines(text: str) -> dict[str, str]:
    return {m.group(1): m.group(2).strip()
            for m in re.finditer(r"^#define\s+(\w+)[ \t]+([^\n]+?)\s*$", text, re.M)}


def parse_tables(text: str, defines: dict[str, str]) -> dict[str, tuple[str, list[int]]]:
    """Every GGML_TABLE block: name -> (C element type, values)."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    tables = {}
    pattern = r"^GGML_TABLE_BEGIN\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)(.*?)GGML_TABLE_END\(\)"
    for m in re.finditer(pattern, text, re.S | re.M):  # line start: not the #defines
        ctype, name, size, body = m.groups()
        if name in tables:
            sys.exit(f"table {name} declared twice in the input")
        size = int(defines.get(size, size), 0)
        values = [int(tok, 0) for tok in (t.strip() for t in body.split(",")) if tok]
        if len(values) != size:
            sys.exit(f"table {name}: {len(values)} values, declared size {size}")
        bits = C_BITS[ctype]
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if ctype.startswith("int") else (0, (1 << bits) - 1)
        if not all(lo <= v <= hi for v in values):
            sys.exit(f"table {name}: a value is out of range for {ctype}")
        tables[name] = (ctype, values)
    return tables


def format_table(ctype: str, name: str, values: list[int], what: str) -> str:
    bits = C_BITS[ctype]
    if ctype.startswith("int"):
        cells = [f"{v:4d}" for v in values]
    elif bits == 8:
        cells = [f"{v:3d}" for v in values]
    else:
        cells = [f"0x{v:0{bits // 4}x}" for v in values]
    n = PER_LINE[bits]
    rows = ["    " + ", ".join(cells[i:i + n]) + "," for i in range(0, len(cells), n)]
    return (f"/* {what} */\n"
            f"static const {ctype} {name}[{len(values)}] = {{\n" + "\n".join(rows) + "\n};\n")


def generate(header: bytes, package: str, inner: str) -> str:
    text = header.decode("utf-8")
    defines = parse_defines(text)
    tables = parse_tables(text, defines)
    missing = [src for src, _, _ in TABLES if src not in tables]
    if missing:
        sys.exit(f"input has no table {', '.join(missing)}")
    sha = hashlib.sha256(header).hexdigest()
    out = [
        "/* qgemv/grids.h: the lookup tables of ggml's IQ and FP4 formats, each declared once.",
        " *",
        " * generated by tools/gen_grids.py: do not edit",
        f" * input: {package}, {inner}",
        f" *        sha256 {sha}",
        " * Tables are ggml's GGML_TABLE blocks, values unchanged; kvalues_fp4 is named",
        " * kvalues_mxfp4 here.  Checked against gguf-py's decoded grids by tests/test_grids.py.",
        " */",
        "#ifndef QGEMV_GRIDS_H",
        "#define QGEMV_GRIDS_H",
        "",
        "#include <stdint.h>",
        "",
    ]
    for name in DEFINES:
        if name not in defines:
            sys.exit(f"input has no #define {name}")
        out.append(f"#define {name} {defines[name]}")
    out.append("")
    for src, dst, what in TABLES:
        ctype, values = tables[src]
        out.append(format_table(ctype, dst, values, what))
    out.append("#endif /* QGEMV_GRIDS_H */")
    return "\n".join(out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", type=Path, help="ggml-common.h, or the llama-cpp-python sdist tarball")
    ap.add_argument("-o", "--output", type=Path, default=DEFAULT_OUT, help=f"default: {DEFAULT_OUT}")
    args = ap.parse_args(argv)
    header, package, inner = read_header(args.input)
    args.output.write_text(generate(header, package, inner))
    print(f"wrote {args.output} from {package}, {inner}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
