"""``python -m qgemv``: see :mod:`qgemv.cli`."""
import sys

from qgemv.cli import main

sys.exit(main())
