#!/usr/bin/env bash
# Prove the baseline kernels on a CPU without AVX2: run qgemv under qemu-user emulating an
# Intel Nehalem (SSE4.2, no AVX; numpy 2's x86-64-v2 baseline still runs on it) and check that
#   - import picks "baseline" and the CPU runs nothing else,
#   - forcing QGEMV_ISA=avx2 there is refused at import, and the avx2 kernels called anyway die
#     of SIGILL (so the emulated CPU really lacks AVX2),
#   - q4_0 / q8_0 dequantize and matmul (q8_0 and f32 activations) give the same bits as the
#     host's baseline variant, and agree with the host's best variant (dequantize bit for bit,
#     products within the format's tolerance).
#
# Usage: tools/check_baseline_qemu.sh [PYTHON]   (PYTHON imports qgemv; default python3)
# Needs qemu-x86_64 (Debian: apt-get install qemu-user); installs it when run as root.
set -euo pipefail

PY=${1:-python3}
CPU=${QEMU_CPU:-Nehalem}
QEMU=$(command -v qemu-x86_64 || true)
if [ -z "$QEMU" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    apt-get install -y -qq qemu-user >/dev/null || { apt-get update -qq && apt-get install -y -qq qemu-user >/dev/null; }
    QEMU=$(command -v qemu-x86_64 || true)
fi
if [ -z "$QEMU" ]; then
    echo "SKIPPED: qemu-x86_64 not found (apt-get install qemu-user)" >&2
    exit 0
fi
if [ "$(uname -m)" != x86_64 ]; then
    echo "SKIPPED: not an x86-64 host" >&2
    exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/qgemv-qemu.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# the interpreter itself, not a venv's symlink chain, so qemu loads the real ELF; the venv's
# site-packages come along through sys.path of the host interpreter
REAL_PY=$("$PY" -c 'import os, sys; print(os.path.realpath(sys.executable))')
SITE=$("$PY" -c 'import os, sys; print(os.pathsep.join(p for p in sys.path if p))')

cat > "$WORK/compute.py" <<'EOF'
"""q4_0 / q8_0 results of this process's qgemv variant, saved to argv[1] (.npz)."""
import sys
import numpy as np
import qgemv
from qgemv import QMatrix, _dispatch

rows, cols = 96, 1024
rng = np.random.default_rng(2024)
w = rng.standard_normal((rows, cols)).astype(np.float32)
x = rng.standard_normal(cols).astype(np.float32)
xb = rng.standard_normal((cols, 3)).astype(np.float32)

def q8_0(w):   # 34-byte blocks: f16 d, 32 int8
    b = w.reshape(rows, -1, 32)
    d = np.abs(b).max(axis=2, keepdims=True) / 127
    q = np.rint(b / d).astype(np.int8)
    return np.concatenate([d.astype(np.float16).view(np.uint8), q.view(np.uint8)], axis=2)

def q4_0(w):   # 18-byte blocks: f16 d, 16 bytes of nibbles (low: values 0..15, high: 16..31)
    b = w.reshape(rows, -1, 32)
    d = np.abs(b).max(axis=2, keepdims=True) / -8
    q = np.clip(np.rint(b / d) + 8, 0, 15).astype(np.uint8)
    nib = q[:, :, :16] | (q[:, :, 16:] << 4)
    return np.concatenate([d.astype(np.float16).view(np.uint8), nib], axis=2)

out = {"isa": np.array(_dispatch.isa), "runnable": np.array(" ".join(_dispatch.runnable()))}
for name, make in [("q4_0", q4_0), ("q8_0", q8_0)]:
    m = QMatrix(make(w).tobytes(), name, (rows, cols))
    out[f"{name}_dequantize"] = m.dequantize()
    out[f"{name}_matmul"] = m @ x
    out[f"{name}_matmul_f32"] = m.matmul(x, act="f32")
    out[f"{name}_matmul_batch"] = m @ xb
np.savez(sys.argv[1], **out)
print(f"{_dispatch.isa}: computed (runnable here: {' '.join(_dispatch.runnable())})")
EOF

echo "host:  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
QGEMV_ISA=baseline "$PY" "$WORK/compute.py" "$WORK/host_baseline.npz"
"$PY" "$WORK/compute.py" "$WORK/host_best.npz"

echo "qemu:  $QEMU -cpu $CPU ($("$QEMU" --version | head -1))"
t0=$(date +%s)
PYTHONPATH=$SITE "$QEMU" -cpu "$CPU" "$REAL_PY" "$WORK/compute.py" "$WORK/emulated.npz"
echo "qemu run: $(( $(date +%s) - t0 )) s"
if PYTHONPATH=$SITE QGEMV_ISA=avx2 "$QEMU" -cpu "$CPU" "$REAL_PY" -c "import qgemv" 2>"$WORK/err"; then
    echo "FAIL: QGEMV_ISA=avx2 imported on an emulated $CPU" >&2
    exit 1
fi
echo "QGEMV_ISA=avx2 under qemu refused: $(tail -1 "$WORK/err")"
# the emulation is real: the avx2 kernels, called past the import check, die of SIGILL there
if PYTHONPATH=$SITE "$QEMU" -cpu "$CPU" "$REAL_PY" -c "
import numpy as np
from qgemv import QMatrix, _dispatch
_dispatch.isa = 'avx2'
QMatrix(bytes(96 * 32 * 34), 'q8_0', (96, 1024)) @ np.ones(1024, np.float32)" 2>"$WORK/err"; then
    echo "FAIL: the avx2 kernels ran on an emulated $CPU: this qemu does not check AVX2" >&2
    exit 1
fi
echo "avx2 kernels forced under qemu: $(grep -m1 -o 'signal 4 (Illegal instruction)' "$WORK/err" || tail -1 "$WORK/err")"

"$PY" - "$WORK" "$CPU" <<'EOF'
import sys
import numpy as np
from qgemv import _formats
work, cpu = sys.argv[1:]
emu, base, best = (np.load(f"{work}/{n}.npz") for n in ("emulated", "host_baseline", "host_best"))
assert str(emu["isa"]) == "baseline", f"import under qemu picked {emu['isa']}"
assert str(emu["runnable"]) == "baseline", f"qemu {cpu} claims to run {emu['runnable']}"
tol = {f.name: f for f in _formats.FORMATS}
for key in sorted(k for k in emu.files if k not in ("isa", "runnable")):
    a, b, c = emu[key], base[key], best[key]
    assert a.view(np.uint32).tobytes() == b.view(np.uint32).tobytes(), f"{key}: qemu != host baseline"
    if key.endswith("dequantize"):
        assert a.view(np.uint32).tobytes() == c.view(np.uint32).tobytes(), f"{key}: != host {best['isa']}"
    else:
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-3 * float(np.abs(c).max()), err_msg=key)
    print(f"  {key:<20} qemu {cpu} baseline == host baseline (bits); ~ host {best['isa']}")
print(f"ok: baseline on an emulated {cpu} (no AVX2) imports and computes correctly")
EOF
