# cmake -P add_object_alias.cmake -DREADELF= -DOBJCOPY= -DINPUT= -DOUTPUT= -DFUNCTION= -DALIAS=
# Adds an STT_OBJECT GLOBAL symbol ALIAS at FUNCTION's address (section-relative to .text),
# the provider half of the cross-object call recipe (amdgpu-codeobject.md §9).
execute_process(COMMAND ${READELF} --wide -S -s ${INPUT} OUTPUT_VARIABLE listing RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${READELF} failed on ${INPUT}")
endif()
if(NOT listing MATCHES "\\.text +PROGBITS +([0-9a-f]+)")
  message(FATAL_ERROR "${INPUT}: no .text section")
endif()
set(text_address ${CMAKE_MATCH_1})
if(NOT listing MATCHES "([0-9a-f]+) +[0-9]+ FUNC +[A-Z]+ +[A-Z]+ +[0-9]+ ${FUNCTION}\n")
  message(FATAL_ERROR "${INPUT}: function ${FUNCTION} not found")
endif()
math(EXPR offset "0x${CMAKE_MATCH_1} - 0x${text_address}" OUTPUT_FORMAT HEXADECIMAL)
execute_process(COMMAND ${OBJCOPY} --add-symbol ${ALIAS}=.text:${offset},global,object ${INPUT} ${OUTPUT}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${OBJCOPY} failed")
endif()
