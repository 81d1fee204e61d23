# `cmake --install <build> --prefix P`: wavekit as a toolkit.
#
#   P/bin/wavekit                                 the CLI
#   P/<libdir>/wavekit/libwavekit-llvm-commands.so
#                                                 its subcommands that need LLVM (loaded on
#                                                 demand: the top CMakeLists.txt)
#   P/<libdir>/wavekit/libwavekit-tune-mpi.so     `wavekit tune --mpi`'s evaluator (loaded
#                                                 on demand: src/tune/src/mpi_module.h)
#   P/<libdir>/wavekit/libwavekit-preload.so      the preload shim (`wavekit run`)
#   P/<libdir>/wavekit/libwavekit-kfd.so          the emulated KFD (`wavekit run --device kfd`)
#   P/<libdir>/wavekit/emulator/libhsa-runtime64.so.1
#                                                 the emulator's HSA runtime (a directory of its
#                                                 own: LD_LIBRARY_PATH=<it> selects it alone)
#   P/<libdir>/wavekit/libwavekit_profile_*.so    the profiler's injected libraries (those built)
#   P/<libdir>/wavekit/probes/<tool>.<gfx>.co     the ready-made tools' probe libraries
#   P/<libdir>/wavekit/.wavekit-installation      marks the directory (src/support/src/install.cpp)
#   P/include/wavekit/probe/*.h, wavekit/hostcall/protocol.h
#                                                 the probe SDK (device headers)
#   P/include/wavekit/instrumentation.h           run-time control of `wavekit run`
#   P/<libdir>/cmake/wavekit/                     find_package(wavekit): wavekit::wavekit,
#                                                 wavekit::probe_sdk, wavekit::preload_shim,
#                                                 wavekit::hsa_runtime, wavekit::profile_*;
#                                                 wavekit_add_probe_library(),
#                                                 wavekit_add_device_object()
#
# The installed executable and libraries find each other through the marker, relative to
# themselves (wavekit::companion_path); a build tree has no marker and uses its own paths.
# Included at the end of the top CMakeLists, after every part: it installs what was configured.
include(CMakePackageConfigHelpers)

set(WAVEKIT_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/wavekit)

set(wavekit_exported wavekit)
install(TARGETS wavekit EXPORT wavekitTargets RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS wavekit_llvm_commands LIBRARY DESTINATION ${WAVEKIT_INSTALL_PKGLIBDIR})
if(TARGET wavekit_tune_mpi_module)
  install(TARGETS wavekit_tune_mpi_module LIBRARY DESTINATION ${WAVEKIT_INSTALL_PKGLIBDIR})
endif()
if(TARGET wavekit_model_observer)
  install(TARGETS wavekit_model_observer LIBRARY DESTINATION ${WAVEKIT_INSTALL_PKGLIBDIR})
endif()

# The probe SDK: device headers only, as an interface target.
add_library(wavekit_probe_sdk INTERFACE)
set_target_properties(wavekit_probe_sdk PROPERTIES EXPORT_NAME probe_sdk)
target_include_directories(wavekit_probe_sdk INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src/rewrite/sdk/include>
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/src/hostcall/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
install(TARGETS wavekit_probe_sdk EXPORT wavekitTargets)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/src/rewrite/sdk/include/wavekit/probe
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/wavekit FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_SOURCE_DIR}/src/hostcall/include/wavekit/hostcall/protocol.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/wavekit/hostcall)
# Run-time control of `wavekit run` for applications (a C header; links nothing).
install(FILES ${PROJECT_SOURCE_DIR}/src/preload/include/wavekit/instrumentation.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/wavekit)

# Runtime libraries, each where wavekit::companion_path looks for it.
foreach(library_and_name IN ITEMS wavekit_preload_shim:preload_shim
                                  wavekit_kfd_preload:kfd_preload
                                  wavekit_profile_hsa:profile_hsa
                                  wavekit_profile_cupti:profile_cupti
                                  wavekit_profile_events:profile_events)
  string(REPLACE ":" ";" library_and_name ${library_and_name})
  list(GET library_and_name 0 library)
  list(GET library_and_name 1 name)
  if(TARGET ${library})
    set_target_properties(${library} PROPERTIES EXPORT_NAME ${name})
    install(TARGETS ${library} EXPORT wavekitTargets
            LIBRARY DESTINATION ${WAVEKIT_INSTALL_PKGLIBDIR})
  endif()
endforeach()
if(TARGET wavekit_hsa_runtime)
  set_target_properties(wavekit_hsa_runtime PROPERTIES EXPORT_NAME hsa_runtime)
  install(TARGETS wavekit_hsa_runtime EXPORT wavekitTargets
          LIBRARY DESTINATION ${WAVEKIT_INSTALL_PKGLIBDIR}/emulator NAMELINK_SKIP)
endif()
if(TARGET wavekit_tool_probes)
  install(DIRECTORY ${CMAKE_BINARY_DIR}/probes/ DESTINATION ${WAVEKIT_INSTALL_PKGLIBDIR}/probes
          FILES_MATCHING PATTERN "*.co" PATTERN "*.parts" EXCLUDE)
endif()
file(WRITE ${CMAKE_BINARY_DIR}/wavekit-installation
     "wavekit ${PROJECT_VERSION}: this directory holds an installed wavekit's companion files\n")
install(FILES ${CMAKE_BINARY_DIR}/wavekit-installation DESTINATION ${WAVEKIT_INSTALL_PKGLIBDIR}
        RENAME .wavekit-installation)

# The CMake package.
install(EXPORT wavekitTargets NAMESPACE wavekit:: DESTINATION ${WAVEKIT_INSTALL_CMAKEDIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/wavekitConfig.cmake.in
  ${CMAKE_BINARY_DIR}/wavekitConfig.cmake INSTALL_DESTINATION ${WAVEKIT_INSTALL_CMAKEDIR}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR WAVEKIT_INSTALL_PKGLIBDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/wavekitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/wavekitConfig.cmake ${CMAKE_BINARY_DIR}/wavekitConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/DeviceCode.cmake ${PROJECT_SOURCE_DIR}/cmake/ProbeLibrary.cmake
        DESTINATION ${WAVEKIT_INSTALL_CMAKEDIR})

# The test: install to a temporary prefix, build a probe library with find_package(wavekit)
# and run the main job from the prefix.
if(WAVEKIT_BUILD_TESTS AND TARGET wavekit_preload_shim AND TARGET wavekit_hsa_runtime
   AND TARGET divergent AND TARGET wavekit_tool_probes)
  add_subdirectory(${PROJECT_SOURCE_DIR}/tests/install ${CMAKE_BINARY_DIR}/tests/install)
endif()
