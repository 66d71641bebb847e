#!/usr/bin/env bash
# Set up the Jupyter environment (once) and open the chapters in JupyterLab.
# Extra arguments go to jupyter lab, e.g.  bash scripts/lab.sh --port 8899
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade pip
"${pip[@]}" -e ".[jupyter]"

if [ "$(id -u)" = 0 ]; then
  set -- --allow-root "$@"  # Jupyter refuses to run as root without it
fi
exec .venv/bin/jupyter lab notebooks/ "$@"
