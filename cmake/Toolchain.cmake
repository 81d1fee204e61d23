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
find_program(WAVEKIT_CLANG_OFFLOAD_BUNDLER NAMES clang-offload-bundler-22 clang-offload-bundler HINTS ${LLVM_TOOLS_BINARY_DIR})

function(wavekit_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra)
  if(WAVEKIT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
