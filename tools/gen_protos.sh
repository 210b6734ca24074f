#!/usr/bin/env bash
# Regenerate python/ferroflow/core/**/*_pb2.py(i) from the .proto files next to them.
#
# Dev-time only. The generated code must stay loadable by the protobuf range
# declared in pyproject.toml, so the code generator is pinned: grpcio-tools
# 1.76.0 bundles protoc 31.1 (Python gencode 6.31.1), which needs a protobuf
# runtime >= 6.31.1. Use a separate virtualenv for it, because grpcio-tools
# pins protobuf < 7 and would downgrade the dev environment's protobuf:
#
#   python -m venv /tmp/protoc-venv && /tmp/protoc-venv/bin/pip install grpcio-tools==1.76.0
#   PROTOC_PYTHON=/tmp/protoc-venv/bin/python tools/gen_protos.sh
set -euo pipefail
cd "$(dirname "$0")/../python"
PY="${PROTOC_PYTHON:-python}"
version="$("$PY" -m grpc_tools.protoc --version)"
if [ "$version" != "libprotoc 31.1" ]; then
  echo "expected libprotoc 31.1 (grpcio-tools==1.76.0), got: $version" >&2
  exit 1
fi
protos=$(find ferroflow/core -name '*.proto' | sort)
"$PY" -m grpc_tools.protoc -I . --python_out=. --pyi_out=. $protos
echo "generated $(echo "$protos" | wc -l) files"
