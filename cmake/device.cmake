# Device backends (runner/device/): host is always built; cuda, hip and ze are
# each an option RATCHET_CUDA / RATCHET_HIP / RATCHET_ZE = ON, OFF or AUTO.
# AUTO builds a backend when its header and library are found; ON fails the
# configure when they are not. A backend that is not built is replaced by its
# stub (dev_<name>_stub.c), which answers "<name>: not built", so callers
# never #ifdef. Built backends open their driver library with dlopen at run
# time, so the binary starts on machines without the driver; the library is
# still looked for at configure time, so AUTO means "this machine could run it".
#
# Sets RT_DEV_BUILT (list of backends built) and, when nvcc is found,
# RT_NVCC (used by experiments/cuda-*/build.cmake to build .cubin files).

# rt_dev_option(NAME VAR FOUND WHY): decide one backend; sets RT_DEV_<NAME>.
function(rt_dev_option name var found why)
  set(mode "${${var}}")
  string(TOUPPER "${mode}" mode)
  if(NOT mode MATCHES "^(ON|OFF|AUTO|TRUE|FALSE|YES|NO|1|0)$")
    message(FATAL_ERROR "${var}=${${var}}: must be ON, OFF or AUTO")
  endif()
  if(mode MATCHES "^(OFF|FALSE|NO|0)$")
    set(RT_DEV_${name} OFF PARENT_SCOPE)
    message(STATUS "ratchet: ${name} backend: off (${var}=OFF)")
  elseif(found)
    set(RT_DEV_${name} ON PARENT_SCOPE)
    message(STATUS "ratchet: ${name} backend: built")
  elseif(mode STREQUAL "AUTO")
    set(RT_DEV_${name} OFF PARENT_SCOPE)
    message(STATUS "ratchet: ${name} backend: stub (${why})")
  else()
    message(FATAL_ERROR "${var}=ON but ${why}")
  endif()
endfunction()

# CUDA: the Driver API header and libcuda (the toolkit's stub library counts).
set(RATCHET_CUDA_ROOT "/usr/local/cuda" CACHE PATH "CUDA toolkit root")
find_path(RT_CUDA_INCLUDE cuda.h HINTS ${RATCHET_CUDA_ROOT}/include ENV CUDA_PATH
          PATH_SUFFIXES include)
find_library(RT_CUDA_LIB NAMES cuda HINTS ${RATCHET_CUDA_ROOT}/lib64
             ${RATCHET_CUDA_ROOT}/lib64/stubs ${RATCHET_CUDA_ROOT}/targets/x86_64-linux/lib/stubs)
set(rt_found OFF)
if(RT_CUDA_INCLUDE AND RT_CUDA_LIB)
  set(rt_found ON)
endif()
rt_dev_option(CUDA RATCHET_CUDA ${rt_found} "cuda.h or libcuda not found (RATCHET_CUDA_ROOT=${RATCHET_CUDA_ROOT})")

# HIP: the runtime API header and libamdhip64 (Debian: libamdhip64-dev).
find_path(RT_HIP_INCLUDE hip/hip_runtime_api.h HINTS /opt/rocm/include ENV ROCM_PATH
          PATH_SUFFIXES include)
find_library(RT_HIP_LIB NAMES amdhip64 HINTS /opt/rocm/lib)
set(rt_found OFF)
if(RT_HIP_INCLUDE AND RT_HIP_LIB)
  set(rt_found ON)
endif()
rt_dev_option(HIP RATCHET_HIP ${rt_found} "hip/hip_runtime_api.h or libamdhip64 not found (Debian: libamdhip64-dev)")

# Level Zero: ze_api.h and libze_loader (Debian: libze-dev).
find_path(RT_ZE_INCLUDE ze_api.h PATH_SUFFIXES level_zero)
find_library(RT_ZE_LIB NAMES ze_loader)
set(rt_found OFF)
if(RT_ZE_INCLUDE AND RT_ZE_LIB)
  set(rt_found ON)
endif()
rt_dev_option(ZE RATCHET_ZE ${rt_found} "ze_api.h or libze_loader not found (Debian: libze-dev)")

file(GLOB RT_DEV_SRCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/runner/device/*.c)
list(FILTER RT_DEV_SRCS EXCLUDE REGEX "/dev_(cuda|hip|ze)(_stub)?\\.c$")
set(RT_DEV_BUILT host)
foreach(b CUDA HIP ZE)
  string(TOLOWER ${b} lb)
  if(RT_DEV_${b})
    list(APPEND RT_DEV_SRCS ${CMAKE_SOURCE_DIR}/runner/device/dev_${lb}.c)
    list(APPEND RT_DEV_BUILT ${lb})
  else()
    list(APPEND RT_DEV_SRCS ${CMAKE_SOURCE_DIR}/runner/device/dev_${lb}_stub.c)
  endif()
endforeach()
add_library(rt_dev STATIC ${RT_DEV_SRCS})
target_link_libraries(rt_dev PUBLIC rt_base ${CMAKE_DL_LIBS} Threads::Threads m)
if(RT_DEV_CUDA)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/runner/device/dev_cuda.c PROPERTIES
    INCLUDE_DIRECTORIES "${RT_CUDA_INCLUDE}")
endif()
if(RT_DEV_HIP)
  # HIP's headers pick a platform from this macro; ratchet uses AMD's.
  set_source_files_properties(${CMAKE_SOURCE_DIR}/runner/device/dev_hip.c PROPERTIES
    INCLUDE_DIRECTORIES "${RT_HIP_INCLUDE}" COMPILE_DEFINITIONS "__HIP_PLATFORM_AMD__")
endif()
if(RT_DEV_ZE)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/runner/device/dev_ze.c PROPERTIES
    INCLUDE_DIRECTORIES "${RT_ZE_INCLUDE}")
endif()
# NVML is dlopen'ed, built or not; where the toolkit has nvml.h, dev_nvml.c
# checks its own constants and layouts against it.
find_path(RT_NVML_INCLUDE nvml.h HINTS ${RATCHET_CUDA_ROOT}/include ENV CUDA_PATH
          PATH_SUFFIXES include)
if(RT_NVML_INCLUDE)
  set_source_files_properties(${CMAKE_SOURCE_DIR}/runner/device/dev_nvml.c PROPERTIES
    INCLUDE_DIRECTORIES "${RT_NVML_INCLUDE}")
endif()
message(STATUS "ratchet: device backends built: ${RT_DEV_BUILT}")

# nvcc, for experiments that build .cubin files at build time (optional).
find_program(RT_NVCC nvcc HINTS ${RATCHET_CUDA_ROOT}/bin)
