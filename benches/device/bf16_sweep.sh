#!/bin/sh
# A prepared sweep for a lent many-core machine with AVX512-BF16/AMX (issue 21 and 18):
# bf16 kernels (vdpbf16ps, AMX opt-in) correctness and speed, mixed-precision MLP, then the f32
# training sweep against PyTorch. Not run yet: no such machine was lent when it was written.
# Expects, built on the development machine and carried over in .devbin/ (git-excluded):
#   .devbin/scaling          cargo build --release --example scaling -p ferroflow; strip
#   .devbin/tensor_tests.gz  cargo test -p ferroflow-tensor --lib --no-run; strip; gzip (16 MB)
# Run from the repository root: sh benches/device/bf16_sweep.sh
cd "$(dirname "$0")/../.."
lscpu | grep -E "Model name|^CPU\(s\)|L1d|L2|L3"; grep -o -w -E "amx_bf16|amx_tile|avx512_bf16|avx512_fp16" /proc/cpuinfo | sort | uniq -c
python3 --version; python3 -c "import numpy, torch; print('numpy', numpy.__version__, 'torch', torch.__version__)"
gunzip -c .devbin/tensor_tests.gz > /tmp/tensor_tests && chmod +x /tmp/tensor_tests
echo "== tensor lib tests (default bf16 kernel)"; timeout 120 /tmp/tensor_tests --test-threads 8 2>&1 | grep -E "FAILED|panicked|failed|test result" | head -20
echo "== bf16 tests with AMX"; FERROFLOW_BF16_GEMM=amx timeout 60 /tmp/tensor_tests bf16 --test-threads 4 2>&1 | tail -25
echo "== bf16 gemm: amx, avx512bf16, f32"
for t in 1 4 16; do
  FERROFLOW_BF16_GEMM=amx RAYON_NUM_THREADS=$t timeout 30 .devbin/scaling --child $t --models gemm256,bf16gemm --seconds 0.8 --label amx
  RAYON_NUM_THREADS=$t timeout 30 .devbin/scaling --child $t --models bf16gemm --seconds 0.8 --label vnni
done
echo "== mixed precision mlp2k"
timeout 60 .devbin/scaling --threads 1,4,16 --models mlp2k --seconds 1 --label f32
timeout 60 .devbin/scaling --threads 1,4,16 --models mlp2k --seconds 1 --label bf16-vnni --bf16
FERROFLOW_BF16_GEMM=amx timeout 60 .devbin/scaling --threads 1,4,16 --models mlp2k --seconds 1 --label bf16-amx --bf16
echo "== torch bf16"; timeout 60 python3 benches/device/torch_bf16.py 1,4,16
echo "== scaling sweep"
timeout 200 python3 benches/scaling.py --frameworks torch --ferroflow-bin .devbin/scaling --threads 1,2,4,8,16 --models conv64,mlp128,mlp512,gemm --seconds 1.0
