"""Thread control from outside qgemv: threadpoolctl, OMP_NUM_THREADS, set_num_threads, and
child processes (spawn works; a fork after a parallel region runs serially instead of hanging).

Child processes run as subprocesses with a timeout, so a hang fails the test instead of the run.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

import qgemv
from qgemv import _kernels, _threads

OPENMP, _ = _kernels.openmp()
needs_openmp = pytest.mark.skipif(not OPENMP, reason="built without OpenMP")

# a q8_0 matrix big enough that resolve() gives its product a thread team (>= 64 rows, >= 256 KiB)
MATRIX = textwrap.dedent("""
    import numpy as np
    from qgemv import QMatrix

    def make(rows=256, cols=1024):
        rng = np.random.default_rng(7)
        blocks = rng.integers(0, 256, size=(rows, cols // 32, 34), dtype=np.uint8)
        d = rng.uniform(0.001, 0.01, size=(rows, cols // 32)).astype(np.float16)
        blocks[:, :, :2] = d.view(np.uint8).reshape(rows, cols // 32, 2)
        x = rng.standard_normal(cols).astype(np.float32)
        return QMatrix(blocks.tobytes(), "q8_0", (rows, cols)), x
""")


@pytest.fixture(autouse=True)
def automatic_threads():
    qgemv.set_num_threads(None)
    yield
    qgemv.set_num_threads(None)


def run_child(code: str, tmp_path, env: dict | None = None, timeout: float = 120) -> dict:
    """Run ``code`` (a script that prints one JSON line last) in a fresh interpreter."""
    (tmp_path / "matrix.py").write_text(MATRIX)
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    full_env = {**os.environ, **(env or {})}
    full_env["PYTHONPATH"] = os.pathsep.join(
        [str(tmp_path), *[p for p in sys.path if p and os.path.isdir(p)]])
    posix = hasattr(os, "killpg")
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=full_env, cwd=tmp_path,
                            start_new_session=posix)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        if posix:   # the child and any grandchild it forked
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.communicate()
        pytest.fail(f"child process hung (no result in {timeout} s)")
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


@needs_openmp
def test_threadpoolctl_limits_openmp():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    apis = {info["user_api"] for info in threadpoolctl.threadpool_info()}
    assert "openmp" in apis, "threadpoolctl does not see the OpenMP runtime qgemv loaded"
    before = (qgemv.get_num_threads(), _kernels.openmp()[1])
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert _kernels.openmp()[1] == 1          # the runtime qgemv's kernels use
        assert qgemv.get_num_threads() == 1
        assert _threads.resolve(None, 1 << 30, 4096) == 1
    assert (qgemv.get_num_threads(), _kernels.openmp()[1]) == before


@needs_openmp
def test_set_num_threads_overrides_threadpoolctl():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    qgemv.set_num_threads(3)
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert qgemv.get_num_threads() == 3
    qgemv.set_num_threads(None)
    with threadpoolctl.threadpool_limits(1, user_api="openmp"):
        assert qgemv.get_num_threads() == 1


@needs_openmp
@pytest.mark.parametrize("omp", ["1", "3"])
def test_omp_num_threads(omp, tmp_path):
    got = run_child("""
        import json, qgemv
        from qgemv import _kernels, _threads
        print(json.dumps({"omp_max": _kernels.openmp()[1], "num": qgemv.get_num_threads(),
                          "cpus": _threads.available_cpus()}))
    """, tmp_path, env={"OMP_NUM_THREADS": omp})
    assert got["omp_max"] == int(omp)
    assert got["num"] == min(int(omp), got["cpus"])


def test_set_num_threads_is_the_default_of_every_call():
    qgemv.set_num_threads(2)
    assert qgemv.get_num_threads() == 2
    assert _threads.resolve(None, 1 << 30, 4096) == 2
    assert _threads.resolve(1, 1 << 30, 4096) == 1        # an explicit n_threads wins
    assert _threads.resolve(None, 1024, 4096) == 1        # small work runs serially
    assert _threads.resolve(None, None, None) == 2        # ... unless the caller sets no threshold
    for bad, err in [(0, ValueError), (-1, ValueError), (True, TypeError), (2.0, TypeError)]:
        with pytest.raises(err):
            qgemv.set_num_threads(bad)
    assert qgemv.get_num_threads() == 2


def test_spawn_child_after_parallel_region(tmp_path):
    got = run_child("""
        import json, multiprocessing as mp
        import numpy as np, qgemv, matrix

        def child():
            m, x = matrix.make()
            return m.matmul(x, n_threads=2).tolist(), qgemv.get_num_threads()

        if __name__ == "__main__":
            m, x = matrix.make()
            y = m.matmul(x, n_threads=2)           # the parent's thread team exists now
            with mp.get_context("spawn").Pool(1) as pool:
                y_child, n_child = pool.apply(child)
            print(json.dumps({"same": y_child == y.tolist(), "n_child": n_child,
                              "n_parent": qgemv.get_num_threads()}))
    """, tmp_path)
    assert got["same"]
    assert got["n_child"] == got["n_parent"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
@pytest.mark.parametrize("parent_ran_threads", [True, False], ids=["after-team", "before-team"])
def test_fork_child(parent_ran_threads, tmp_path):
    """libgomp hangs a forked child's first multi-thread region if the parent had a team;
    qgemv runs such a child serially (same results), and leaves other children alone."""
    got = run_child(f"""
        import json, multiprocessing as mp
        import numpy as np, qgemv, matrix

        def child(conn):
            m, x = matrix.make()
            conn.send((m.matmul(x, n_threads=2).tolist(), qgemv.get_num_threads()))

        if __name__ == "__main__":
            m, x = matrix.make()
            y = m.matmul(x, n_threads={2 if parent_ran_threads else 1})
            ctx = mp.get_context("fork")
            recv, send = ctx.Pipe(duplex=False)
            p = ctx.Process(target=child, args=(send,))
            p.start()
            y_child, n_child = recv.recv()
            p.join()
            print(json.dumps({{"same": y_child == y.tolist(), "n_child": n_child,
                               "n_parent": qgemv.get_num_threads()}}))
    """, tmp_path, timeout=60)
    assert got["same"]
    assert got["n_child"] == (1 if parent_ran_threads else got["n_parent"])
