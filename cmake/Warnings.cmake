# Strict warnings for the project's own targets; third-party headers are SYSTEM includes.
option(RW_WERROR "Treat warnings as errors (CI sets this, for the static image build too)" OFF)
function(rw_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow -Wconversion
                                           -Wsign-conversion -Wnon-virtual-dtor)
  # GCC 12 at -O3 (Release: the static image build) reports -Wrestrict inside libstdc++ wherever
  # a string literal is added to a temporary std::string (`"'" + std::string(v)`), a known false
  # positive of that release (GCC bug 105651) that moves with every inlining decision; the
  # warning is off there rather than printed on every build. -O2, GCC 13 and clang are unaffected.
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
    target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-Wno-restrict>)
  endif()
  if(RW_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()
