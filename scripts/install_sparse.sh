#!/usr/bin/env bash
# Installs torch-scatter and torch-sparse into the environment of PYTHON,
# compiled against its torch. PyPI has source releases only; the wheels are
# kept per torch release in WHEELS (pip's own cache would hand a wheel
# compiled against another torch to this one, which then fails to load).
#   scripts/install_sparse.sh PYTHON
set -euo pipefail
py=$1
torch=$("$py" -c 'import torch; print(torch.__version__)')
wheels=${PYG_BEMAP_WHEELS:-$HOME/.cache/pyg-bemap/wheels}/torch-$torch
specs=("torch-scatter>=2.1.2" "torch-sparse>=0.6.18")
if ! ls "$wheels"/torch_sparse-*.whl "$wheels"/torch_scatter-*.whl \
	>/dev/null 2>&1; then
	echo "building torch-scatter and torch-sparse against torch $torch"
	"$py" -m pip wheel --quiet --no-deps --no-build-isolation \
		--no-cache-dir --wheel-dir "$wheels" "${specs[@]}"
fi
"$py" -m pip install --quiet scipy  # what torch-sparse needs besides torch
"$py" -m pip install --quiet --no-deps --no-index --find-links "$wheels" \
	"${specs[@]}"
# they must load against this torch: wheels that do not are not kept
if ! "$py" -c 'import torch_scatter, torch_sparse'; then
	rm -rf "$wheels"
	echo "torch-sparse does not load with torch $torch" >&2
	exit 1
fi
