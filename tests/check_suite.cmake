# Runs `attnbench check SUITE --backends BACKEND`. Exit code 3 (backend compiled in but unavailable
# here) and a backend not compiled in are skips: the script prints a line starting with
# "attnbench-skip:", which the test's SKIP_REGULAR_EXPRESSION turns into a CTest skip
# (cmake_language(EXIT 77) would need CMake 3.29; Debian 12 has 3.25).
execute_process(COMMAND ${EXE} env OUTPUT_VARIABLE env_json RESULT_VARIABLE rc)
string(JSON has_backend ERROR_VARIABLE err GET "${env_json}" ${BACKEND})
if(err)
  message("attnbench-skip: backend ${BACKEND} is not compiled into this build")
  return()
endif()
execute_process(COMMAND ${EXE} check ${SUITE} --backends ${BACKEND} --quiet RESULT_VARIABLE rc)
if(rc EQUAL 3)
  message("attnbench-skip: backend ${BACKEND} is unavailable here")
  return()
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "attnbench check ${SUITE} --backends ${BACKEND} exited ${rc}")
endif()
