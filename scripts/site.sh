#!/usr/bin/env bash
# Set up the website's build tools (once) and build the course website into
# build/site/html/ from the committed, executed notebooks and the README (nothing is
# executed). Open build/site/html/index.html in a browser, from file:// or any web server.
# Extra arguments go to scripts/build_site.py, e.g.  bash scripts/site.sh --strict
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
fi
pip=(.venv/bin/python -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" --upgrade pip
"${pip[@]}" -e ".[site]"
exec .venv/bin/python scripts/build_site.py "$@"
