# Runs `attnbench check SUITE --backends BACKEND [--backend-opt OPTS]`. A backend that is not
# compiled in, or exit code 3 (compiled in but unavailable here), is a skip: the script prints
# "attnbench-skip: <why>", which the test's SKIP_REGULAR_EXPRESSION turns into a CTest skip
# (cmake_language(EXIT) needs CMake 3.29; Debian 12 has 3.25).
#   cmake -DEXE=... -DBACKEND=vulkan -DSUITE=suites/ci.json [-DOPTS=vulkan.splits=3] -P check_suite.cmake
execute_process(COMMAND ${EXE} env OUTPUT_VARIABLE env_json RESULT_VARIABLE rc)
string(JSON has_backend ERROR_VARIABLE err GET "${env_json}" ${BACKEND})
if(err)
  message("attnbench-skip: backend ${BACKEND} is not compiled into this build")
  return()
endif()
set(extra "")
if(OPTS)
  set(extra --backend-opt ${OPTS})
endif()
execute_process(COMMAND ${EXE} check ${SUITE} --backends ${BACKEND} --quiet ${extra} RESULT_VARIABLE rc)
if(rc EQUAL 3)
  message("attnbench-skip: backend ${BACKEND} is unavailable here")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "attnbench check ${SUITE} --backends ${BACKEND} ${extra} exited ${rc}")
endif()
