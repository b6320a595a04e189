# Cross-compiling vox for 64-bit Arm Linux with Debian's cross toolchain (gcc-aarch64-linux-gnu,
# libc6-dev-arm64-cross): cmake -S . -B build/aarch64 -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake
# The programs run under user-mode emulation (qemu-user: qemu-aarch64 -L /usr/aarch64-linux-gnu);
# CTest prefixes every test with CMAKE_CROSSCOMPILING_EMULATOR (scripts/test-aarch64.sh).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(VOX_AARCH64_PREFIX "aarch64-linux-gnu-" CACHE STRING "prefix of the cross tools")
set(CMAKE_C_COMPILER ${VOX_AARCH64_PREFIX}gcc)
set(VOX_AARCH64_SYSROOT "/usr/aarch64-linux-gnu" CACHE PATH "the target's libraries (qemu -L)")

set(CMAKE_FIND_ROOT_PATH ${VOX_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)

find_program(VOX_QEMU_AARCH64 qemu-aarch64)
if(VOX_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${VOX_QEMU_AARCH64} -L ${VOX_AARCH64_SYSROOT})
endif()
