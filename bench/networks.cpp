// The `networks` suite: pooling layers of real networks, each named after its network and layer,
// at a training batch whose tensors are larger than an H100's 50 MiB L2 (so a row measures HBM
// traffic, as the baseline rows do). Window parameters are the frameworks' own (torchvision,
// timm, Ultralytics, PyTorchVideo, MONAI); channels-last, f16 and bf16 rows where those networks
// are trained that way. Every row goes through bench_problem(), the options path of
// `poolgrad bench --op ...`.
#include <optional>

#include "bench/bench_problem.hpp"
#include "bench/rows.hpp"

namespace pg::bench {
namespace {

struct Layer {
  const char* label;
  const char* op;
  std::vector<int64_t> size;  // N, C, spatial...
  std::vector<int64_t> kernel, stride, padding;
  std::vector<int64_t> dilation = {};
  bool ceil_mode = false;
  std::optional<bool> count_include_pad = {};  // avg only; unset: PyTorch's default (true)
  const char* layout = "NCHW";
  DType dtype = DType::f32;
};

Row network_row(const Layer& l) {
  PoolArgs a;
  a.op = l.op;
  a.kernel_size = l.kernel;
  a.stride = l.stride;
  a.padding = l.padding;
  a.dilation = l.dilation;
  a.ceil_mode = l.ceil_mode;
  a.count_include_pad = l.count_include_pad;
  a.layout = l.layout;
  return make_row(l.label, bench_problem(a, l.size, l.dtype));
}

}  // namespace

std::vector<Row> networks_rows() {
  const DType f16 = DType::f16, bf16 = DType::bf16;
  const std::vector<Layer> layers = {
      // Classification stems and stages (torchvision).
      {"resnet50 stem maxpool", "max_pool2d", {32, 64, 112, 112}, {3}, {2}, {1}},
      {"resnet50 stem maxpool", "max_pool2d", {32, 64, 112, 112}, {3}, {2}, {1}, {}, false, {}, "NHWC"},
      {"resnet50 stem maxpool", "max_pool2d", {32, 64, 112, 112}, {3}, {2}, {1}, {}, false, {}, "NCHW", f16},
      {"resnet50 stem maxpool", "max_pool2d", {32, 64, 112, 112}, {3}, {2}, {1}, {}, false, {}, "NHWC", bf16},
      {"resnet50 global avgpool", "avg_pool2d", {128, 2048, 7, 7}, {7}, {7}, {0}},
      {"resnet50 global avgpool", "avg_pool2d", {128, 2048, 7, 7}, {7}, {7}, {0}, {}, false, {}, "NHWC", f16},
      {"resnet-d shortcut avgpool", "avg_pool2d", {32, 256, 56, 56}, {2}, {2}, {0}, {}, true, false},
      {"resnet-d shortcut avgpool", "avg_pool2d", {32, 512, 28, 28}, {2}, {2}, {0}, {}, true, false, "NHWC", bf16},
      {"googlenet maxpool1", "max_pool2d", {32, 64, 112, 112}, {3}, {2}, {0}, {}, true},
      {"googlenet maxpool2", "max_pool2d", {32, 192, 56, 56}, {3}, {2}, {0}, {}, true},
      {"googlenet inception branch maxpool", "max_pool2d", {32, 480, 28, 28}, {3}, {1}, {1}, {}, true},
      {"inception-v3 maxpool1", "max_pool2d", {32, 64, 147, 147}, {3}, {2}, {0}},
      {"inception-v3 maxpool2", "max_pool2d", {32, 192, 71, 71}, {3}, {2}, {0}},
      {"inception-v3 Mixed_5b avgpool", "avg_pool2d", {32, 192, 35, 35}, {3}, {1}, {1}},
      {"inception-v3 Mixed_6b avgpool", "avg_pool2d", {32, 768, 17, 17}, {3}, {1}, {1}},
      {"inception-v3 tf-port Mixed_5b avgpool", "avg_pool2d", {32, 288, 35, 35}, {3}, {1}, {1}, {}, false, false},
      {"inception-v3 global avgpool", "avg_pool2d", {128, 2048, 8, 8}, {8}, {8}, {0}},
      {"alexnet maxpool1", "max_pool2d", {128, 64, 55, 55}, {3}, {2}, {0}},
      {"alexnet maxpool3", "max_pool2d", {128, 256, 13, 13}, {3}, {2}, {0}},
      {"vgg16 pool1", "max_pool2d", {32, 64, 224, 224}, {2}, {2}, {0}},
      {"vgg16 pool4", "max_pool2d", {32, 512, 28, 28}, {2}, {2}, {0}},
      {"vgg16 pool1", "max_pool2d", {32, 64, 224, 224}, {2}, {2}, {0}, {}, false, {}, "NHWC", f16},
      {"densenet121 transition avgpool", "avg_pool2d", {32, 128, 56, 56}, {2}, {2}, {0}},
      {"densenet121 transition avgpool", "avg_pool2d", {32, 256, 28, 28}, {2}, {2}, {0}, {}, false, {}, "NHWC", f16},
      {"squeezenet1.0 maxpool1", "max_pool2d", {64, 96, 109, 109}, {3}, {2}, {0}, {}, true},
      {"mobilenet-v2 global avgpool", "avg_pool2d", {128, 1280, 7, 7}, {7}, {7}, {0}},
      // Spatial pyramid pooling, stride 1 ('same' padding) at 608 and 640 px.
      {"yolov3-spp spp k5", "max_pool2d", {32, 512, 19, 19}, {5}, {1}, {2}},
      {"yolov3-spp spp k9", "max_pool2d", {32, 512, 19, 19}, {9}, {1}, {4}},
      {"yolov3-spp spp k13", "max_pool2d", {32, 512, 19, 19}, {13}, {1}, {6}},
      {"yolov5 sppf k5", "max_pool2d", {32, 256, 40, 40}, {5}, {1}, {2}},
      {"yolov5 sppf k5", "max_pool2d", {32, 512, 20, 20}, {5}, {1}, {2}, {}, false, {}, "NHWC", f16},
      // Video.
      {"c3d pool1", "max_pool3d", {8, 64, 16, 112, 112}, {1, 2, 2}, {1, 2, 2}, {0}},
      {"c3d pool2", "max_pool3d", {8, 128, 16, 56, 56}, {2}, {2}, {0}},
      {"i3d maxpool 1x3x3", "max_pool3d", {8, 64, 32, 112, 112}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}},
      {"i3d maxpool 3x3x3", "max_pool3d", {8, 480, 16, 28, 28}, {3}, {2}, {1}},
      {"i3d inception branch maxpool", "max_pool3d", {8, 192, 16, 28, 28}, {3}, {1}, {1}},
      {"r2plus1d global avgpool", "avg_pool3d", {16, 512, 4, 7, 7}, {4, 7, 7}, {4, 7, 7}, {0}},
      {"slowfast slow-path global avgpool", "avg_pool3d", {16, 2048, 8, 7, 7}, {8, 7, 7}, {8, 7, 7}, {0}, {}, false, {}, "NHWC", f16},
      {"x3d stem maxpool 1x3x3", "max_pool3d", {8, 24, 16, 112, 112}, {1, 3, 3}, {1, 2, 2}, {0, 1, 1}, {}, false, {}, "NHWC", bf16},
      // Medical volumes (3D U-Net, nnU-Net's anisotropic first stage).
      {"3d-unet down1 maxpool", "max_pool3d", {2, 32, 128, 128, 128}, {2}, {2}, {0}},
      {"3d-unet down2 maxpool", "max_pool3d", {2, 64, 64, 64, 64}, {2}, {2}, {0}},
      {"3d-unet down1 maxpool", "max_pool3d", {2, 32, 128, 128, 128}, {2}, {2}, {0}, {}, false, {}, "NHWC", f16},
      {"nnunet anisotropic maxpool 1x2x2", "max_pool3d", {2, 32, 32, 192, 192}, {1, 2, 2}, {1, 2, 2}, {0}},
      {"3d-unet avg downsample", "avg_pool3d", {2, 32, 128, 128, 128}, {2}, {2}, {0}, {}, false, {}, "NCHW", bf16},
      // Audio and sequences.
      {"m5 audio maxpool", "max_pool1d", {64, 128, 8000}, {4}, {4}, {0}},
      {"soundnet pool1", "max_pool1d", {32, 16, 110250}, {8}, {8}, {0}},
      {"textcnn max-over-time", "max_pool1d", {256, 256, 512}, {512}, {512}, {0}},
      {"funnel-transformer seq avgpool", "avg_pool1d", {16, 768, 512}, {2}, {2}, {0}, {}, true},
      {"conformer conv-module avgpool", "avg_pool1d", {32, 512, 1000}, {3}, {1}, {1}, {}, false, false},
      // Dilated windows (atrous pooling, as DeepLab-style context modules and dilated TCNs use).
      {"atrous context maxpool d2", "max_pool2d", {16, 256, 65, 65}, {3}, {1}, {1}, {2}},
      {"dilated tcn maxpool d4", "max_pool1d", {32, 256, 4096}, {3}, {1}, {1}, {4}},
  };
  std::vector<Row> rows;
  for (const Layer& l : layers) rows.push_back(network_row(l));
  return rows;
}

}  // namespace pg::bench
