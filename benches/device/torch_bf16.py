"""PyTorch reference for benches/device/bf16_sweep.sh: bf16 and f32 products (256x2048 @ 2048x2048) and an
MLP 784-2048-2048-10 batch-256 Adam step with and without CPU autocast to bfloat16, at the given thread counts.

    python benches/device/torch_bf16.py 1,4,16
"""

from __future__ import annotations

import pathlib
import sys

import torch

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
from scaling import rate  # noqa: E402  (benches/scaling.py's timing loop)


def product_rate(dtype, seconds=1.0):
    a = torch.randn(256, 2048, dtype=dtype)
    b = torch.randn(2048, 2048, dtype=dtype)
    return rate(lambda: torch.matmul(a, b), seconds) * 2 * 256 * 2048 * 2048 / 1e9


def mlp_rate(autocast, seconds=1.0):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 2048),
        torch.nn.ReLU(),
        torch.nn.Linear(2048, 2048),
        torch.nn.ReLU(),
        torch.nn.Linear(2048, 10),
    )
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    x = torch.randn(256, 784)
    y = torch.randint(0, 10, (256,))

    def step():
        opt.zero_grad()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()

    return rate(step, seconds)


def main(threads):
    for t in threads:
        torch.set_num_threads(t)
        for dtype in (torch.float32, torch.bfloat16):
            print(f"torch gemm256 {dtype} threads {t}: {product_rate(dtype):.0f} GFLOP/s", flush=True)
        for autocast in (False, True):
            print(
                f"torch mlp2k autocast={autocast} threads {t}: {mlp_rate(autocast):.1f} steps/s", flush=True
            )


if __name__ == "__main__":
    main([int(t) for t in sys.argv[1].split(",")])
