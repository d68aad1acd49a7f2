#!/usr/bin/env bash
# Installs what the build needs on a fresh Debian machine, then builds everything in release
# mode. HiGHS is compiled from source by the highs-sys crate: it needs cmake, and bindgen needs
# libclang itself (not libclang-cpp, a different library that base images often ship). The
# checker alone (cargo build --no-default-features --bin nkrank-check) needs neither. python3
# (for the schema check of scripts/test.sh) is installed too if missing.
set -euo pipefail
cd "$(dirname "$0")/.."

# True when bindgen (clang-sys) can load libclang: the names it looks for are libclang.so,
# libclang.so.N and libclang-N.so*, in LIBCLANG_PATH or the usual library folders.
have_libclang() {
  local dirs=(/usr/lib/llvm-*/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib /usr/local/lib)
  [ -n "${LIBCLANG_PATH:-}" ] && dirs=("$LIBCLANG_PATH" "${dirs[@]}")
  local d f
  for d in "${dirs[@]}"; do
    for f in "$d"/libclang.so "$d"/libclang.so.[0-9]* "$d"/libclang-[0-9]*.so*; do
      [ -e "$f" ] && return 0
    done
  done
  return 1
}

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
# cmake builds HiGHS (C++) with make by default; slim images may lack both.
command -v make >/dev/null 2>&1 || missing+=(make)
command -v c++ >/dev/null 2>&1 || missing+=(g++)
have_libclang || missing+=(libclang-dev)
# The schema check of scripts/test.sh runs Python; slim images of Debian with Rust have none.
# Its validators come from PyPI (scripts/check-schema.sh), in a virtual environment if need be.
command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
if ! have_libclang; then
  echo "setup: libclang is still missing after installing libclang-dev; set LIBCLANG_PATH" >&2
  exit 1
fi
command -v cargo >/dev/null 2>&1 || { echo "setup: cargo not found; install Rust (rustup) first" >&2; exit 1; }
echo "setup: building (the first build compiles HiGHS, about 4 minutes on 2 cores)" >&2
cargo build --release --quiet
