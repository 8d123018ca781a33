# Strict warnings for the project's own targets; third-party headers are SYSTEM includes.
option(RW_WERROR "Treat warnings as errors (CI sets this)" OFF)
function(rw_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wsign-conversion -Wnon-virtual-dtor)
  if(RW_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
