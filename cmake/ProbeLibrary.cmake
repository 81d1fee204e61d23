# wavekit_add_probe_library(NAME <name> SOURCES <file.hip>... TARGET <gfx908|gfx90a|gfx942>
#                           [OPT -O2] [COV 5] [EXTRA_FLAGS ...] [OUTPUT_DIR dir] [OUTPUT_VAR var])
# Builds a probe library: HIP-dialect device C++ (with the probe SDK, wavekit/probe/probe.h)
# compiled by clang-22 alone into relocatable code (-fgpu-rdc keeps the probes global; a plain
# HIP device link would internalise them), linked by ld.lld-22 -shared, then post-processed by
# `wavekit probe-lib`: an STT_OBJECT alias per probe and the footprint note
# (src/rewrite/include/wavekit/rewrite/probe_library.h). The result is <name>.co.
# In the build tree the CLI is the wavekit target and the SDK headers are the sources'; the
# installed package (wavekitConfig.cmake) sets WAVEKIT_CLI (wavekit::wavekit) and
# WAVEKIT_PROBE_SDK_HEADERS (the installed headers) instead.
function(wavekit_add_probe_library)
  wavekit_parse_device_code_arguments("" "SOURCES" ${ARGN})
  if(WAVEKIT_CLI)
    set(cli ${WAVEKIT_CLI})
    set(cli_dependency $<TARGET_FILE:${WAVEKIT_CLI}>)
  else()
    set(cli wavekit)
    set(cli_dependency wavekit)
  endif()
  if(DEFINED WAVEKIT_PROBE_SDK_HEADERS)
    set(sdk_headers ${WAVEKIT_PROBE_SDK_HEADERS})
  else()
    set(sdk_headers ${PROJECT_SOURCE_DIR}/src/rewrite/sdk/include/wavekit/probe/probe.h
                    ${PROJECT_SOURCE_DIR}/src/rewrite/sdk/include/wavekit/probe/capture.h
                    ${PROJECT_SOURCE_DIR}/src/rewrite/sdk/include/wavekit/probe/hostcall.h
                    ${PROJECT_SOURCE_DIR}/src/hostcall/include/wavekit/hostcall/protocol.h)
  endif()
  set(dir ${ARG_OUTPUT_DIR}/${ARG_NAME}.parts)
  file(MAKE_DIRECTORY ${dir})
  set(objects "")
  foreach(source IN LISTS ARG_SOURCES)
    get_filename_component(src ${source} ABSOLUTE)
    get_filename_component(stem ${source} NAME_WE)
    add_custom_command(
      OUTPUT ${dir}/${stem}.o
      COMMAND ${WAVEKIT_CLANG} ${WAVEKIT_DEVICE_FLAGS} -fgpu-rdc -c --offload-arch=${ARG_TARGET}
              ${ARG_OPT} -mcode-object-version=${ARG_COV} ${ARG_EXTRA_FLAGS}
              -o ${dir}/${stem}.bc ${src}
      COMMAND ${WAVEKIT_CLANG} -target amdgcn-amd-amdhsa -mcpu=${ARG_TARGET} -nogpulib ${ARG_OPT}
              -c -o ${dir}/${stem}.o ${dir}/${stem}.bc
      DEPENDS ${src} ${sdk_headers}
      COMMENT "probe library ${ARG_NAME}: ${stem} (${ARG_TARGET} ${ARG_OPT} COV${ARG_COV})"
      VERBATIM)
    list(APPEND objects ${dir}/${stem}.o)
  endforeach()
  set(out ${ARG_OUTPUT_DIR}/${ARG_NAME}.co)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${WAVEKIT_LLD} -shared -o ${dir}/${ARG_NAME}.linked.co ${objects}
    COMMAND $<TARGET_FILE:${cli}> probe-lib ${dir}/${ARG_NAME}.linked.co --output ${out}
    DEPENDS ${objects} ${cli_dependency}
    COMMENT "probe library ${ARG_NAME}: link and post-process"
    VERBATIM)
  add_custom_target(${ARG_NAME} DEPENDS ${out})
  if(ARG_OUTPUT_VAR)
    set(${ARG_OUTPUT_VAR} ${out} PARENT_SCOPE)
  endif()
endfunction()
