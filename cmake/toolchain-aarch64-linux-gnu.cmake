# Cross-compiling for linux/arm64 with Debian's cross toolchain (g++-aarch64-linux-gnu) and the
# arm64 -dev packages of Debian multiarch (dpkg --add-architecture arm64): scripts/build-arm64.sh.
# Those packages put their libraries and CMake files in /usr/lib/aarch64-linux-gnu and their
# arch-specific headers in /usr/include/aarch64-linux-gnu, beside the amd64 ones, so the library
# architecture is what keeps CMake from finding the build machine's amd64 libraries.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
# Only the arm64 directories: an amd64 archive found by a plain find_library would link into an
# arm64 binary and fail only at the link, with a message that names no package.
set(CMAKE_IGNORE_PATH /usr/lib/x86_64-linux-gnu /lib/x86_64-linux-gnu
                      /usr/include/x86_64-linux-gnu)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig")
