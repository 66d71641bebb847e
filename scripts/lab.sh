#!/usr/bin/env bash
# Set up the Jupyter environment and your workspace (once), and open the course in
# JupyterLab at its first chapter. The workspace, my-course/, holds every chapter without
# the answers (made by nbgrader's stripping, with the grading extra, in a few seconds);
# running this again never overwrites your work there: it only adds chapters that are new
# upstream. Its notebooks run in the kernel "Python 3 (minigrad)" that the workspace step
# installs into .venv/: this Python with one BLAS thread, as the pages were made.
# Extra arguments go to jupyter lab, e.g.  bash scripts/lab.sh --port 8899
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
  echo "lab.sh: making the Python environment .venv/ (once)"
  "${PYTHON:-python3}" -m venv .venv
fi
# installed once, and again when pyproject.toml (the dependencies) changes; minigrad
# itself is installed in editable mode, so changes to its code need no reinstall
stamp=.venv/.lab-installed
if [ "$(cat "$stamp" 2>/dev/null)" = "$(cksum < pyproject.toml)" ] \
    && [ -x .venv/bin/jupyter ] && [ -x .venv/bin/minigrad-course ]; then
  echo "lab.sh: .venv/ has minigrad, JupyterLab and nbgrader (pyproject.toml unchanged)"
else
  echo "lab.sh: installing minigrad with JupyterLab and nbgrader into .venv/ (once: a minute or" \
    "two, see the README; downloads come on top)"
  # --no-compile: pip would byte-compile all of the ~5400 files it installs, most of which
  # a lab never imports (a third of the install's time on a busy 2-core machine); Python
  # compiles what it imports, once
  pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile)
  # the venv's own pip, unless it is too old to install minigrad in editable mode (21.3)
  if ! .venv/bin/python -c "import sys, pip; sys.exit(tuple(map(int, pip.__version__.split('.')[:2])) < (21, 3))"; then
    "${pip[@]}" --upgrade pip
  fi
  # uv installs the same packages as pip for a quarter of pip's CPU time (measured from a
  # fresh clone, both caches empty, 2026-11-29: 14 s of CPU and 58 s against 53 s and 4.6
  # min, at a load average of 9); pip installs uv itself (one wheel) and stays the way
  # when uv cannot be had or fails (uv does not read pip's configuration: a pip mirror
  # set in pip.conf is then used by pip)
  if "${pip[@]}" uv 2>/dev/null \
      && .venv/bin/python -m uv pip install --quiet --python .venv/bin/python \
         -e ".[jupyter,grading]"; then
    :
  else
    echo "lab.sh: installing with pip instead of uv"
    "${pip[@]}" -e ".[jupyter,grading]"
  fi
  cksum < pyproject.toml > "$stamp"
fi

echo "lab.sh: your workspace my-course/: the chapters without their answers (your work there" \
  "is never overwritten)"
.venv/bin/minigrad-course workspace my-course --notebooks notebooks
# chapter 00 if there is one, else the first chapter in course order (NN_name.ipynb)
first=$(cd my-course && ls -1 [0-9]*_*.ipynb 2>/dev/null | sort | head -n 1 || true)

# the student's lab, without nbgrader's teacher menus (Formgrader, Create Assignment,
# Courses, the exchange's Assignments): student-lab/ is a Jupyter config folder that
# disables them for this lab only (the validate button stays; the teacher's
# minigrad-course commands and a teacher's own lab are untouched)
export JUPYTER_CONFIG_PATH="$PWD/student-lab${JUPYTER_CONFIG_PATH:+:$JUPYTER_CONFIG_PATH}"
# the lab's terminals (File > New > Terminal) find minigrad-course without activating
# .venv, and what runs there uses one BLAS thread, like the kernels
export PATH="$PWD/.venv/bin:$PATH" VIRTUAL_ENV="$PWD/.venv"
set -a; . course/one_thread.env; set +a
grep -qw avx2 /proc/cpuinfo 2>/dev/null || unset OPENBLAS_CORETYPE  # (one_thread.env says why)

echo "lab.sh: opening JupyterLab on my-course/${first:-} (stop it with Ctrl-C)"
if [ "$(id -u)" = 0 ]; then
  set -- --allow-root "$@"  # Jupyter refuses to run as root without it
fi
exec .venv/bin/jupyter lab --ServerApp.root_dir=my-course \
  ${first:+--LabApp.default_url="/lab/tree/$first"} "$@"
