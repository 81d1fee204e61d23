# LLVM 22 from Debian's llvm-22-dev: MC (decoding/encoding), Object, MsgPack, linked through the
# shared libLLVM so that every binary stays small and links fast.
find_package(LLVM REQUIRED CONFIG PATHS /usr/lib/llvm-22/lib/cmake/llvm NO_DEFAULT_PATH)
if(NOT LLVM_VERSION_MAJOR EQUAL 22)
  message(FATAL_ERROR "wavekit needs LLVM 22 (found ${LLVM_PACKAGE_VERSION}): run scripts/setup.sh")
endif()
message(STATUS "wavekit: LLVM ${LLVM_PACKAGE_VERSION} from ${LLVM_DIR}")

add_library(wavekit_llvm INTERFACE)
target_include_directories(wavekit_llvm SYSTEM INTERFACE ${LLVM_INCLUDE_DIRS})
separate_arguments(wavekit_llvm_definitions NATIVE_COMMAND "${LLVM_DEFINITIONS}")
target_compile_definitions(wavekit_llvm INTERFACE ${wavekit_llvm_definitions})
target_link_libraries(wavekit_llvm INTERFACE LLVM)

# Tools of the same LLVM release, used at build time (device code) and by tests as oracles.
find_program(WAVEKIT_CLANG NAMES clang-22 HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
find_program(WAVEKIT_LLD NAMES ld.lld-22 ld.lld HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
find_program(WAVEKIT_LLVM_OBJDUMP NAMES llvm-objdump-22 llvm-objdump HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
find_program(WAVEKIT_LLVM_READELF NAMES llvm-readelf-22 llvm-readelf HINTS ${LLVM_TOOLS_BINARY_DIR} REQUIRED)
# The bundler of LLVM 22's own directory, as clang-22 runs it: clang-offload-bundler looks for
# llvm-objcopy beside the path it was started by, and /usr/bin (where clang-offload-bundler-22
# is) has only llvm-objcopy-22 on a clean Debian 12 (an unversioned /usr/bin/llvm-objcopy comes
# from another LLVM's package, if any). A plain variable: it overrides an older cache entry.
find_program(WAVEKIT_CLANG_OFFLOAD_BUNDLER_IN_LLVM NAMES clang-offload-bundler
             HINTS ${LLVM_TOOLS_BINARY_DIR} NO_DEFAULT_PATH)
if(WAVEKIT_CLANG_OFFLOAD_BUNDLER_IN_LLVM)
  set(WAVEKIT_CLANG_OFFLOAD_BUNDLER ${WAVEKIT_CLANG_OFFLOAD_BUNDLER_IN_LLVM})
else()
  find_program(WAVEKIT_CLANG_OFFLOAD_BUNDLER NAMES clang-offload-bundler-22 clang-offload-bundler)
endif()

function(wavekit_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(WAVEKIT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# WAVEKIT_SANITIZE=address,undefined (any -fsanitize= list): everything host-side built and
# linked with those sanitizers; UB is fatal (-fno-sanitize-recover=undefined), so a test that
# hits it fails. Device code (clang-22 custom commands) is untouched. The runtime is clang's
# default, static, linked into each executable (which exports its interface); an instrumented
# shared library (the emulator's libhsa-runtime64.so.1) leaves its __asan_*/__ubsan_* references
# to the executable that loads it, so -Wl,--no-undefined is dropped for it in this configuration
# only (src/hsa/CMakeLists.txt). The shared runtime (-shared-libsan) would keep that check, but
# clang-22 puts libFuzzer's -lstdc++ before it on the link line, and the fuzz targets then stop
# with "ASan runtime does not come first in initial library list". A process that is not
# instrumented itself (a shell, python3) can load an instrumented library only with
# WAVEKIT_SANITIZER_RUNTIME (the shared runtime) first in LD_PRELOAD (docs/development.md).
set(WAVEKIT_SANITIZE "" CACHE STRING "Build with these sanitizers, e.g. address,undefined (empty: none)")
if(WAVEKIT_SANITIZE)
  execute_process(COMMAND ${CMAKE_CXX_COMPILER} --print-runtime-dir
                  OUTPUT_VARIABLE WAVEKIT_SANITIZER_RUNTIME_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
  set(WAVEKIT_SANITIZER_RUNTIME ${WAVEKIT_SANITIZER_RUNTIME_DIR}/libclang_rt.asan-x86_64.so)
  message(STATUS "wavekit: sanitizers ${WAVEKIT_SANITIZE}")
  add_compile_options(-fsanitize=${WAVEKIT_SANITIZE} -fno-sanitize-recover=undefined
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${WAVEKIT_SANITIZE})
endif()
