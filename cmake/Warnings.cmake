# Strict warnings for the project's own targets; third-party headers are SYSTEM includes.
option(RW_WERROR "Treat warnings as errors (CI sets this)" OFF)
function(rw_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wsign-conversion -Wnon-virtual-dtor)
  if(RW_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
    # GCC 12 at -O3 (Release) reports -Wrestrict inside libstdc++ for `"'" + std::string(v)`, a
    # known false positive of that release (GCC bug 105651): kept a warning, not an error.
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -Wno-error=restrict)
    endif()
  endif()
endfunction()
