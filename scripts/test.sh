#!/usr/bin/env bash
# Set up everything the tests need, then run them all: the linter, the unit tests and
# the chapter notebooks (nbval). Run it again at will: it reuses .venv.
#
#   MINIGRAD_STRICT=1 (set by CI): a missing optional tool (PyTorch, ...) fails the
#   run instead of skipping the tests that need it.
#   Extra arguments go to pytest, e.g.  bash scripts/test.sh -k lazy
set -euo pipefail
cd "$(dirname "$0")/.."
strict=${MINIGRAD_STRICT:-0}

if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade pip
# the test extra includes the grading extra (nbgrader: tests/test_grading.py)
"${pip[@]}" -e ".[test,grading]"

# PyTorch is the reference that values and gradients are compared with (CPU build,
# pinned: an unpinned torch pulls gigabytes of CUDA packages).
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  if ! "${pip[@]}" "torch==2.13.0"; then
    echo "scripts/test.sh: could not install torch==2.13.0; tests that compare with PyTorch will skip" >&2
    [ "$strict" = 1 ] && exit 1
  fi
fi

echo "== ruff"
.venv/bin/ruff check minigrad widgets course tests scripts site conftest.py

# One BLAS/OpenMP thread per process: pytest runs one worker per core, and nbgrader and
# nbval start kernels of their own; threads on top of that oversubscribe the cores and make
# small matrix products many times slower (a chapter's cell ran past the grader's limit).
# (conftest.py sets the same for every pytest run, so that a bare pytest --nbval prints
# the chapters' numbers too; here they also reach the processes this script starts first.)
set -a; . course/one_thread.env; set +a
grep -qw avx2 /proc/cpuinfo 2>/dev/null || unset OPENBLAS_CORETYPE  # (one_thread.env says why)

echo "== pytest (unit tests and chapter notebooks)"
# --dist loadfile keeps each notebook's cells together, in order, in one worker
exec .venv/bin/python -m pytest -n auto --dist loadfile \
  --nbval --nbval-current-env --nbval-sanitize-with "$PWD/notebooks/sanitize.cfg" \
  tests notebooks "$@"
