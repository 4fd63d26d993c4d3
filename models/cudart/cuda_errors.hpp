// The CUDA runtime's error codes (cudaError_t), with the names and messages the real runtime
// gives them (cuda_errors.inc, generated from the toolkit's libcudart by regen_errors.sh).
#pragma once

namespace gpusc::cudart {

// The codes gpusc's runtime returns (values of CUDA's cudaError_t).
enum CudaError : int {
  kSuccess = 0,
  kErrorInvalidValue = 1,
  kErrorMemoryAllocation = 2,
  kErrorInitializationError = 3,
  kErrorInvalidConfiguration = 9,
  kErrorInvalidPitchValue = 12,
  kErrorInvalidSymbol = 13,
  kErrorInvalidDevicePointer = 17,
  kErrorInvalidMemcpyDirection = 21,
  kErrorInvalidDeviceFunction = 98,
  kErrorNoDevice = 100,
  kErrorInvalidDevice = 101,
  kErrorInvalidKernelImage = 200,
  kErrorNoKernelImageForDevice = 209,
  kErrorUnsupportedLimit = 215,
  kErrorInvalidPtx = 218,
  kErrorFileNotFound = 301,
  kErrorInvalidResourceHandle = 400,
  kErrorIllegalState = 401,
  kErrorSymbolNotFound = 500,
  kErrorNotReady = 600,
  kErrorIllegalAddress = 700,
  kErrorLaunchOutOfResources = 701,
  kErrorLaunchTimeout = 702,
  kErrorAssert = 710,
  kErrorHostMemoryAlreadyRegistered = 712,
  kErrorHostMemoryNotRegistered = 713,
  kErrorIllegalInstruction = 715,
  kErrorMisalignedAddress = 716,
  kErrorLaunchFailure = 719,
  kErrorCooperativeLaunchTooLarge = 720,
  kErrorNotSupported = 801,
  kErrorStreamCaptureUnsupported = 900,
  kErrorStreamCaptureInvalidated = 901,
  kErrorStreamCaptureUnmatched = 903,
  kErrorStreamCaptureUnjoined = 904,
  kErrorCapturedEvent = 907,
  kErrorUnknown = 999,
};

// cudaMemcpyKind.
enum MemcpyKind : int {
  kHostToHost = 0,
  kHostToDevice = 1,
  kDeviceToHost = 2,
  kDeviceToDevice = 3,
  kDefault = 4
};

// A kernel fault's code: the context is lost, as on a GPU, and every later call returns it.
inline bool isStickyError(int code) {
  switch (code) {
    case kErrorIllegalAddress:
    case kErrorMisalignedAddress:
    case kErrorLaunchFailure:
    case kErrorLaunchTimeout:
    case kErrorIllegalInstruction:
    case kErrorAssert:
      return true;
    default:
      return false;
  }
}

// The sides of a cudaMemcpy of `kind` that are device memory (for cudaMemcpyDefault, the sides
// whose pointers lie in device allocations). False when `kind` is not a cudaMemcpyKind.
inline bool memcpySides(int kind, bool dstIsDevice, bool srcIsDevice, bool* toDevice,
                        bool* fromDevice) {
  *toDevice = kind == kHostToDevice || kind == kDeviceToDevice || (kind == kDefault && dstIsDevice);
  *fromDevice =
      kind == kDeviceToHost || kind == kDeviceToDevice || (kind == kDefault && srcIsDevice);
  return kind >= kHostToHost && kind <= kDefault;
}

// cudaGetErrorName and cudaGetErrorString: as the toolkit's runtime answers, including for a code
// it does not know ("unrecognized error code").
const char* errorName(int code);
const char* errorString(int code);

}  // namespace gpusc::cudart
