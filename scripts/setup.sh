#!/usr/bin/env bash
# Installs what the build needs on a fresh Debian machine, then builds everything in release
# mode. HiGHS is compiled from source by the highs-sys crate: it needs cmake, and bindgen needs
# libclang. The checker alone (cargo build --no-default-features --bin nkrank-check) needs
# neither.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
# bindgen loads libclang at build time; any libclang-*.so will do.
if ! ls /usr/lib/llvm-*/lib/libclang*.so* /usr/lib/x86_64-linux-gnu/libclang*.so* >/dev/null 2>&1; then
  missing+=(libclang-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo not found; install Rust (rustup) first" >&2; exit 1; }
echo "setup: building (the first build compiles HiGHS, about 4 minutes on 2 cores)" >&2
cargo build --release --quiet
