#!/usr/bin/env bash
# Installs what wavekit needs from Debian's packages (only what is missing) and builds it
# into ./build. Safe to run again: it does only the work that is left.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
while read -r package; do
  [[ -z "$package" || "$package" == \#* ]] && continue
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$package")
done < scripts/packages.txt

if ((${#missing[@]})); then
  echo "wavekit setup: installing ${missing[*]}"
  sudo_cmd=()
  [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

jobs=${WAVEKIT_JOBS:-$(nproc)}
if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 >/dev/null
fi
echo "wavekit setup: building (${jobs} jobs)"
cmake --build build -j "$jobs"
