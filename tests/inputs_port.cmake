# The Python port of attnbench's input generator (ci/anchors/attnbench_inputs.py, used by the torch
# anchors on the GPU machine) must reproduce attnbench's inputs bit for bit: the hashes of the
# tiny cases of tests/data/inputs_port.json, and its numpy path against its scalar path.
execute_process(COMMAND ${EXE} check ${SOURCE_DIR}/tests/data/inputs_port.json --backends cpu --quiet
                        --out ${OUT} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "attnbench check tests/data/inputs_port.json exited ${rc}")
endif()
foreach(mode --verify --check-vectorised)
  set(args ${mode})
  if(mode STREQUAL "--verify")
    list(APPEND args ${OUT})
  endif()
  execute_process(COMMAND /usr/bin/python3 ${SOURCE_DIR}/ci/anchors/attnbench_inputs.py ${args} RESULT_VARIABLE rc)
  if(rc EQUAL 77)
    message("attnbench_inputs.py ${mode}: numpy missing, not checked")
  elseif(NOT rc EQUAL 0)
    message(FATAL_ERROR "attnbench_inputs.py ${mode} exited ${rc}")
  endif()
endforeach()
