# Helpers shared by the project's CMake files.
#
# Registration is by static objects next to each method, backend and impl. Those object files
# have no other symbol anyone references, so a static library would let the linker drop them.
# Methods and the CPU/Vulkan backends are therefore OBJECT libraries linked straight into each
# executable, and the CUDA backend is a shared library linked inside --no-as-needed (Debian's
# gcc passes --as-needed by default, which would drop a library nobody calls).

set_property(GLOBAL PROPERTY ATTNBENCH_OBJECT_LIBS "")
set_property(GLOBAL PROPERTY ATTNBENCH_SHARED_LIBS "")

# Registers an OBJECT library of self-registering code.
function(attnbench_add_registered_objects target)
  set_property(GLOBAL APPEND PROPERTY ATTNBENCH_OBJECT_LIBS ${target})
endfunction()

# Registers a shared library of self-registering code.
function(attnbench_add_registered_shared target)
  set_property(GLOBAL APPEND PROPERTY ATTNBENCH_SHARED_LIBS ${target})
endfunction()

# Links every registered method, backend and impl into an executable.
function(attnbench_link_registered target)
  get_property(objects GLOBAL PROPERTY ATTNBENCH_OBJECT_LIBS)
  get_property(shared GLOBAL PROPERTY ATTNBENCH_SHARED_LIBS)
  target_link_libraries(${target} PRIVATE ${objects})
  if(shared)
    target_link_libraries(${target} PRIVATE "-Wl,--push-state,--no-as-needed" ${shared} "-Wl,--pop-state")
  endif()
  # Shared backends resolve the registry from the executable.
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON BUILD_RPATH "$ORIGIN" INSTALL_RPATH "$ORIGIN")
endfunction()

# Harness and reference code generate inputs and draws: no fused multiply-adds, no fast-math, so
# every preset and compiler produces the same bits (docs/design.md "Layout").
set(ATTNBENCH_EXACT_FP_FLAGS -ffp-contract=off -fno-fast-math)

# The JSON library and the standard headers nearly every file includes, precompiled once per
# target: parsing them is about half of a small file's compile (1.5 s of 3 s at -O3), paid by
# every file of every build (release, ASan, TSan). C++ only (not nvcc). Files compiled with other
# -m options (the AVX-512 and AMX kernels) skip it (SKIP_PRECOMPILE_HEADERS): GCC would refuse it.
set(ATTNBENCH_COMMON_HEADERS <nlohmann/json.hpp> <algorithm> <cmath> <cstdint> <functional> <map> <memory> <optional>
                             <set> <string> <vector>)
# attnbench_unity(target): with ATTNBENCH_UNITY_HARNESS (the CI presets), the target's files are
# compiled in unity batches of 8: each batch parses the common headers and instantiates the JSON
# library's templates once instead of once per file (the reference library builds in a quarter of
# the time). Files that must stay alone (per-ISA translation units) set SKIP_UNITY_BUILD_INCLUSION.
function(attnbench_unity target)
  if(ATTNBENCH_UNITY_HARNESS)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endif()
endfunction()

function(attnbench_precompile target)
  set(headers "")
  foreach(h IN LISTS ATTNBENCH_COMMON_HEADERS ARGN)
    list(APPEND headers "$<$<COMPILE_LANGUAGE:CXX>:${h}>")
  endforeach()
  target_precompile_headers(${target} PRIVATE ${headers})
endfunction()
