//===- CNNs.cpp - AlexNet, ResNet-101, Inception-v3 -----------------------===//
//
// The convolutional benchmarks of the FlexFlow paper, after torchvision's
// definitions and parameter names (NCHW, ImageNet inputs, 1000 classes):
//
// - alexnet: torchvision AlexNet on 224x224 (the adaptive 6x6 average pool is
//   the identity at that size and is left out; dropout is left out).
//   61,100,840 parameters.
// - resnet101: torchvision ResNet-101 (v1.5: stride on the 3x3 conv),
//   224x224. Batch norm is folded into a per-channel scale and shift, which
//   are its two parameters per channel (weight, bias), as in torchvision's
//   parameter count. 44,549,160 parameters.
// - inception_v3: torchvision Inception-v3 on 299x299 without the auxiliary
//   classifier (BasicConv2d = conv without bias + folded batch norm + relu).
//   23,834,568 parameters (torchvision's 27,161,264 less 3,326,696 for the
//   auxiliary head).
//
//===----------------------------------------------------------------------===//

#include "ModelBuilder.h"

using namespace mlir;
using namespace soapmodels;

//===----------------------------------------------------------------------===//
// AlexNet
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> soapmodels::buildAlexNet(MLIRContext *ctx,
                                                 int64_t batch) {
  ModelBuilder mb(ctx, "alexnet", batch);
  using Conv = ModelBuilder::Conv;
  Value x = mb.input({batch, 3, 224, 224}, mb.f32(), "input");
  x = mb.conv2d(x, Conv{64, 11, 11, 4, 4, 2, 2, true}, "features.0");
  x = mb.relu(x, "features.1");
  x = mb.maxPool(x, 3, 2, 0, "features.2");
  x = mb.conv2d(x, Conv{192, 5, 5, 1, 1, 2, 2, true}, "features.3");
  x = mb.relu(x, "features.4");
  x = mb.maxPool(x, 3, 2, 0, "features.5");
  x = mb.conv2d(x, Conv{384, 3, 3, 1, 1, 1, 1, true}, "features.6");
  x = mb.relu(x, "features.7");
  x = mb.conv2d(x, Conv{256, 3, 3, 1, 1, 1, 1, true}, "features.8");
  x = mb.relu(x, "features.9");
  x = mb.conv2d(x, Conv{256, 3, 3, 1, 1, 1, 1, true}, "features.10");
  x = mb.relu(x, "features.11");
  x = mb.maxPool(x, 3, 2, 0, "features.12"); // [B, 256, 6, 6]
  x = mb.flatten(x, "flatten");
  x = mb.linear(x, 4096, "classifier.1");
  x = mb.relu(x, "classifier.2");
  x = mb.linear(x, 4096, "classifier.4");
  x = mb.relu(x, "classifier.5");
  x = mb.linear(x, 1000, "classifier.6");
  return mb.finish({x});
}

//===----------------------------------------------------------------------===//
// ResNet-101
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> soapmodels::buildResNet101(MLIRContext *ctx,
                                                   int64_t batch) {
  ModelBuilder mb(ctx, "resnet101", batch);
  using Conv = ModelBuilder::Conv;
  Value x = mb.input({batch, 3, 224, 224}, mb.f32(), "input");
  x = mb.conv2d(x, Conv{64, 7, 7, 2, 2, 3, 3}, "conv1");
  x = mb.batchNorm(x, "bn1");
  x = mb.relu(x, "relu");
  x = mb.maxPool(x, 3, 2, 1, "maxpool");

  struct Stage {
    int64_t planes, blocks, stride;
  };
  const Stage stages[] = {{64, 3, 1}, {128, 4, 2}, {256, 23, 2}, {512, 3, 2}};
  int64_t inplanes = 64;
  for (auto [si, stage] : llvm::enumerate(stages)) {
    for (int64_t bi = 0; bi < stage.blocks; ++bi) {
      std::string p =
          "layer" + std::to_string(si + 1) + "." + std::to_string(bi);
      int64_t stride = bi == 0 ? stage.stride : 1;
      int64_t width = stage.planes, outPlanes = stage.planes * 4;
      Value identity = x;
      Value out = mb.conv2d(x, Conv{width, 1, 1}, p + ".conv1");
      out = mb.batchNorm(out, p + ".bn1");
      out = mb.relu(out, p + ".relu1");
      out = mb.conv2d(out, Conv{width, 3, 3, stride, stride, 1, 1},
                      p + ".conv2");
      out = mb.batchNorm(out, p + ".bn2");
      out = mb.relu(out, p + ".relu2");
      out = mb.conv2d(out, Conv{outPlanes, 1, 1}, p + ".conv3");
      out = mb.batchNorm(out, p + ".bn3");
      if (stride != 1 || inplanes != outPlanes) {
        identity = mb.conv2d(x, Conv{outPlanes, 1, 1, stride, stride},
                             p + ".downsample.0");
        identity = mb.batchNorm(identity, p + ".downsample.1");
      }
      out = mb.add(out, identity, p + ".add");
      x = mb.relu(out, p + ".relu3");
      inplanes = outPlanes;
    }
  }
  x = mb.globalAvgPool(x, "avgpool");
  x = mb.linear(x, 1000, "fc");
  return mb.finish({x});
}

//===----------------------------------------------------------------------===//
// MobileNetV2
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> soapmodels::buildMobileNetV2(MLIRContext *ctx,
                                                   int64_t batch) {
  ModelBuilder mb(ctx, "mobilenet_v2", batch);
  using Conv = ModelBuilder::Conv;
  // torchvision's Conv2dNormActivation: conv (no bias) + batch norm +
  // relu6, parameters "<name>.0.weight", "<name>.1.weight", ...
  auto convBN = [&](Value x, int64_t out, int64_t k, int64_t stride,
                    const std::string &name, bool activation = true) {
    x = mb.conv2d(x, Conv{out, k, k, stride, stride, k / 2, k / 2},
                  name + ".0");
    x = mb.batchNorm(x, name + ".1");
    return activation ? mb.relu6(x, name + ".2") : x;
  };
  Value x = mb.input({batch, 3, 224, 224}, mb.f32(), "input");
  x = convBN(x, 32, 3, 2, "features.0");
  // Inverted residual blocks: expansion t, output channels c, repeats n,
  // first stride s.
  struct Setting {
    int64_t t, c, n, s;
  };
  const Setting settings[] = {{1, 16, 1, 1},  {6, 24, 2, 2}, {6, 32, 3, 2},
                              {6, 64, 4, 2},  {6, 96, 3, 1}, {6, 160, 3, 2},
                              {6, 320, 1, 1}};
  int64_t in = 32, index = 1;
  for (const Setting &set : settings) {
    for (int64_t i = 0; i < set.n; ++i, ++index) {
      std::string p = "features." + std::to_string(index) + ".conv";
      int64_t stride = i == 0 ? set.s : 1, hidden = in * set.t;
      Value out = x;
      int64_t layer = 0;
      if (set.t != 1)
        out = convBN(out, hidden, 1, 1, p + "." + std::to_string(layer++));
      std::string dw = p + "." + std::to_string(layer++);
      out = mb.depthwiseConv2d(out, 3, stride, 1, dw + ".0");
      out = mb.batchNorm(out, dw + ".1");
      out = mb.relu6(out, dw + ".2");
      out = mb.conv2d(out, Conv{set.c, 1, 1},
                      p + "." + std::to_string(layer++));
      out = mb.batchNorm(out, p + "." + std::to_string(layer++));
      if (stride == 1 && in == set.c)
        out = mb.add(x, out, p + ".add");
      x = out;
      in = set.c;
    }
  }
  x = convBN(x, 1280, 1, 1, "features." + std::to_string(index));
  x = mb.globalAvgPool(x, "avgpool");
  x = mb.linear(x, 1000, "classifier.1");
  return mb.finish({x});
}

//===----------------------------------------------------------------------===//
// Inception-v3
//===----------------------------------------------------------------------===//

namespace {
/// torchvision's BasicConv2d: conv (no bias) + batch norm + relu, with
/// parameters "<name>.conv.weight", "<name>.bn.weight", "<name>.bn.bias".
struct Inception {
  ModelBuilder &mb;

  Value basic(Value x, int64_t out, int64_t kh, int64_t kw,
              const std::string &name, int64_t stride = 1, int64_t ph = 0,
              int64_t pw = 0) {
    x = mb.conv2d(x, ModelBuilder::Conv{out, kh, kw, stride, stride, ph, pw},
                  name + ".conv");
    x = mb.batchNorm(x, name + ".bn");
    return mb.relu(x, name + ".relu");
  }
  Value basic(Value x, int64_t out, int64_t k, const std::string &name,
              int64_t stride = 1, int64_t pad = 0) {
    return basic(x, out, k, k, name, stride, pad, pad);
  }

  Value blockA(Value x, int64_t poolFeatures, const std::string &p) {
    Value b1 = basic(x, 64, 1, p + ".branch1x1");
    Value b5 = basic(x, 48, 1, p + ".branch5x5_1");
    b5 = basic(b5, 64, 5, p + ".branch5x5_2", 1, 2);
    Value b3 = basic(x, 64, 1, p + ".branch3x3dbl_1");
    b3 = basic(b3, 96, 3, p + ".branch3x3dbl_2", 1, 1);
    b3 = basic(b3, 96, 3, p + ".branch3x3dbl_3", 1, 1);
    Value bp = mb.avgPool(x, 3, 1, 1, p + ".avg_pool");
    bp = basic(bp, poolFeatures, 1, p + ".branch_pool");
    return mb.concat({b1, b5, b3, bp}, 1, p + ".cat");
  }

  Value blockB(Value x, const std::string &p) {
    Value b3 = basic(x, 384, 3, p + ".branch3x3", 2);
    Value bd = basic(x, 64, 1, p + ".branch3x3dbl_1");
    bd = basic(bd, 96, 3, p + ".branch3x3dbl_2", 1, 1);
    bd = basic(bd, 96, 3, p + ".branch3x3dbl_3", 2);
    Value bp = mb.maxPool(x, 3, 2, 0, p + ".max_pool");
    return mb.concat({b3, bd, bp}, 1, p + ".cat");
  }

  Value blockC(Value x, int64_t c7, const std::string &p) {
    Value b1 = basic(x, 192, 1, p + ".branch1x1");
    Value b7 = basic(x, c7, 1, p + ".branch7x7_1");
    b7 = basic(b7, c7, 1, 7, p + ".branch7x7_2", 1, 0, 3);
    b7 = basic(b7, 192, 7, 1, p + ".branch7x7_3", 1, 3, 0);
    Value bd = basic(x, c7, 1, p + ".branch7x7dbl_1");
    bd = basic(bd, c7, 7, 1, p + ".branch7x7dbl_2", 1, 3, 0);
    bd = basic(bd, c7, 1, 7, p + ".branch7x7dbl_3", 1, 0, 3);
    bd = basic(bd, c7, 7, 1, p + ".branch7x7dbl_4", 1, 3, 0);
    bd = basic(bd, 192, 1, 7, p + ".branch7x7dbl_5", 1, 0, 3);
    Value bp = mb.avgPool(x, 3, 1, 1, p + ".avg_pool");
    bp = basic(bp, 192, 1, p + ".branch_pool");
    return mb.concat({b1, b7, bd, bp}, 1, p + ".cat");
  }

  Value blockD(Value x, const std::string &p) {
    Value b3 = basic(x, 192, 1, p + ".branch3x3_1");
    b3 = basic(b3, 320, 3, p + ".branch3x3_2", 2);
    Value b7 = basic(x, 192, 1, p + ".branch7x7x3_1");
    b7 = basic(b7, 192, 1, 7, p + ".branch7x7x3_2", 1, 0, 3);
    b7 = basic(b7, 192, 7, 1, p + ".branch7x7x3_3", 1, 3, 0);
    b7 = basic(b7, 192, 3, p + ".branch7x7x3_4", 2);
    Value bp = mb.maxPool(x, 3, 2, 0, p + ".max_pool");
    return mb.concat({b3, b7, bp}, 1, p + ".cat");
  }

  Value blockE(Value x, const std::string &p) {
    Value b1 = basic(x, 320, 1, p + ".branch1x1");
    Value b3 = basic(x, 384, 1, p + ".branch3x3_1");
    Value b3a = basic(b3, 384, 1, 3, p + ".branch3x3_2a", 1, 0, 1);
    Value b3b = basic(b3, 384, 3, 1, p + ".branch3x3_2b", 1, 1, 0);
    Value bd = basic(x, 448, 1, p + ".branch3x3dbl_1");
    bd = basic(bd, 384, 3, p + ".branch3x3dbl_2", 1, 1);
    Value bda = basic(bd, 384, 1, 3, p + ".branch3x3dbl_3a", 1, 0, 1);
    Value bdb = basic(bd, 384, 3, 1, p + ".branch3x3dbl_3b", 1, 1, 0);
    Value bp = mb.avgPool(x, 3, 1, 1, p + ".avg_pool");
    bp = basic(bp, 192, 1, p + ".branch_pool");
    return mb.concat({b1, b3a, b3b, bda, bdb, bp}, 1, p + ".cat");
  }
};
} // namespace

OwningOpRef<ModuleOp> soapmodels::buildInceptionV3(MLIRContext *ctx,
                                                     int64_t batch) {
  ModelBuilder mb(ctx, "inception_v3", batch);
  Inception inc{mb};
  Value x = mb.input({batch, 3, 299, 299}, mb.f32(), "input");
  x = inc.basic(x, 32, 3, "Conv2d_1a_3x3", 2);       // 149
  x = inc.basic(x, 32, 3, "Conv2d_2a_3x3");          // 147
  x = inc.basic(x, 64, 3, "Conv2d_2b_3x3", 1, 1);    // 147
  x = mb.maxPool(x, 3, 2, 0, "maxpool1");            // 73
  x = inc.basic(x, 80, 1, "Conv2d_3b_1x1");          // 73
  x = inc.basic(x, 192, 3, "Conv2d_4a_3x3");         // 71
  x = mb.maxPool(x, 3, 2, 0, "maxpool2");            // 35
  x = inc.blockA(x, 32, "Mixed_5b");                 // 256 x 35 x 35
  x = inc.blockA(x, 64, "Mixed_5c");                 // 288
  x = inc.blockA(x, 64, "Mixed_5d");                 // 288
  x = inc.blockB(x, "Mixed_6a");                     // 768 x 17 x 17
  x = inc.blockC(x, 128, "Mixed_6b");
  x = inc.blockC(x, 160, "Mixed_6c");
  x = inc.blockC(x, 160, "Mixed_6d");
  x = inc.blockC(x, 192, "Mixed_6e");
  x = inc.blockD(x, "Mixed_7a");                     // 1280 x 8 x 8
  x = inc.blockE(x, "Mixed_7b");                     // 2048 x 8 x 8
  x = inc.blockE(x, "Mixed_7c");
  x = mb.globalAvgPool(x, "avgpool");
  x = mb.linear(x, 1000, "fc");
  return mb.finish({x});
}
