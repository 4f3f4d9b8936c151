#!/usr/bin/env bash
# Installs the Debian packages PTO needs. A fast no-op when they are present.
# Usage: tools/setup.sh   (as root, or with sudo available)
set -euo pipefail

PACKAGES=(
  # Build: Bazel 4.2.3 and the local repositories it needs offline.
  bazel-bootstrap bazel-rules-java bazel-platforms bazel-skylib
  g++ make
  # C++ libraries.
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler libabsl-dev
  librocksdb-dev libspdlog-dev libfmt-dev prometheus-cpp-dev libssl-dev
  libjemalloc-dev  # ptod's allocator
  libhiredis-dev  # ptod's Redis Cluster tier: RESP encoding and parsing (TLS is ours, OpenSSL)
  libgtest-dev libgmock-dev libbenchmark-dev pybind11-dev
  # Python front end and its tests (Debian's interpreter: /usr/bin/python3).
  python3 python3-dev python3-numpy python3-grpcio python3-protobuf python3-pytest python3-torch
  libopenblas0-pthread
  # Quick start and tests.
  curl procps
  # The Redis Cluster tests start real redis-server processes (and make TLS
  # certificates with openssl).
  redis-server redis-tools openssl
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "setup: done" >&2
