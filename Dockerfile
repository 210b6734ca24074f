# syntax=docker/dockerfile:1
# One image for every task of a ferroflow cluster (ps, worker, chief):
#
#   docker build -t ferroflow .
#   docker run --rm -e TF_CONFIG=... -p 2222:2222 ferroflow server --bind 0.0.0.0 --token-file /run/secrets/token
#   docker run --rm ferroflow demo
#
# The entrypoint is the `ferroflow` command; with no arguments the container runs
# `ferroflow server`, which serves the task that TF_CONFIG names. Training programs
# (examples/mnist_replica.py is copied to /opt/ferroflow/examples) run with
# `--entrypoint python`. See deploy/README.md.

# --- build: the abi3 wheel, with maturin on the Rust toolchain image -------------
FROM rust:1-bookworm AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && rm -rf /var/lib/apt/lists/*
RUN python3 -m venv /opt/maturin && /opt/maturin/bin/pip install --no-cache-dir "maturin>=1.5,<2.0"
WORKDIR /src
COPY . .
# The cache mounts keep crates.io downloads and compiled dependencies between builds (BuildKit).
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/src/target \
    /opt/maturin/bin/maturin build --release --out /wheels

# --- runtime: the wheel on a slim Python -----------------------------------------
FROM python:3.11-slim AS runtime
COPY --from=build /wheels /tmp/wheels
RUN pip install --no-cache-dir /tmp/wheels/*.whl && rm -rf /tmp/wheels
COPY examples /opt/ferroflow/examples
# No root: the server needs none (port 2222 is above 1024).
RUN useradd --uid 1000 --create-home --shell /usr/sbin/nologin ferroflow
USER 1000
WORKDIR /home/ferroflow
ENV PYTHONUNBUFFERED=1
EXPOSE 2222
ENTRYPOINT ["ferroflow"]
CMD ["server"]
