"""pytest-benchmark: QMatrix.quantize per format, next to ggml's ``ggml_quantize_chunk``.

    cd <repo> && python -m pytest benches/bench_quantize.py --benchmark-enable -p no:cacheprovider \
        [-k "q4_K"] [--benchmark-columns=median,iqr,rounds] [--benchmark-json=out.json]

(``--benchmark-enable`` because pyproject's addopts disables benchmarks for the test run.)
Formats come from the table (``qgemv.formats("quantize")``, weight formats only), so a format
joins once its row lists "quantize".  One thread, the same input for both sides: 64x4096
Gaussian float32 rows (``harness.quantize_input``), without an importance matrix and, where
the format's quantizer uses one, with it (``harness.imatrix_variants``).  Each benchmark's
``extra_info`` holds ``mbps``: MB of float32 input per second at the median time.  For one
table of qgemv vs ggml side by side, use ``benches/compare.py``.
"""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import ggml_ref  # noqa: E402
import harness  # noqa: E402

from qgemv import QMatrix  # noqa: E402

GGML = ggml_ref.load()
ROUNDS = 10

CASES = [(f, weighted, impl) for f in harness.quantize_formats() for weighted in harness.imatrix_variants(f)
         for impl in ("qgemv", "ggml")]


def _id(case):
    f, weighted, impl = case
    return f"{f.name}-{'imatrix' if weighted else 'plain'}-{impl}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_quantize(benchmark, case):
    fmt, weighted, impl = case
    x, imatrix = harness.quantize_input()
    im = imatrix if weighted else None
    benchmark.group = f"quantize {x.shape[0]}x{x.shape[1]} t1 {'imatrix' if weighted else 'plain'}"
    benchmark.extra_info.update(format=fmt.name, impl=impl, imatrix=weighted)
    if impl == "qgemv":
        benchmark.pedantic(QMatrix.quantize, args=(x, fmt.id), kwargs={"imatrix": im, "n_threads": 1},
                           rounds=ROUNDS, iterations=1, warmup_rounds=1)
    else:
        if GGML is None:
            pytest.skip("no ggml library (pip install libggml-python or set QGEMV_GGML_LIB)")
        benchmark.pedantic(GGML.quantize, args=(fmt.id, x, im), rounds=ROUNDS, iterations=1, warmup_rounds=1)
    benchmark.extra_info["mbps"] = round(x.nbytes / benchmark.stats.stats.median / 1e6, 1)
