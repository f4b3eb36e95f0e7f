// cuDNN's pooling backward as a vendor variant family (CUDA builds): cudnn.max.deterministic,
// cudnn.avg.include-pad and cudnn.avg.exclude-pad, checked, fuzzed and timed beside poolgrad's own.
//
// Built against /usr/local/cuda's cudnn.h, but libcudnn is opened at run time: a binary built
// here runs on a GPU machine that has cuDNN in LD_LIBRARY_PATH, at $POOLGRAD_CUDNN, or inside
// PyTorch's wheel, and on one without it (the family is then absent, and `poolgrad variants`
// says why). The legacy API (cudnnPoolingForward/Backward with an Nd pooling descriptor) is the
// one cuDNN 9 still ships for pooling; it is deprecated, hence -Wno-deprecated-declarations.
//
// What cuDNN can express (semantics.md): 2D and 3D (1D as 2D with H = 1), symmetric padding,
// no dilation, floor output sizes, int dimensions; max ignores NaN and routes a window's
// gradient to its first maximum (the cudnn profile); average divides by the whole window
// (COUNT_INCLUDE_PADDING, which on floor sizes is PyTorch's count_include_pad too) or by the
// taps inside the input (COUNT_EXCLUDE_PADDING), with no divisor_override.
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <dlfcn.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <type_traits>
#include <vector>

#include "src/harness/registry.hpp"

namespace pg {
namespace {

// The entry points used, looked up in the library opened.
struct Cudnn {
  decltype(&cudnnGetVersion) GetVersion;
  decltype(&cudnnGetErrorString) GetErrorString;
  decltype(&cudnnCreate) Create;
  decltype(&cudnnSetStream) SetStream;
  decltype(&cudnnCreateTensorDescriptor) CreateTensorDescriptor;
  decltype(&cudnnSetTensorNdDescriptor) SetTensorNdDescriptor;
  decltype(&cudnnDestroyTensorDescriptor) DestroyTensorDescriptor;
  decltype(&cudnnCreatePoolingDescriptor) CreatePoolingDescriptor;
  decltype(&cudnnSetPoolingNdDescriptor) SetPoolingNdDescriptor;
  decltype(&cudnnDestroyPoolingDescriptor) DestroyPoolingDescriptor;
  decltype(&cudnnPoolingForward) PoolingForward;
  decltype(&cudnnPoolingBackward) PoolingBackward;
};

// PyTorch's package directory, found without importing torch (which takes seconds); "" if none.
std::string torch_dir() {
  FILE* pipe = popen("python3 -c 'import importlib.util, os; s = importlib.util.find_spec(\"torch\"); "
                     "print(os.path.dirname(s.origin) if s else \"\")' 2>/dev/null", "r");
  if (!pipe) return "";
  char line[4096] = {};
  const bool got = std::fgets(line, sizeof line, pipe) != nullptr;
  pclose(pipe);
  std::string dir = got ? line : "";
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == '\r')) dir.pop_back();
  return dir;
}

// The first library that opens: $POOLGRAD_CUDNN, the loader's search (LD_LIBRARY_PATH, the
// system), then PyTorch's copy (torch/lib, or the nvidia-cudnn wheel beside torch).
void* open_cudnn(std::string* tried) {
  const std::string soname = "libcudnn.so." + std::to_string(CUDNN_MAJOR);
  std::vector<std::string> candidates;
  if (const char* env = std::getenv("POOLGRAD_CUDNN")) candidates.push_back(env);
  candidates.push_back(soname);
  for (const std::string& c : candidates) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    *tried += (tried->empty() ? "" : ", ") + c;
  }
  const std::string torch = torch_dir();
  if (torch.empty()) {
    *tried += ", PyTorch (not installed for python3)";
    return nullptr;
  }
  for (const std::string& c : {torch + "/lib/" + soname, torch + "/../nvidia/cudnn/lib/" + soname}) {
    if (void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    *tried += ", " + c;
  }
  return nullptr;
}

// cuDNN, or nullptr with *why set. Opened once per process and never closed.
const Cudnn* cudnn(std::string* why) {
  static std::string absent;
  static const std::unique_ptr<Cudnn> api = [] {
    std::string tried;
    void* h = open_cudnn(&tried);
    if (!h) {
      absent = "libcudnn not found (tried " + tried + "; set POOLGRAD_CUDNN to its path)";
      return std::unique_ptr<Cudnn>();
    }
    auto api = std::make_unique<Cudnn>();
    bool all = true;
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn && all) absent = std::string("libcudnn has no ") + name;
      all = all && fn;
    };
    sym(api->GetVersion, "cudnnGetVersion");
    sym(api->GetErrorString, "cudnnGetErrorString");
    sym(api->Create, "cudnnCreate");
    sym(api->SetStream, "cudnnSetStream");
    sym(api->CreateTensorDescriptor, "cudnnCreateTensorDescriptor");
    sym(api->SetTensorNdDescriptor, "cudnnSetTensorNdDescriptor");
    sym(api->DestroyTensorDescriptor, "cudnnDestroyTensorDescriptor");
    sym(api->CreatePoolingDescriptor, "cudnnCreatePoolingDescriptor");
    sym(api->SetPoolingNdDescriptor, "cudnnSetPoolingNdDescriptor");
    sym(api->DestroyPoolingDescriptor, "cudnnDestroyPoolingDescriptor");
    sym(api->PoolingForward, "cudnnPoolingForward");
    sym(api->PoolingBackward, "cudnnPoolingBackward");
    if (!all) return std::unique_ptr<Cudnn>();
    const size_t version = api->GetVersion();
    if (version / 10000 != CUDNN_MAJOR) {
      absent = "libcudnn is version " + std::to_string(version) + ", poolgrad was built against cuDNN " +
               std::to_string(CUDNN_MAJOR);
      return std::unique_ptr<Cudnn>();
    }
    return api;
  }();
  if (!api) *why = absent;
  return api.get();
}

void check(const Cudnn& api, cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS) throw Error(std::string("cuDNN ") + what + ": " + api.GetErrorString(s));
}

// One handle per thread and device: a handle must not be used by two threads at once, and the
// fuzz runs cases on several. Kept until the process ends.
cudnnHandle_t handle(const Cudnn& api) {
  thread_local std::map<int, cudnnHandle_t> handles;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) throw Error("cuDNN: cudaGetDevice failed");
  cudnnHandle_t& h = handles[device];
  if (!h) check(api, api.Create(&h), "cudnnCreate");
  return h;
}

cudnnDataType_t data_type(DType t) {
  switch (t) {
    case DType::f16: return CUDNN_DATA_HALF;
    case DType::bf16: return CUDNN_DATA_BFLOAT16;
    case DType::f32: return CUDNN_DATA_FLOAT;
    case DType::f64: return CUDNN_DATA_DOUBLE;
  }
  throw Error("cuDNN: no data type for this dtype");
}

// The spatial axes cuDNN sees: D, H, W for a 3D problem; H, W otherwise (1D with H = 1).
int first_axis(const Problem& p) { return p.dims == 3 ? 0 : 1; }

// The descriptors of one problem, destroyed with it.
class Descriptors {
 public:
  Descriptors(const Cudnn& api, const Problem& p, cudnnPoolingMode_t mode) : api_(api) {
    check(api, api.CreateTensorDescriptor(&x_), "cudnnCreateTensorDescriptor");
    check(api, api.CreateTensorDescriptor(&y_), "cudnnCreateTensorDescriptor");
    check(api, api.CreatePoolingDescriptor(&pool_), "cudnnCreatePoolingDescriptor");
    set_tensor(x_, p, p.in);
    set_tensor(y_, p, p.out);
    int window[3], pad[3], stride[3], n = 0;
    for (int a = first_axis(p); a < kAxes; ++a, ++n) {
      window[n] = static_cast<int>(p.kernel[a]);
      pad[n] = static_cast<int>(p.pad_begin[a]);
      stride[n] = static_cast<int>(p.stride[a]);
    }
    check(api, api.SetPoolingNdDescriptor(pool_, mode, CUDNN_NOT_PROPAGATE_NAN, n, window, pad, stride),
          "cudnnSetPoolingNdDescriptor");
  }
  ~Descriptors() {
    api_.DestroyPoolingDescriptor(pool_);
    api_.DestroyTensorDescriptor(y_);
    api_.DestroyTensorDescriptor(x_);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;

  cudnnTensorDescriptor_t x() const { return x_; }
  cudnnTensorDescriptor_t y() const { return y_; }
  cudnnPoolingDescriptor_t pool() const { return pool_; }

 private:
  // N, C, spatial dims in that order, with the layout's strides (channels last: C contiguous).
  void set_tensor(cudnnTensorDescriptor_t t, const Problem& p, const int64_t* spatial) {
    int dims[5] = {static_cast<int>(p.n), static_cast<int>(p.c)}, strides[5];
    int n = 2;
    for (int a = first_axis(p); a < kAxes; ++a) dims[n++] = static_cast<int>(spatial[a]);
    const bool last = p.layout == Layout::channels_last;
    int64_t step = 1;
    if (last) {
      strides[1] = 1;
      step = p.c;
    }
    for (int i = n - 1; i >= 2; --i) {
      strides[i] = static_cast<int>(step);
      step *= dims[i];
    }
    if (!last) {
      strides[1] = static_cast<int>(step);
      step *= p.c;
    }
    strides[0] = static_cast<int>(step);
    check(api_, api_.SetTensorNdDescriptor(t, data_type(p.dtype), n, dims, strides), "cudnnSetTensorNdDescriptor");
  }

  const Cudnn& api_;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnPoolingDescriptor_t pool_ = nullptr;
};

void launch(Backend& be, const Problem& p, const BwdBuffers& b, cudnnPoolingMode_t mode) {
  if (p.n == 0) return;  // an empty batch: dx has no element (cuDNN refuses a dimension of 0)
  std::string why;
  const Cudnn* api = cudnn(&why);
  if (!api) throw Error("cuDNN: " + why);
  const Descriptors d(*api, p, mode);
  // Scaling factors are double for f64 data and float otherwise; beta = 0: dx is not read.
  const float one_f = 1, zero_f = 0;
  const double one_d = 1, zero_d = 0;
  const bool f64 = p.dtype == DType::f64;
  const void* one = f64 ? static_cast<const void*>(&one_d) : &one_f;
  const void* zero = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
  const cudnnHandle_t h = handle(*api);
  // On the backend's own stream, as poolgrad's kernels launch: ordered with its uploads and reads,
  // and captured with them into a graph when a benchmark times by replay (bench/timing.hpp).
  check(*api, api->SetStream(h, static_cast<cudaStream_t>(be.gpu_stream())), "cudnnSetStream");
  if (mode == CUDNN_POOLING_MAX_DETERMINISTIC) {
    // cuDNN finds each window's maximum again from x and the forward's y, computed here into
    // the workspace.
    check(*api, api->PoolingForward(h, d.pool(), one, d.x(), b.x, zero, d.y(), b.workspace), "cudnnPoolingForward");
    check(*api, api->PoolingBackward(h, d.pool(), one, d.y(), b.workspace, d.y(), b.dy, d.x(), b.x, zero, d.x(), b.dx),
          "cudnnPoolingBackward");
  } else {
    // Average pooling reads neither y nor x; the API takes them for max, so dy and dx stand in.
    check(*api, api->PoolingBackward(h, d.pool(), one, d.y(), b.dy, d.y(), b.dy, d.x(), b.dx, zero, d.x(), b.dx),
          "cudnnPoolingBackward");
  }
}

// What the domain cannot say: windows wholly in padding (cuDNN does not define their result)
// and sizes past int.
Support expressible(const Problem& p) {
  for (int a = 0; a < kAxes; ++a)
    if (p.pad_begin[a] >= p.kernel[a])
      return Support::no(std::string("padding: pad ") + std::to_string(p.pad_begin[a]) + " >= kernel " +
                         std::to_string(p.kernel[a]) + " along " + "DHW"[a] + " leaves windows wholly in padding");
  if (p.in_elems() > INT_MAX) return Support::no("size: cuDNN takes int32 dimensions and strides (x has more than 2^31 - 1 elements)");
  return Support::yes();
}

Variant family_member(const char* name, Op op, cudnnPoolingMode_t mode) {
  Variant v;
  v.name = name;
  v.op = op;
  v.inputs = op == Op::max ? Inputs::dy_and_x : Inputs::dy_only;
  v.deterministic = true;
  v.gpu_only = true;
  v.vendor = true;
  v.domain.pads_symmetric = true;
  v.domain.dilation = false;
  v.domain.ceil_mode = false;
  v.domain.ties = {TieRule::first};
  v.domain.nans = {NanRule::ignore};
  v.domain.divisor_override = false;
  v.domain.divisors = mode == CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING
                          ? std::vector<Divisor>{Divisor::exclude_pad}
                          : std::vector<Divisor>{Divisor::full_kernel, Divisor::include_pad};
  v.supports_problem = &expressible;
  v.workspace_bytes = [op](const Problem& p) {
    return op == Op::max ? static_cast<size_t>(p.out_elems()) * dtype_size(p.dtype) : size_t{0};
  };
  v.launch_gpu = [mode](Backend& be, const Problem& p, const BwdBuffers& b) { launch(be, p, b, mode); };
  return v;
}

}  // namespace

std::vector<Variant> cudnn_variants(std::string* why_absent) {
  std::string no_gpu;
  if (gpu_count(&no_gpu) == 0) {
    *why_absent = "no GPU (" + no_gpu + ")";
    return {};
  }
  if (!cudnn(why_absent)) return {};
  return {family_member("cudnn.max.deterministic", Op::max, CUDNN_POOLING_MAX_DETERMINISTIC),
          family_member("cudnn.avg.include-pad", Op::avg, CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING),
          family_member("cudnn.avg.exclude-pad", Op::avg, CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING)};
}

}  // namespace pg
