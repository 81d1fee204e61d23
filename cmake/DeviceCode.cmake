# wavekit_add_device_object(NAME <name> SOURCE <file.hip> TARGET <gfx908|gfx90a|gfx942>
#                           [OPT -O2] [COV 5] [EXTRA_FLAGS ...] [OUTPUT_VAR var])
# Compiles HIP-dialect device C++ to an AMDGPU code object with clang-22 alone: no ROCm
# installation, no device libraries, no HIP headers.
# The flags every device compilation shares (device objects here, probe libraries in
# ProbeLibrary.cmake): HIP dialect, device side only, a plain ELF, no ROCm, and the probe SDK and
# hostcall headers on the include path.
# (The installed package, wavekitConfig.cmake, sets WAVEKIT_DEVICE_INCLUDE_DIRS to the installed
# SDK before including this file.)
if(NOT DEFINED WAVEKIT_DEVICE_INCLUDE_DIRS)
  set(WAVEKIT_DEVICE_INCLUDE_DIRS ${PROJECT_SOURCE_DIR}/src/rewrite/sdk/include
                                  ${PROJECT_SOURCE_DIR}/src/hostcall/include)
endif()
set(WAVEKIT_DEVICE_FLAGS -x hip --offload-device-only --no-gpu-bundle-output -nogpulib -nogpuinc)
foreach(wavekit_device_include_dir IN LISTS WAVEKIT_DEVICE_INCLUDE_DIRS)
  list(APPEND WAVEKIT_DEVICE_FLAGS -I${wavekit_device_include_dir})
endforeach()

# The arguments every device-code function takes (NAME TARGET OPT COV OUTPUT_VAR OUTPUT_DIR
# EXTRA_FLAGS), plus the caller's own, parsed into ARG_* with the defaults OPT -O2, COV 5 and
# OUTPUT_DIR the current binary directory. A macro, so that ARG_* land in the calling function;
# the caller passes its ${ARGN} after its extra one-value and multi-value keywords.
macro(wavekit_parse_device_code_arguments one_value_keywords multi_value_keywords)
  set(wavekit_device_one_value NAME TARGET OPT COV OUTPUT_VAR OUTPUT_DIR ${one_value_keywords})
  set(wavekit_device_multi_value EXTRA_FLAGS ${multi_value_keywords})
  cmake_parse_arguments(ARG "" "${wavekit_device_one_value}" "${wavekit_device_multi_value}"
                        ${ARGN})
  if(NOT ARG_OPT)
    set(ARG_OPT -O2)
  endif()
  if(NOT ARG_COV)
    set(ARG_COV 5)
  endif()
  if(NOT ARG_OUTPUT_DIR)
    set(ARG_OUTPUT_DIR ${CMAKE_CURRENT_BINARY_DIR})
  endif()
endmacro()

function(wavekit_add_device_object)
  wavekit_parse_device_code_arguments("SOURCE" "DEPENDS" ${ARGN})
  set(out ${ARG_OUTPUT_DIR}/${ARG_NAME}.co)
  get_filename_component(src ${ARG_SOURCE} ABSOLUTE)
  # The headers the source can include (its own directory's, and those under each -I of the
  # caller's flags): clang's device-only compile-and-link writes no dependency file, so a
  # changed header would otherwise leave the object stale.
  get_filename_component(src_dir ${src} DIRECTORY)
  file(GLOB headers CONFIGURE_DEPENDS ${src_dir}/*.h)
  foreach(flag IN LISTS ARG_EXTRA_FLAGS)
    if(flag MATCHES "^-I(.+)$")
      file(GLOB_RECURSE included CONFIGURE_DEPENDS ${CMAKE_MATCH_1}/*.h)
      list(APPEND headers ${included})
    endif()
  endforeach()
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${WAVEKIT_CLANG} ${WAVEKIT_DEVICE_FLAGS} --offload-arch=${ARG_TARGET} ${ARG_OPT}
            -mcode-object-version=${ARG_COV} ${ARG_EXTRA_FLAGS} -o ${out} ${src}
    DEPENDS ${src} ${headers} ${ARG_DEPENDS}
    COMMENT "device code ${ARG_NAME} (${ARG_TARGET} ${ARG_OPT} COV${ARG_COV})"
    VERBATIM)
  if(ARG_OUTPUT_VAR)
    set(${ARG_OUTPUT_VAR} ${out} PARENT_SCOPE)
  endif()
endfunction()
