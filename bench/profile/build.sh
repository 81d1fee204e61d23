#!/bin/bash
# Builds the profiler's CUPTI library, its CUPTI-free events library, the CUPTI-floor
# library and the Python extension
# without the top-level CMake (which needs LLVM 22, absent on the GPU machine).
# usage: bench/profile/build.sh OUTDIR [DIR_HOLDING_nlohmann/]
# Put OUTDIR on PYTHONPATH for the wavekit_profile_native extension.
set -euo pipefail
out=${1:?usage: build.sh OUTDIR [NLOHMANN_INCLUDE_DIR]}
json_include=${2:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
cxx=${CXX:-g++}
cuda=${CUDA_HOME:-/usr/local/cuda}
header=$(find "$cuda"/ "$cuda"/extras -name cupti.h 2>/dev/null | head -1 || true)
[ -n "$header" ] || { echo "build.sh: cupti.h not found under $cuda" >&2; exit 1; }
cupti_include=$(dirname "$header")
library=$(find -L "$cuda"/ -name 'libcupti.so*' 2>/dev/null | head -1 || true)
[ -n "$library" ] || { echo "build.sh: libcupti.so not found under $cuda" >&2; exit 1; }
cupti_lib=$(dirname "$library")
flags=(-std=c++20 -O2 -g -fPIC -Wall -Wextra -Werror -pthread -fvisibility=hidden
       -I"$root/src/profile/include" -I"$root/src/profile/src" -I"$root/src/support/include"
       ${json_include:+-isystem "$json_include"}
       -isystem "$cupti_include" -isystem "$cuda/include")
link=(-L"$cupti_lib" -l:"$(basename "$library")" -Wl,-rpath,"$cupti_lib" -Wl,--exclude-libs,ALL)
"$cxx" "${flags[@]}" -shared -o "$out/libwavekit_profile_cupti.so" \
  "$root"/src/support/src/*.cpp "$root"/src/profile/src/*.cpp \
  "$root/src/profile/cupti/cupti_backend.cpp" "${link[@]}" &
profiler=$!
# The CUPTI-free backend: no libcupti.
"$cxx" "${flags[@]}" -shared -o "$out/libwavekit_profile_events.so" \
  "$root"/src/support/src/*.cpp "$root"/src/profile/src/*.cpp \
  "$root/src/profile/events/events_library.cpp" "$root/src/profile/events/launch_hooks.cpp" \
  -Wl,--exclude-libs,ALL -ldl &
events=$!
"$cxx" "${flags[@]}" -shared -o "$out/libcupti_floor.so" "$root/bench/profile/cupti_floor.cpp" \
  "${link[@]}" &
floor=$!
wait $profiler
wait $events
wait $floor
# The Python extension needs Python.h; without it the package falls back to ctypes.
pyinc=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
if [ -f "$pyinc/Python.h" ]; then
  ext=$(python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
  ${CC:-gcc} -O2 -fPIC -shared -Wall -Wextra -Werror -I"$pyinc" \
    -o "$out/wavekit_profile_native$ext" "$root/python/wavekit_profile/native.c" -ldl
  echo "build.sh: built the Python extension"
else
  echo "build.sh: no Python.h at $pyinc; the Python package uses ctypes"
fi
echo "build.sh: built $out/libwavekit_profile_cupti.so and $out/libcupti_floor.so ($library)"
