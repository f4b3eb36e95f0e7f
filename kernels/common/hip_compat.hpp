// The one place where the three compilers differ.
//
// Kernels are HIP C++. hipcc compiles them with the real HIP runtime; nvcc compiles them with
// the few HIP runtime names poolgrad uses mapped onto CUDA below (Debian's HIP 5.2 NVIDIA
// headers do not compile against CUDA 13, see docs/layout.md); g++ compiles the same headers for the
// CPU backend, where the kernel qualifiers are empty and no runtime exists.
#pragma once

#if defined(__HIPCC__) || defined(__HIP__)
#include <hip/hip_runtime.h>
#define PG_GPU_COMPILER 1
#elif defined(__CUDACC__)
#include <cuda_runtime.h>
#define PG_GPU_COMPILER 1
#define hipError_t cudaError_t
#define hipSuccess cudaSuccess
#define hipGetErrorString cudaGetErrorString
#define hipGetLastError cudaGetLastError
#define hipGetDeviceCount cudaGetDeviceCount
#define hipSetDevice cudaSetDevice
#define hipDeviceProp_t cudaDeviceProp
#define hipGetDeviceProperties cudaGetDeviceProperties
#define hipDeviceSynchronize cudaDeviceSynchronize
#define hipMalloc cudaMalloc
#define hipFree cudaFree
#define hipMemcpy cudaMemcpy
#define hipMemcpyAsync cudaMemcpyAsync
#define hipMemcpyHostToDevice cudaMemcpyHostToDevice
#define hipMemcpyDeviceToHost cudaMemcpyDeviceToHost
#define hipMemcpyDeviceToDevice cudaMemcpyDeviceToDevice
#define hipMemset cudaMemset
#define hipMemsetAsync cudaMemsetAsync
#define hipStream_t cudaStream_t
#define hipStreamCreate cudaStreamCreate
#define hipStreamDestroy cudaStreamDestroy
#define hipStreamSynchronize cudaStreamSynchronize
#define hipHostMalloc cudaHostAlloc
#define hipHostMallocDefault cudaHostAllocDefault
#define hipHostFree cudaFreeHost
#define hipEvent_t cudaEvent_t
#define hipEventCreate cudaEventCreate
#define hipEventDestroy cudaEventDestroy
#define hipEventRecord cudaEventRecord
#define hipEventSynchronize cudaEventSynchronize
#define hipEventElapsedTime cudaEventElapsedTime
#define hipMemGetInfo cudaMemGetInfo
#define hipDeviceGetAttribute cudaDeviceGetAttribute
#define hipDeviceAttributeMultiprocessorCount cudaDevAttrMultiProcessorCount
#define hipRuntimeGetVersion cudaRuntimeGetVersion
#define hipGraph_t cudaGraph_t
#define hipGraphExec_t cudaGraphExec_t
#define hipStreamBeginCapture cudaStreamBeginCapture
#define hipStreamEndCapture cudaStreamEndCapture
#define hipStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define hipGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define hipGraphLaunch cudaGraphLaunch
#define hipGraphExecDestroy cudaGraphExecDestroy
#define hipGraphDestroy cudaGraphDestroy
#else
#define __host__
#define __device__
#define __forceinline__ inline
#define PG_GPU_COMPILER 0
#endif

// True inside the device pass of nvcc or hipcc, where device intrinsics exist.
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
#define PG_DEVICE_PASS 1
#else
#define PG_DEVICE_PASS 0
#endif

#define PG_HD __host__ __device__ __forceinline__

// Launch bounds: at most `threads` per block and, on CUDA, registers capped so that `blocks`
// blocks fit on a multiprocessor (0: no cap). HIP's second argument means something else
// (minimum waves per execution unit), and the counts were tuned on NVIDIA, so hipcc gets the
// thread bound only.
#if defined(__HIPCC__) || defined(__HIP__)
#define PG_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads)
#elif defined(__CUDACC__)
#define PG_LAUNCH_BOUNDS(threads, blocks) __launch_bounds__(threads, blocks)
#else
#define PG_LAUNCH_BOUNDS(threads, blocks)
#endif
