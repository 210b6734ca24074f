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
# Register the files in ferroflow's own descriptor pool (ferroflow/core/_pool.py),
# not protobuf's default one, so TensorFlow's copies of the same messages can
# be imported into the same process.
for f in $(find ferroflow/core -name '*_pb2.py'); do
  sed -i -e 's/_descriptor_pool\.Default()\.AddSerializedFile(/_pool.POOL.AddSerializedFile(/' \
         -e 's/^# @@protoc_insertion_point(imports)$/from ferroflow.core import _pool\n&/' "$f"
done
echo "generated $(echo "$protos" | wc -l) files"
