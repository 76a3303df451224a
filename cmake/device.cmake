# Device backends: host is always built; cuda, hip and ze are each an option
# (ON, OFF, AUTO). A backend that is not built is replaced by its stub, so
# callers never #ifdef. Owned by the device-backend work (runner/device/).
file(GLOB RT_DEV_SRCS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/runner/device/*.c)
list(FILTER RT_DEV_SRCS EXCLUDE REGEX "/dev_(cuda|hip|ze)\\.c$")
if(NOT RT_DEV_SRCS)
  set(RT_DEV_SRCS ${CMAKE_SOURCE_DIR}/cmake/empty.c)
endif()
add_library(rt_dev STATIC ${RT_DEV_SRCS})
target_link_libraries(rt_dev PUBLIC rt_util ${CMAKE_DL_LIBS})
