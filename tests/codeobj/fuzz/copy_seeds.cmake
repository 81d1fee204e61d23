# Fills the fuzzer's corpus directory with the test inputs (the fuzzer adds what it finds).
file(MAKE_DIRECTORY ${SEEDS})
foreach(input IN LISTS INPUTS)
  get_filename_component(name ${input} NAME)
  file(COPY_FILE ${input} ${SEEDS}/${name} ONLY_IF_DIFFERENT)
endforeach()
