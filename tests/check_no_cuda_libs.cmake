# `cmake -DBINARY=path -P check_no_cuda_libs.cmake`: fails when `ldd BINARY` lists a CUDA, cuDNN, NCCL,
# NVML or MPI library. trainplan must start on a machine without them (issue 9): only
# trainplan-calibrate-run, which `calibrate run` execs, may link them.
if(NOT BINARY OR NOT EXISTS "${BINARY}")
  message(FATAL_ERROR "no binary to check: '${BINARY}'")
endif()
execute_process(COMMAND ldd "${BINARY}" OUTPUT_VARIABLE libs ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "ldd ${BINARY} failed (${rc}): ${err}")
endif()
string(REGEX MATCHALL "lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|nvidia-ml|nvrtc|mpi[a-z_]*)\\.so[^ \t\n]*" found "${libs}")
list(REMOVE_DUPLICATES found)
if(found)
  message(FATAL_ERROR "${BINARY} links GPU/MPI libraries: ${found}\n${libs}")
endif()
message(STATUS "${BINARY}: no CUDA, cuDNN, NCCL, NVML or MPI library among\n${libs}")
