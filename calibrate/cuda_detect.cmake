# Included from the top-level CMakeLists.txt (enable_language must run in the directory common to every
# target that links CUDA code): decides whether the CUDA calibration kernels are built.
# TRAINPLAN_CUDA: AUTO (when a CUDA compiler and toolkit are found), ON (require them), OFF (never).
set(TRAINPLAN_CUDA AUTO CACHE STRING "Build the CUDA calibration kernels: AUTO, ON or OFF")
set_property(CACHE TRAINPLAN_CUDA PROPERTY STRINGS AUTO ON OFF)
set(TRAINPLAN_HAS_CUDA OFF)
if(NOT TRAINPLAN_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80;90")  # A100, H100
  endif()
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc AND NOT DEFINED ENV{CUDACXX})
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)  # the toolkit's usual prefix, not on PATH by default
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    find_package(CUDAToolkit)
    # The headers of model/ are C++20. CMake 3.25 does not know nvcc 12+'s C++20 flag: tell it.
    if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
      set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
      set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
    endif()
  endif()
  if(CMAKE_CUDA_COMPILER AND CUDAToolkit_FOUND AND TARGET CUDA::cublasLt)
    set(TRAINPLAN_HAS_CUDA ON)
  elseif(TRAINPLAN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "TRAINPLAN_CUDA=ON but no usable CUDA compiler and toolkit (with cuBLASLt) were found")
  else()
    message(STATUS "trainplan: no CUDA toolkit; the calibration kernels are not built")
  endif()
endif()
