# RW_SANITIZE=ON builds everything with ASan + UBSan; CI runs the whole test suite that way.
option(RW_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
if(RW_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
endif()
