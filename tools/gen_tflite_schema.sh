#!/usr/bin/env bash
# Regenerates crates/lite/src/schema_generated.rs from crates/lite/schema/tflite.fbs.
# Needs planus-cli (`cargo install planus-cli --version 1.3.0 --locked`), the
# same major version as the `planus` runtime crate.
set -euo pipefail
cd "$(dirname "$0")/.."
planus rust -o crates/lite/src/schema_generated.rs crates/lite/schema/tflite.fbs
# planus derives serde traits on every type; ferroflow does not serialize the
# schema types with serde, so drop the derives (and the dependency).
sed -i -e '/^ *::serde::Serialize,$/d' -e '/^ *::serde::Deserialize,$/d' -e 's/, ::serde::Serialize, ::serde::Deserialize//' crates/lite/src/schema_generated.rs
