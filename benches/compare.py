"""qgemv side by side with ggml's CPU kernels, in one process run: one table, one chart.

    PYTHONPATH=. python benches/compare.py [--formats q4_0 q8_0 ...] [--quick] [--reps N]
                                          [--results benches/RESULTS.md] [--chart PATH]

For every format qgemv multiplies (``qgemv.formats("matmul")``): GEMV / small-batch GEMM at
4096x4096 (in cache) and 14336x4096 (out of cache: weights rotated through copies totalling
harness.OUT_OF_CACHE_BYTES, 256 MiB or twice the L3), batch 1 and 8 (and 32 at 4096x4096, 2
threads), 1 and 2 threads, and a small model's short rows, 57344x768 out of cache, batch 1
(harness.SHORT_ROWS); and for every weight format it dequantizes: dequantize 4096x4096 on 1
thread; for every weight format it quantizes: ``QMatrix.quantize`` of 64x4096 Gaussian rows
on 1 thread, without and (where the format's quantizer uses one) with an importance matrix,
against ``ggml_quantize_chunk`` on the same input (GB/s of float32 input). Compared against
ggml (benches/ggml_ref.py: libggml-python's prebuilt library, or QGEMV_GGML_LIB; the faster
of ggml's plain and repacked layouts, marked "r"), numpy (float32 matmul on the dequantized
matrix; gguf-py's dequantize) and the machine's streaming read bandwidth measured in the
same run (numpy reductions on a 1 GiB array, 1 and 2 threads: at the start and the end, and
beside each out-of-cache case, whose % of it the table gives).

qgemv and ggml are timed in alternating blocks of calls so they share the same background
load; figures are medians (see ``--reps``).  ``--results`` writes the table, machine and
command into RESULTS.md between its generated-section markers, keeping the notes around them.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import harness  # noqa: E402
import ggml_ref  # noqa: E402

import qgemv  # noqa: E402
from qgemv import QMatrix  # noqa: E402

def markers(section: str) -> tuple[str, str]:
    return f"<!-- compare.py: begin {section} -->", f"<!-- compare.py: end {section} -->"
STAT = harness.median                          # or min (--stat min)


def gemv_cases(quick: bool):
    """(shape, batch, threads) in the order they are printed."""
    if quick:
        return [((14336, 4096), 1, 2), ((4096, 4096), 1, 1), ((4096, 4096), 8, 2)]
    cases = [(shape, b, t) for shape in harness.SHAPES for b in (1, 8) for t in (1, 2)]
    cases.insert(cases.index(((4096, 4096), 8, 2)) + 1, ((4096, 4096), 32, 2))
    return cases + [(harness.SHORT_ROWS, 1, 1), (harness.SHORT_ROWS, 1, 2)]


def numpy_matmul_ms(dense: np.ndarray, x: np.ndarray, threads: int, reps: int) -> float:
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        threadpool_limits = None
    ctx = threadpool_limits(threads) if threadpool_limits else _null()
    with ctx:
        ts = []
        for _ in range(reps + 1):
            t0 = time.perf_counter()
            dense @ x
            ts.append(time.perf_counter() - t0)
    return 1e3 * harness.median(ts[1:])


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False


_shape_cache: dict = {}


def shape_data(fmt, shape, with_numpy):
    """Weight copies (and the dense float32 matrix for numpy) of the current format and shape."""
    key = (fmt.id, shape)
    if key not in _shape_cache:
        _shape_cache.clear()
        copies = harness.weight_copies(fmt, *shape, out_of_cache=shape[0] >= 14336)
        dense = QMatrix(copies[0], fmt.id, shape).dequantize() if with_numpy else None
        _shape_cache[key] = copies, dense
    return _shape_cache[key]


def run_gemv(fmt, shape, batch, threads, reps, g, with_numpy):
    rows, cols = shape
    out_of_cache = rows >= 14336
    copies, dense = shape_data(fmt, shape, with_numpy)
    x = harness.activations(cols, batch)
    # out of cache, the bandwidth beside the case: a shared machine's drifts over a run (27.6 to
    # 34.3 GB/s within minutes on the Xeon) would otherwise read as the kernels'
    beside = harness.read_bandwidth(threads, reps=3, stat=STAT) if out_of_cache else None
    runners = {"qgemv": harness.QgemvGemv(fmt, copies, rows, cols, x, threads)}
    if out_of_cache and batch == 1 and threads > 1:
        # the threads target's one thread in the same alternating blocks: its own row, minutes
        # away, met another bandwidth (Intel Xeon: iq2_s 1.66x, nvfp4 1.77x across rows, 1.99x
        # and 1.96x side by side)
        runners["qgemv_1t"] = harness.QgemvGemv(fmt, copies, rows, cols, x, 1)
    closers = []
    if g is not None:
        plain = harness.GgmlGemv(g, fmt, copies, rows, cols, x, threads)
        runners["ggml"] = plain
        closers.append(plain)
        if g.repack_buft is not None:
            rp = harness.GgmlGemv(g, fmt, copies, rows, cols, x, threads, repack=True)
            if rp.repacked:
                runners["ggml_repack"] = rp
                closers.append(rp)
            else:
                rp.close()
    try:
        times = harness.interleaved(runners, reps)
    finally:
        for c in closers:
            c.close()
    row = {"op": "gemv", "format": fmt.name, "shape": shape, "batch": batch, "threads": threads,
           "cache": "out" if out_of_cache else "in", "nbytes": copies[0].nbytes,
           "qgemv_ms": 1e3 * STAT(times["qgemv"])}
    if beside is not None:
        row["bw_beside"] = beside
    if "qgemv_1t" in times:
        row["qgemv_1t_ms"] = 1e3 * STAT(times["qgemv_1t"])
    add_min_ratio(row, times)
    if "ggml" in times:
        row["ggml_plain_ms"] = 1e3 * STAT(times["ggml"])
        row["ggml_ms"], row["ggml_path"] = row["ggml_plain_ms"], ""
        if "ggml_repack" in times:
            row["ggml_repack_ms"] = 1e3 * STAT(times["ggml_repack"])
            if row["ggml_repack_ms"] < row["ggml_ms"]:
                row["ggml_ms"], row["ggml_path"] = row["ggml_repack_ms"], "r"
    if with_numpy:
        row["numpy_ms"] = numpy_matmul_ms(dense, x, threads, max(3, reps // 4))
    return row


def calls_for(per_call: float, reps: int) -> int:
    """Timed calls per side: about half a second's worth, so that a case of tens of
    microseconds (f32's 1 MiB copy) gets a median of hundreds of calls, not of a few;
    at least ``reps`` (at most 400), and at most 5 s's worth (at least 3) for the slowest."""
    per_call = max(per_call, 1e-6)
    return max(3, min(max(reps, min(400, int(0.5 / per_call))), int(5.0 / per_call)))


def interleaved_by_time(runners: dict, reps: int) -> dict:
    """harness.interleaved with calls_for's count, from one untimed call of each runner."""
    t0 = time.perf_counter()
    for run in runners.values():               # the slowest quantizer searches take ~0.3 s a call
        run()
    return harness.interleaved(runners, calls_for((time.perf_counter() - t0) / len(runners), reps))


def run_dequant(fmt, reps, g, with_numpy):
    rows, cols = 4096, 4096
    w = harness.weights(fmt, rows, cols)
    m = QMatrix(w, fmt.id, (rows, cols))
    out = np.empty((rows, cols), np.float32)
    runners = {"qgemv": lambda: m.dequantize(out=out, n_threads=1)}
    if g is not None:
        out_g = np.empty((rows, cols), np.float32)   # both sides write into a buffer made once
        runners["ggml"] = lambda: g.to_float(fmt.id, w, rows * cols, out=out_g)
    times = interleaved_by_time(runners, reps)
    row = {"op": "dequant", "format": fmt.name, "shape": (rows, cols), "batch": None, "threads": 1,
           "cache": "in", "nbytes": w.nbytes, "qgemv_ms": 1e3 * STAT(times["qgemv"])}
    add_min_ratio(row, times)
    if "ggml" in times:
        row["ggml_ms"], row["ggml_path"] = 1e3 * STAT(times["ggml"]), ""
    if with_numpy and fmt.gguf_py:
        import gguf
        sub = w[:256]                                 # gguf-py is slow: time 256 rows, scale up
        qt = gguf.GGMLQuantizationType(fmt.id)
        ts = []
        for _ in range(3):
            t0 = time.perf_counter()
            gguf.quants.dequantize(sub, qt)
            ts.append(time.perf_counter() - t0)
        row["numpy_ms"] = 1e3 * min(ts) * rows / sub.shape[0]
    return row


def run_quantize(fmt, weighted, reps, g):
    """``QMatrix.quantize`` against ``ggml_quantize_chunk``: one thread, the same float32 input
    and importance matrix (or none); GB/s counts the float32 input."""
    x, imatrix = harness.quantize_input()
    im = imatrix if weighted else None
    runners = {"qgemv": lambda: QMatrix.quantize(x, fmt.id, imatrix=im, n_threads=1)}
    if g is not None:
        runners["ggml"] = lambda: g.quantize(fmt.id, x, im)
    times = interleaved_by_time(runners, reps)
    row = {"op": "quantize" + (" (imatrix)" if weighted else ""), "format": fmt.name, "shape": x.shape,
           "batch": None, "threads": 1, "cache": "in", "nbytes": x.nbytes, "qgemv_ms": 1e3 * STAT(times["qgemv"])}
    add_min_ratio(row, times)
    if "ggml" in times:
        row["ggml_ms"], row["ggml_path"] = 1e3 * STAT(times["ggml"]), ""
    return row


# a row whose median ratio and (min) ratio part by more than this factor either way was disturbed
# (another job on the shared host during part of it): the table marks its ratio with "~"
DISTURBED = 1.4


def disturbed(row) -> bool:
    r, m = row.get("ratio"), row.get("ratio_min")
    return bool(r and m) and max(r / m, m / r) > DISTURBED


def add_min_ratio(row, times) -> None:
    """ggml/qgemv from each side's fastest call: what the two do when nothing else interferes."""
    g = [min(ts) for name, ts in times.items() if name.startswith("ggml") and ts]
    if g:
        row["ratio_min"] = min(g) / min(times["qgemv"])


def finish(row, bandwidth):
    row["gbps"] = row["nbytes"] / (row["qgemv_ms"] * 1e-3) / 1e9
    if row["op"] == "gemv":   # out of cache: of the probe beside the case, if taken
        row["pct_bw"] = 100 * row["gbps"] / (row.get("bw_beside") or bandwidth[row["threads"]])
    if "ggml_ms" in row:
        row["ratio"] = row["ggml_ms"] / row["qgemv_ms"]
        row["ggml_gbps"] = row["nbytes"] / (row["ggml_ms"] * 1e-3) / 1e9
    return row


# issue 6's targets, which each table is checked against (targets(), below the table): GEMV
# out of cache (2 threads) at least ggml's speed, and at least this share of the read
# bandwidth for these formats, this ratio for those ggml leaves compute-bound; in cache
# (1 thread) at least ggml's speed; batches 8 and 32 (2 threads) at most half ggml's time;
# dequantize at least ggml's speed and 20x gguf-py's; 2 threads this much faster than 1 out of cache
BANDWIDTH_FORMATS = ("q8_0", "q4_0", "q4_K", "q5_K", "q6_K", "iq4_nl", "iq4_xs", "f16", "bf16")
BANDWIDTH_SHARE = 90
COMPUTE_BOUND_RATIO = 1.25
BATCH_RATIO = 2.0
GGUF_PY_RATIO = 20
THREADS_SPEEDUP = 1.8


def compute_bound(name: str) -> bool:
    """the formats ggml's GEMV leaves compute-bound (issue 6): q4_1 ... q3_K, every iq1/iq2/iq3/tq type"""
    return (name in ("q4_1", "q5_0", "q5_1", "nvfp4", "q1_0", "q2_0", "q3_K")
            or name.startswith(("iq1", "iq2", "iq3", "tq")))


def targets(rows, bandwidth=None) -> list[tuple[str, list[str]]]:
    """(target, the rows that miss it as "format figure", "~" after a disturbed row's) for each
    of issue 6's targets the rows measure; with the run's read ``bandwidth`` by thread count, the
    threads target says what the probe itself gained from a second thread (a ceiling for every
    format that reads at the bandwidth)"""
    def case(r, op, cache, batch, threads):   # issue 6's shapes (SHORT_ROWS: a line of its own)
        return (r["op"] == op and r.get("cache") == cache and r["batch"] == batch and r["threads"] == threads
                and r.get("shape") != harness.SHORT_ROWS)

    def miss(r, figure):
        return f"{r['format']} {figure}" + (" ~" if disturbed(r) else "")
    gemv = [r for r in rows if "ratio" in r]
    out2 = [r for r in gemv if case(r, "gemv", "out", 1, 2)]
    found = []
    if out2:
        found += [("GEMV out of cache, 2 threads: at least ggml's speed",
                   [miss(r, f"{r['ratio']:.2f}x") for r in out2 if r["ratio"] < 1]),
                  (f"GEMV out of cache, 2 threads: {BANDWIDTH_SHARE}% of the read bandwidth "
                   f"({', '.join(BANDWIDTH_FORMATS)})",
                   [miss(r, f"{r['pct_bw']:.1f}%") for r in out2
                    if r["format"] in BANDWIDTH_FORMATS and r["pct_bw"] < BANDWIDTH_SHARE]),
                  (f"GEMV out of cache, 2 threads: {COMPUTE_BOUND_RATIO}x ggml where ggml is compute-bound",
                   [miss(r, f"{r['ratio']:.2f}x") for r in out2
                    if compute_bound(r["format"]) and r["ratio"] < COMPUTE_BOUND_RATIO])]
    in1 = [r for r in gemv if case(r, "gemv", "in", 1, 1)]
    if in1:
        found.append(("GEMV in cache, 1 thread: at least ggml's speed",
                      [miss(r, f"{r['ratio']:.2f}x") for r in in1 if r["ratio"] < 1]))
    batches = [r for r in gemv if any(case(r, "gemv", "in", b, 2) for b in (8, 32))]
    if batches:
        found.append((f"batches 8 and 32, 2 threads: at most 1/{BATCH_RATIO:g} of ggml's time",
                      [miss(r, f"batch {r['batch']} {r['ratio']:.2f}x") for r in batches if r["ratio"] < BATCH_RATIO]))
    short = [r for r in gemv if r["op"] == "gemv" and r.get("shape") == harness.SHORT_ROWS]
    if short:
        found.append((f"GEMV out of cache on short rows ({harness.SHORT_ROWS[0]}x{harness.SHORT_ROWS[1]}), "
                      f"1 and 2 threads: at least ggml's speed",
                      [miss(r, f"t{r['threads']} {r['ratio']:.2f}x") for r in short if r["ratio"] < 1]))
    dequant = [r for r in rows if r["op"] == "dequant"]
    if any("ratio" in r for r in dequant):
        found.append(("dequantize, 1 thread: at least ggml's speed",
                      [miss(r, f"{r['ratio']:.2f}x") for r in dequant if r.get("ratio", 1) < 1]))
    if any("numpy_ms" in r for r in dequant):
        found.append((f"dequantize, 1 thread: {GGUF_PY_RATIO}x gguf-py's",
                      [f"{r['format']} {r['numpy_ms'] / r['qgemv_ms']:.1f}x" for r in dequant
                       if "numpy_ms" in r and r["numpy_ms"] / r["qgemv_ms"] < GGUF_PY_RATIO]))
    # 2 threads against 1: the one-thread calls timed beside the row's own (qgemv_1t_ms), else
    # the format's one-thread row; (its ms, the rows whose disturbance it carries)
    one = {r["format"]: r for r in rows if case(r, "gemv", "out", 1, 1)}

    def one_thread(r2):
        if "qgemv_1t_ms" in r2:
            return r2["qgemv_1t_ms"], [r2]
        return one[r2["format"]]["qgemv_ms"], [one[r2["format"]], r2]
    pairs = [(r, *one_thread(r)) for r in rows
             if case(r, "gemv", "out", 1, 2) and ("qgemv_1t_ms" in r or r["format"] in one)]
    if pairs:
        probe = f" (the read probe itself: {bandwidth[2] / bandwidth[1]:.2f}x)" if bandwidth else ""
        found.append((f"GEMV out of cache: 2 threads {THREADS_SPEEDUP}x one{probe}",
                      [f"{r2['format']} {ms1 / r2['qgemv_ms']:.2f}x" + (" ~" if any(map(disturbed, both)) else "")
                       for r2, ms1, both in pairs if ms1 / r2["qgemv_ms"] < THREADS_SPEEDUP]))
    return found


def targets_text(rows, bandwidth=None) -> list[str]:
    return [f"- {name}: " + (", ".join(misses) if misses else "met") for name, misses in targets(rows, bandwidth)]


COLUMNS = [("op", "op"), ("format", "format"), ("shape", "shape"), ("batch", "batch"),
           ("threads", "thr"), ("qgemv_ms", "qgemv ms"), ("ggml_ms", "ggml ms"),
           ("ratio", "ggml/qgemv"), ("ratio_min", "(min)"), ("gbps", "qgemv GB/s"), ("ggml_gbps", "ggml GB/s"),
           ("pct_bw", "% bw"), ("numpy_ms", "numpy ms")]


def cell(row, key) -> str:
    v = row.get(key)
    if v is None:
        return "-"
    if key == "shape":
        return f"{v[0]}x{v[1]}" + (" (out)" if row.get("cache") == "out" else "")
    if key == "ggml_ms":
        return f"{v:.3f}" + (" r" if row.get("ggml_path") else "")
    if key in ("qgemv_ms", "numpy_ms"):
        return f"{v:.3f}" if v < 100 else f"{v:.0f}"
    if key == "ratio":
        return f"{v:.2f}" + (" ~" if disturbed(row) else "")
    if key == "ratio_min":
        return f"{v:.2f}"
    if key in ("gbps", "ggml_gbps", "pct_bw"):
        if key == "pct_bw":
            return f"{v:.0f}%"
        return f"{v:.1f}" if v >= 1 else f"{v:.4f}"   # quantize searches: tens of MB/s
    return str(v)


def text_table(rows) -> str:
    head = [h for _, h in COLUMNS]
    body = [[cell(r, k) for k, _ in COLUMNS] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    line = lambda cells: "  ".join(c.rjust(w) if i > 1 else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths)))
    return "\n".join([line(head), line(["-" * w for w in widths])] + [line(b) for b in body])


def markdown_table(rows) -> str:
    head = [h for _, h in COLUMNS]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" if i < 2 else "---:" for i in range(len(head))) + "|"]
    out += ["| " + " | ".join(cell(r, k) for k, _ in COLUMNS) + " |" for r in rows]
    return "\n".join(out)


def chart(rows, bandwidth, path: Path) -> str | None:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install matplotlib): no chart"
    panels = [(("gemv", (14336, 4096), 1, 2), "GEMV 14336x4096 out of cache, batch 1, 2 threads"),
              (("gemv", (4096, 4096), 1, 1), "GEMV 4096x4096 in cache, batch 1, 1 thread")]
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 4.2 * len(panels)))
    for ax, (key, title) in zip(np.atleast_1d(axes), panels):
        sel = [r for r in rows if (r["op"], r["shape"], r["batch"], r["threads"]) == key]
        if not sel:
            ax.set_visible(False)
            continue
        names = [r["format"] for r in sel]
        pos = np.arange(len(sel))
        ax.bar(pos - 0.2, [r["gbps"] for r in sel], 0.4, label="qgemv")
        ax.bar(pos + 0.2, [r.get("ggml_gbps", 0) for r in sel], 0.4,
               label="ggml (best of plain / repacked)")
        ax.axhline(bandwidth[key[3]], color="k", ls="--", lw=1,
                   label=f"read bandwidth, {key[3]} thread{'s' if key[3] > 1 else ''} ({bandwidth[key[3]]:.1f} GB/s)")
        ax.set_xticks(pos, names, rotation=60, ha="right", fontsize=8)   # 29 names: upright they overlap
        ax.set_ylabel("GB/s of weight bytes")
        ax.set_title(title)
        ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return None


def results_md(rows, bandwidth, info, ggml_desc, command, chart_rel, reps, path: Path, stat="median",
               section="generated section") -> None:
    BEGIN, END = markers(section)
    today = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    lines = [
        BEGIN,
        f"Measured {today} by `{command}`.",
        "",
        f"- Machine: {info.get('Model name', info['model'])} (family {info.get('CPU family', '?')}, "
        f"model {info.get('Model', '?')}), {info['cores']} cores, L3 {info.get('L3 cache', '?')}; "
        f"SIMD flags: {info['flags']} (no AVX-512 unless listed). Load average at the start: {info['loadavg']} "
        f"(shared machine: other jobs were running).",
        f"- qgemv {qgemv.__version__}, ISA variant `{qgemv._dispatch.isa}`, Python {platform.python_version()}, numpy {np.__version__}.",
        f"- {ggml_desc}",
        f"- Streaming read bandwidth in this run (numpy reductions over 1 GiB, the better of a probe "
        f"before and after): 1 thread {bandwidth[1]:.1f} GB/s, 2 threads {bandwidth[2]:.1f} GB/s.",
        f"- {dict(median='Medians', min='Minima')[stat]} of {reps} timed calls per side for gemv, about half a second's worth "
        f"(3-400 calls) for dequant and quantize (qgemv and ggml alternating in blocks of 5, "
        f"each block after {harness.WARMUP * 1e3:.0f} ms of untimed calls). "
        f"\"(out)\": weights rotated through copies totalling >= {harness.OUT_OF_CACHE_BYTES // harness.MiB} MiB "
        f"(256 MiB or twice the L3). "
        f"\"r\": ggml's repacked (interleaved) layout was the faster ggml path. GB/s = weight bytes / time "
        f"(quantize: float32 input bytes / time). "
        f"(min): ggml/qgemv of each side's fastest call, less sensitive to other jobs; \"~\": the two "
        f"ratios part by more than {DISTURBED}x, a row disturbed by other jobs (read its (min)). "
        f"% bw: of the read bandwidth at the same thread count (out of cache: a probe of 3 reductions "
        f"just before the case, as the machine's bandwidth drifts during a run). The 2-threads-against-1 "
        f"target compares the 2-thread out-of-cache calls with 1-thread calls timed in the same "
        f"alternating blocks. numpy ms: float32 `dequantize(W) @ x` "
        f"(OpenBLAS, same threads) for gemv; gguf-py's `dequantize` for dequant.",
        "",
        markdown_table(rows),
        "",
    ]
    if chart_rel:
        lines += [f"![GB/s per format]({chart_rel})", ""]
    checked = targets_text(rows, bandwidth)
    if checked:
        lines += ["Against issue 6's targets (the misses; \"~\": a disturbed row, read its (min)):", ""]
        lines += checked + [""]
    lines.append(END)
    block = "\n".join(lines)
    if path.exists():
        text = path.read_text()
        if BEGIN in text and END in text:
            pre, rest = text.split(BEGIN, 1)
            post = rest.split(END, 1)[1]
            path.write_text(pre + block + post)
            return
        path.write_text(text.rstrip("\n") + "\n\n" + block + "\n")
        return
    path.write_text("# qgemv benchmark results\n\n" + block + "\n")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--formats", nargs="*", help="format names (default: every format in the table with the op)")
    ap.add_argument("--quick", action="store_true", help="3 GEMV cases per format, fewer repetitions")
    ap.add_argument("--reps", type=int, default=None, help="timed calls per side per case (default 40, quick 15)")
    ap.add_argument("--no-gemv", action="store_true")
    ap.add_argument("--no-dequant", action="store_true")
    ap.add_argument("--no-quantize", action="store_true")
    ap.add_argument("--no-numpy", action="store_true", help="skip numpy/gguf-py reference timings")
    ap.add_argument("--chart", default=str(HERE / "gemv_gbps.png"), help="PNG path ('' to skip)")
    ap.add_argument("--results", nargs="?", const=str(HERE / "RESULTS.md"), default=None,
                    help="write the table into RESULTS.md (default path benches/RESULTS.md)")
    ap.add_argument("--section", default="generated section",
                    help="name of the RESULTS.md section to (re)write, e.g. one per ggml build")
    ap.add_argument("--stat", choices=("median", "min"), default="median",
                    help="statistic over the timed calls (min: the least-disturbed call on a busy machine)")
    args = ap.parse_args(argv)
    global STAT
    STAT = harness.median if args.stat == "median" else min
    reps = args.reps or (15 if args.quick else 40)
    command = "python benches/compare.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if os.environ.get("QGEMV_GGML_LIB"):
        command = f"QGEMV_GGML_LIB={os.environ['QGEMV_GGML_LIB']} " + command
    g = ggml_ref.load()
    ggml_desc = g.describe() if g else "ggml: not found (pip install libggml-python, or set QGEMV_GGML_LIB)"
    if g and not g.features.get("avx512") and "avx512f" in open("/proc/cpuinfo").read():
        ggml_desc += " -- this CPU has AVX-512 but this ggml was built without it"
    info = harness.machine()
    print(ggml_desc)
    print(f"qgemv ISA {qgemv._dispatch.isa}; CPU {info['model']}; load {info['loadavg']}", flush=True)

    bw = {t: harness.read_bandwidth(t, stat=STAT) for t in (1, 2)}
    print(f"read bandwidth: 1 thread {bw[1]:.1f} GB/s, 2 threads {bw[2]:.1f} GB/s", flush=True)

    rows = []
    for fmt in harness.gemv_formats(args.formats) if not args.no_gemv else ():
        for shape, batch, threads in gemv_cases(args.quick):
            r = run_gemv(fmt, shape, batch, threads, reps, g, not args.no_numpy)
            rows.append(r)
            print(f"  {fmt.name} {shape[0]}x{shape[1]} b{batch} t{threads}: qgemv {r['qgemv_ms']:.3f} ms"
                  + (f", ggml {r['ggml_ms']:.3f} ms{' (repacked)' if r['ggml_path'] else ''}" if 'ggml_ms' in r else ""),
                  flush=True)
    _shape_cache.clear()
    if not args.no_dequant:
        for fmt in harness.dequant_formats(args.formats):
            rows.append(run_dequant(fmt, max(5, reps // 3), g, not args.no_numpy))
    if not args.no_quantize:
        for fmt in harness.quantize_formats(args.formats):
            for weighted in harness.imatrix_variants(fmt):
                r = run_quantize(fmt, weighted, max(5, reps // 3), g)
                rows.append(r)
                mbps = lambda ms: r["nbytes"] / (ms * 1e-3) / 1e6
                print(f"  {r['op']} {fmt.name}: qgemv {mbps(r['qgemv_ms']):.1f} MB/s"
                      + (f", ggml {mbps(r['ggml_ms']):.1f} MB/s" if "ggml_ms" in r else ""), flush=True)
    bw2 = {t: harness.read_bandwidth(t, stat=STAT) for t in (1, 2)}
    bw = {t: max(bw[t], bw2[t]) for t in bw}
    print(f"read bandwidth after: 1 thread {bw2[1]:.1f} GB/s, 2 threads {bw2[2]:.1f} GB/s", flush=True)
    rows = [finish(r, bw) for r in rows]

    print()
    print(text_table(rows))
    print("\n".join(["", "issue 6's targets (the misses):"] + targets_text(rows, bw)))
    chart_rel = None
    if args.chart:
        msg = chart(rows, bw, Path(args.chart))
        if msg:
            print(msg)
        else:
            print(f"chart: {args.chart}")
            try:
                chart_rel = os.path.relpath(args.chart, Path(args.results).parent if args.results else HERE)
            except ValueError:
                chart_rel = args.chart
    if args.results:
        results_md(rows, bw, info, ggml_desc, command, chart_rel, reps, Path(args.results), args.stat, args.section)
        print(f"wrote {args.results}")
    return rows


if __name__ == "__main__":
    main()
