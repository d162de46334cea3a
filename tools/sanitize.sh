#!/usr/bin/env bash
# AddressSanitizer + UndefinedBehaviorSanitizer: build qgemv with QGEMV_SANITIZE=1 in a scratch
# copy of a checkout, then run the whole test suite against that build.  Any ASan report or UB
# finding aborts the interpreter, so a green run is a clean run.
#
# CPython is not instrumented, so the ASan runtime must be loaded first (LD_PRELOAD of gcc's
# libasan.so); leak detection is off, since CPython keeps much of its memory until exit.
#
# Usage: tools/sanitize.sh [CHECKOUT] [PYTEST ARGS...]   (CHECKOUT defaults to this one)
# Needs gcc (Linux); takes the checkout's working tree as it is, uncommitted files included.
set -euo pipefail

SRC=$(cd "${1:-$(dirname "$0")/..}" && pwd)
shift $(( $# > 0 ? 1 : 0 ))
PY=${PYTHON:-python3}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/qgemv-sanitize.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

mkdir "$WORK/src"
tar -C "$SRC" --exclude=./.git --exclude=./build --exclude=./dist --exclude='*.egg-info' \
    --exclude='*.so' --exclude=__pycache__ --exclude=./qgemv/_kernels.c -cf - . \
    | tar -C "$WORK/src" -xf -

t0=$(date +%s)
(cd "$WORK/src" && QGEMV_SANITIZE=1 "$PY" setup.py -q build_ext --inplace 2>"$WORK/build.log") \
    || { cat "$WORK/build.log" >&2; exit 1; }
build_seconds=$(( $(date +%s) - t0 ))

ASAN_LIB=$(gcc -print-file-name=libasan.so)
[ -f "$ASAN_LIB" ] || { echo "libasan.so not found (gcc -print-file-name)" >&2; exit 1; }
export LD_PRELOAD=$ASAN_LIB
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export PYTHONPATH=$WORK/src
export QGEMV_SHARED=${QGEMV_SHARED:-$(dirname "$SRC")/shared}

cd "$WORK"   # not the caller's directory: a qgemv/ there would shadow the build
"$PY" -c "import qgemv; assert qgemv.__file__.startswith('$WORK/src'), qgemv.__file__; \
          assert '-fsanitize=address' in qgemv._kernels.BUILD_INFO; print(qgemv._kernels.BUILD_INFO)"
t0=$(date +%s)
status=0
"$PY" -m pytest "$WORK/src/tests" -q -p no:cacheprovider "$@" 2>&1 | tee "$WORK/tests.log" \
    || status=$?
test_seconds=$(( $(date +%s) - t0 ))
# a build without -fno-sanitize-recover (an older setup.py) only prints UB findings: count them too
if grep -qE "runtime error:|ERROR: AddressSanitizer" "$WORK/tests.log"; then
    echo "sanitizer findings above" >&2
    status=1
fi
echo "sanitizer build: ${build_seconds} s, test suite: ${test_seconds} s ($(nproc) cores)"
exit "$status"
