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

# Every tool the build and the tests invoke (cmake/*.cmake, tests/*), with the Debian package
# that brings it: a package that installed without one of them (or a list that lacks one) is
# named here rather than deep inside the build.
problems=()
need() {  # PACKAGE COMMAND...
  local package=$1 command
  shift
  for command; do
    command -v "$command" >/dev/null 2>&1 || [[ -x /usr/sbin/$command ]] ||
      problems+=("$command (Debian package $package)")
  done
}
need cmake cmake
need ninja-build ninja
need pkgconf pkg-config
need clang-22 clang-22 clang++-22
need lld-22 ld.lld-22
need llvm-22 llvm-objdump-22 llvm-readelf-22 llvm-strip-22 llvm-nm-22 llvm-objcopy-22
need binutils nm
need python3 python3
need hwloc lstopo hwloc-calc
need munge munged
need slurmctld slurmctld
need slurmd slurmd
need slurm-client srun sinfo
need libsvm-tools svm-train svm-predict
need openmpi-bin mpirun
need hipcc hipcc
need rocminfo rocminfo
if command -v clang-22 >/dev/null 2>&1; then
  # clang-22 spawns the bundler for HIP fat binaries from its own directory, not from PATH.
  bundler=$(clang-22 -print-prog-name=clang-offload-bundler)
  [[ -x $bundler ]] || problems+=("clang-offload-bundler as clang-22 finds it, $bundler (Debian package clang-tools-22)")
  runtime_dir=$(clang-22 --print-runtime-dir)
  for runtime in libclang_rt.fuzzer-x86_64.a libclang_rt.asan-x86_64.a libclang_rt.ubsan_standalone-x86_64.a; do
    [[ -f $runtime_dir/$runtime ]] ||
      problems+=("$runtime_dir/$runtime, for the fuzz targets and sanitizers (Debian package libclang-rt-22-dev)")
  done
fi
[[ -f /usr/include/hsa/hsa.h ]] || problems+=("/usr/include/hsa/hsa.h (Debian package libhsa-runtime-dev)")
if ((${#problems[@]})); then
  echo "wavekit setup: missing after the install from scripts/packages.txt:" >&2
  printf '  %s\n' "${problems[@]}" >&2
  exit 1
fi

jobs=${WAVEKIT_JOBS:-$(nproc)}
if [[ ! -f build/build.ninja ]]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 >/dev/null
fi
echo "wavekit setup: building (${jobs} jobs)"
cmake --build build -j "$jobs"
