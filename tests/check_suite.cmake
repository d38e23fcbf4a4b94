# Runs `attnbench check SUITE --backends BACKEND`, mapping exit code 3 (backend compiled in but
# unavailable here) to 77, CTest's skip code. Not compiled in at all is also a skip.
execute_process(COMMAND ${EXE} env OUTPUT_VARIABLE env_json RESULT_VARIABLE rc)
string(JSON has_backend ERROR_VARIABLE err GET "${env_json}" ${BACKEND})
if(err)
  message("backend ${BACKEND} is not compiled into this build")
  cmake_language(EXIT 77)
endif()
execute_process(COMMAND ${EXE} check ${SUITE} --backends ${BACKEND} --quiet RESULT_VARIABLE rc)
if(rc EQUAL 3)
  cmake_language(EXIT 77)
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "attnbench check ${SUITE} --backends ${BACKEND} exited ${rc}")
endif()
