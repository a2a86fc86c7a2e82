//===- ModelBuilder.cpp - Builders for the soap-models zoo ----------------===//

#include "ModelBuilder.h"

#include "soap/Dialect/SOAP/IR/SOAPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace soapmodels;
using llvm::ArrayRef;
using llvm::SmallVector;
using llvm::Twine;

ModelBuilder::ModelBuilder(MLIRContext *ctx, llvm::StringRef modelName,
                           int64_t batch)
    : b(ctx), batchSize(batch) {
  module = ModuleOp::create(NameLoc::get(b.getStringAttr(modelName)));
  b.setInsertionPointToEnd(module->getBody());
  func = func::FuncOp::create(b, at(modelName), modelName,
                              b.getFunctionType({}, {}));
  body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
}

Location ModelBuilder::at(const Twine &name) {
  std::string str = name.str();
  if (!names.insert(str).second)
    llvm::report_fatal_error(Twine("soap-models: duplicate op name '") + str +
                             "'");
  return NameLoc::get(b.getStringAttr(str));
}

Value ModelBuilder::input(ArrayRef<int64_t> shape, Type elementType,
                          const Twine &name) {
  isParameter.push_back(false);
  return body->addArgument(tensorType(shape, elementType), at(name));
}

Value ModelBuilder::param(ArrayRef<int64_t> shape, const Twine &name) {
  isParameter.push_back(true);
  return body->addArgument(tensorType(shape), at(name));
}

OwningOpRef<ModuleOp> ModelBuilder::finish(ValueRange results) {
  b.setInsertionPointToEnd(body);
  func::ReturnOp::create(b, at("return"), results);
  SmallVector<Type> argTypes(body->getArgumentTypes());
  func.setType(b.getFunctionType(argTypes, TypeRange(results)));
  UnitAttr unit = b.getUnitAttr();
  for (auto [i, isParam] : llvm::enumerate(isParameter))
    if (isParam)
      func.setArgAttr(i, mlir::soap::SOAPDialect::kParameterAttrName, unit);
  return std::move(module);
}

//===----------------------------------------------------------------------===//
// Basic tensors
//===----------------------------------------------------------------------===//

SmallVector<int64_t> ModelBuilder::shapeOf(Value v) {
  return SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
}

RankedTensorType ModelBuilder::tensorType(ArrayRef<int64_t> shape,
                                          Type elementType) {
  return RankedTensorType::get(shape, elementType ? elementType : f32());
}

Value ModelBuilder::constant(double value, Type type) {
  if (!type)
    type = f32();
  uint64_t bits;
  static_assert(sizeof(bits) == sizeof(value));
  std::memcpy(&bits, &value, sizeof(bits));
  auto key = std::make_pair(type, bits);
  auto it = constants.find(key);
  if (it != constants.end())
    return it->second;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(body);
  std::string name;
  llvm::raw_string_ostream os(name);
  TypedAttr attr;
  if (auto floatType = dyn_cast<FloatType>(type)) {
    os << "cst." << llvm::format("%.9g", value);
    attr = b.getFloatAttr(floatType, value);
  } else {
    os << "cst.i" << type.getIntOrFloatBitWidth() << "."
       << static_cast<int64_t>(value);
    attr = b.getIntegerAttr(type, static_cast<int64_t>(value));
  }
  Value cst = arith::ConstantOp::create(b, at(name), attr);
  constants[key] = cst;
  return cst;
}

Value ModelBuilder::empty(ArrayRef<int64_t> shape, const Twine &name,
                          Type elementType) {
  return tensor::EmptyOp::create(b, at(name), shape,
                                 elementType ? elementType : f32());
}

Value ModelBuilder::filled(ArrayRef<int64_t> shape, double value,
                           const Twine &name) {
  Value init = empty(shape, name + ".empty");
  Value cst = constant(value);
  return linalg::FillOp::create(b, at(name), ValueRange{cst}, ValueRange{init})
      ->getResult(0);
}

//===----------------------------------------------------------------------===//
// Structural ops
//===----------------------------------------------------------------------===//

static SmallVector<OpFoldResult> indexAttrs(OpBuilder &b,
                                            ArrayRef<int64_t> values) {
  SmallVector<OpFoldResult> result;
  for (int64_t v : values)
    result.push_back(b.getIndexAttr(v));
  return result;
}

Value ModelBuilder::pad(Value x, ArrayRef<int64_t> low, ArrayRef<int64_t> high,
                        double value, const Twine &name) {
  SmallVector<int64_t> shape = shapeOf(x);
  for (size_t i = 0; i < shape.size(); ++i)
    shape[i] += low[i] + high[i];
  Value cst = constant(value);
  return tensor::PadOp::create(b, at(name), tensorType(shape), x,
                               indexAttrs(b, low), indexAttrs(b, high), cst);
}

Value ModelBuilder::collapse(Value x, ArrayRef<ReassociationIndices> groups,
                             const Twine &name) {
  return tensor::CollapseShapeOp::create(b, at(name), x, groups);
}

Value ModelBuilder::expand(Value x, ArrayRef<int64_t> shape,
                           ArrayRef<ReassociationIndices> groups,
                           const Twine &name) {
  return tensor::ExpandShapeOp::create(b, at(name), tensorType(shape), x,
                                       groups);
}

Value ModelBuilder::slice(Value x, ArrayRef<int64_t> offsets,
                          ArrayRef<int64_t> sizes, const Twine &name,
                          ArrayRef<int64_t> dropDims) {
  SmallVector<int64_t> resultShape;
  for (auto [i, size] : llvm::enumerate(sizes))
    if (!llvm::is_contained(dropDims, static_cast<int64_t>(i)))
      resultShape.push_back(size);
  SmallVector<int64_t> strides(sizes.size(), 1);
  auto elementType = cast<RankedTensorType>(x.getType()).getElementType();
  return tensor::ExtractSliceOp::create(
      b, at(name), tensorType(resultShape, elementType), x,
      indexAttrs(b, offsets), indexAttrs(b, sizes), indexAttrs(b, strides));
}

Value ModelBuilder::insert(Value src, Value dest, ArrayRef<int64_t> offsets,
                           ArrayRef<int64_t> sizes, const Twine &name) {
  SmallVector<int64_t> strides(sizes.size(), 1);
  return tensor::InsertSliceOp::create(b, at(name), src, dest,
                                       indexAttrs(b, offsets),
                                       indexAttrs(b, sizes),
                                       indexAttrs(b, strides));
}

Value ModelBuilder::concat(ArrayRef<Value> parts, int64_t dim,
                           const Twine &name) {
  SmallVector<int64_t> shape = shapeOf(parts.front());
  shape[dim] = 0;
  for (Value part : parts)
    shape[dim] += shapeOf(part)[dim];
  Value result = empty(shape, name + ".empty");
  int64_t offset = 0;
  for (auto [i, part] : llvm::enumerate(parts)) {
    SmallVector<int64_t> sizes = shapeOf(part);
    SmallVector<int64_t> offsets(shape.size(), 0);
    offsets[dim] = offset;
    offset += sizes[dim];
    std::string partName =
        i + 1 == parts.size() ? name.str() : (name + "." + Twine(i)).str();
    result = insert(part, result, offsets, sizes, partName);
  }
  return result;
}

Value ModelBuilder::transpose(Value x, ArrayRef<int64_t> perm,
                              const Twine &name) {
  SmallVector<int64_t> shape = shapeOf(x), outShape;
  for (int64_t p : perm)
    outShape.push_back(shape[p]);
  Value init = empty(outShape, name + ".init");
  return linalg::TransposeOp::create(b, at(name), x, init, perm)->getResult(0);
}

//===----------------------------------------------------------------------===//
// Generic ops
//===----------------------------------------------------------------------===//

ValueRange ModelBuilder::generic(ArrayRef<Value> inputs, ArrayRef<Value> outputs,
                                 ArrayRef<AffineMap> maps,
                                 ArrayRef<utils::IteratorType> iterators,
                                 const Twine &name, const BodyFn &bodyFn) {
  SmallVector<Type> resultTypes;
  for (Value out : outputs)
    resultTypes.push_back(out.getType());
  auto op = linalg::GenericOp::create(
      b, at(name), resultTypes, inputs, outputs, maps, iterators,
      [&](OpBuilder &nb, Location loc, ValueRange args) {
        SmallVector<Value> yields = bodyFn(nb, loc, args);
        linalg::YieldOp::create(nb, loc, yields);
      });
  return op->getResults();
}

Value ModelBuilder::map(
    ArrayRef<Value> inputs, const Twine &name,
    const std::function<Value(OpBuilder &, Location, ValueRange)> &bodyFn,
    ArrayRef<AffineMap> maps) {
  SmallVector<int64_t> shape = shapeOf(inputs.front());
  unsigned rank = shape.size();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> allMaps;
  if (maps.empty())
    allMaps.assign(inputs.size(), id);
  else
    allMaps.assign(maps.begin(), maps.end());
  allMaps.push_back(id);
  Value init = empty(shape, name + ".init");
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return generic(inputs, {init}, allMaps, iterators, name,
                 [&](OpBuilder &nb, Location loc, ValueRange args) {
                   return SmallVector<Value>{bodyFn(nb, loc, args)};
                 })[0];
}

/// (d0, ..., dn-1) -> (d0, ..., dn-2).
static AffineMap dropLastMap(MLIRContext *ctx, unsigned rank) {
  SmallVector<AffineExpr> exprs;
  for (unsigned i = 0; i + 1 < rank; ++i)
    exprs.push_back(getAffineDimExpr(i, ctx));
  return AffineMap::get(rank, 0, exprs, ctx);
}

/// (d0, ..., dn-1) -> (dn-1).
static AffineMap lastOnlyMap(MLIRContext *ctx, unsigned rank) {
  return AffineMap::get(rank, 0, {getAffineDimExpr(rank - 1, ctx)}, ctx);
}

Value ModelBuilder::reduceLast(
    Value x, double initValue, const Twine &name,
    const std::function<Value(OpBuilder &, Location, Value, Value)> &combine) {
  SmallVector<int64_t> shape = shapeOf(x);
  unsigned rank = shape.size();
  SmallVector<int64_t> outShape(shape.begin(), shape.end() - 1);
  Value init = filled(outShape, initValue, name + ".init");
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  return generic({x}, {init},
                 {b.getMultiDimIdentityMap(rank), dropLastMap(context(), rank)},
                 iterators, name,
                 [&](OpBuilder &nb, Location loc, ValueRange args) {
                   return SmallVector<Value>{
                       combine(nb, loc, args[0], args[1])};
                 })[0];
}

Value ModelBuilder::add(Value x, Value y, const Twine &name) {
  return map({x, y}, name, [](OpBuilder &nb, Location loc, ValueRange a) {
    return arith::AddFOp::create(nb, loc, a[0], a[1]).getResult();
  });
}

Value ModelBuilder::relu(Value x, const Twine &name) {
  Value zero = constant(0.0);
  return map({x}, name, [&](OpBuilder &nb, Location loc, ValueRange a) {
    return arith::MaximumFOp::create(nb, loc, a[0], zero).getResult();
  });
}

Value ModelBuilder::relu6(Value x, const Twine &name) {
  Value zero = constant(0.0), six = constant(6.0);
  return map({x}, name, [&](OpBuilder &nb, Location loc, ValueRange a) {
    Value low = arith::MaximumFOp::create(nb, loc, a[0], zero);
    return arith::MinimumFOp::create(nb, loc, low, six).getResult();
  });
}

Value ModelBuilder::tanh(Value x, const Twine &name) {
  return map({x}, name, [](OpBuilder &nb, Location loc, ValueRange a) {
    return math::TanhOp::create(nb, loc, a[0]).getResult();
  });
}

Value ModelBuilder::gelu(Value x, const Twine &name) {
  Value half = constant(0.5), one = constant(1.0);
  Value k = constant(std::sqrt(2.0 / M_PI)), c = constant(0.044715);
  return map({x}, name, [&](OpBuilder &nb, Location loc, ValueRange a) {
    Value v = a[0];
    Value v3 = arith::MulFOp::create(
        nb, loc, arith::MulFOp::create(nb, loc, v, v), v);
    Value inner = arith::AddFOp::create(
        nb, loc, v, arith::MulFOp::create(nb, loc, c, v3));
    Value t = math::TanhOp::create(nb, loc,
                                   arith::MulFOp::create(nb, loc, k, inner));
    Value s = arith::AddFOp::create(nb, loc, one, t);
    return arith::MulFOp::create(nb, loc,
                                 arith::MulFOp::create(nb, loc, half, v), s)
        .getResult();
  });
}

Value ModelBuilder::scale(Value x, double factor, const Twine &name) {
  Value f = constant(factor);
  return map({x}, name, [&](OpBuilder &nb, Location loc, ValueRange a) {
    return arith::MulFOp::create(nb, loc, a[0], f).getResult();
  });
}

//===----------------------------------------------------------------------===//
// Layers
//===----------------------------------------------------------------------===//

static Value sigmoid(OpBuilder &b, Location loc, Value x, Value one) {
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
  return arith::DivFOp::create(b, loc, one, arith::AddFOp::create(b, loc, one, e));
}

Value ModelBuilder::conv2d(Value x, const Conv &conv, const Twine &name) {
  SmallVector<int64_t> shape = shapeOf(x);
  int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  Value weight =
      param({conv.outChannels, c, conv.kh, conv.kw}, name + ".weight");
  if (conv.ph || conv.pw)
    x = pad(x, {0, 0, conv.ph, conv.pw}, {0, 0, conv.ph, conv.pw}, 0.0,
            name + ".pad");
  int64_t oh = (h + 2 * conv.ph - conv.kh) / conv.sh + 1;
  int64_t ow = (w + 2 * conv.pw - conv.kw) / conv.sw + 1;
  Value init = filled({n, conv.outChannels, oh, ow}, 0.0, name + ".init");
  Value out = linalg::Conv2DNchwFchwOp::create(
                  b, at(name), TypeRange{init.getType()}, ValueRange{x, weight},
                  ValueRange{init}, b.getI64TensorAttr({conv.sh, conv.sw}),
                  b.getI64TensorAttr({1, 1}))
                  ->getResult(0);
  if (conv.bias)
    out = channelBias(out, name + ".bias", name + ".bias_add");
  return out;
}

Value ModelBuilder::depthwiseConv2d(Value x, int64_t k, int64_t stride,
                                    int64_t padding, const Twine &name) {
  SmallVector<int64_t> shape = shapeOf(x);
  int64_t n = shape[0], c = shape[1], h = shape[2], w = shape[3];
  Value weight = param({c, k, k}, name + ".weight");
  if (padding)
    x = pad(x, {0, 0, padding, padding}, {0, 0, padding, padding}, 0.0,
            name + ".pad");
  int64_t oh = (h + 2 * padding - k) / stride + 1;
  int64_t ow = (w + 2 * padding - k) / stride + 1;
  Value init = filled({n, c, oh, ow}, 0.0, name + ".init");
  return linalg::DepthwiseConv2DNchwChwOp::create(
             b, at(name), TypeRange{init.getType()}, ValueRange{x, weight},
             ValueRange{init}, b.getI64TensorAttr({stride, stride}),
             b.getI64TensorAttr({1, 1}))
      ->getResult(0);
}

/// (n, c, h, w) -> (c).
static AffineMap channelMap(MLIRContext *ctx) {
  return AffineMap::get(4, 0, {getAffineDimExpr(1, ctx)}, ctx);
}

Value ModelBuilder::channelBias(Value x, const Twine &paramName,
                                const Twine &name) {
  Value bias = param({shapeOf(x)[1]}, paramName);
  return map(
      {x, bias}, name,
      [](OpBuilder &nb, Location loc, ValueRange a) {
        return arith::AddFOp::create(nb, loc, a[0], a[1]).getResult();
      },
      {b.getMultiDimIdentityMap(4), channelMap(context())});
}

Value ModelBuilder::batchNorm(Value x, const Twine &name) {
  int64_t c = shapeOf(x)[1];
  Value weight = param({c}, name + ".weight");
  Value bias = param({c}, name + ".bias");
  AffineMap cm = channelMap(context());
  return map(
      {x, weight, bias}, name,
      [](OpBuilder &nb, Location loc, ValueRange a) {
        Value scaled = arith::MulFOp::create(nb, loc, a[0], a[1]);
        return arith::AddFOp::create(nb, loc, scaled, a[2]).getResult();
      },
      {b.getMultiDimIdentityMap(4), cm, cm});
}

Value ModelBuilder::maxPool(Value x, int64_t k, int64_t stride,
                            int64_t padding, const Twine &name) {
  double negInf = -std::numeric_limits<double>::infinity();
  if (padding)
    x = pad(x, {0, 0, padding, padding}, {0, 0, padding, padding}, negInf,
            name + ".pad");
  SmallVector<int64_t> shape = shapeOf(x);
  int64_t oh = (shape[2] - k) / stride + 1, ow = (shape[3] - k) / stride + 1;
  Value window = empty({k, k}, name + ".window");
  Value init = filled({shape[0], shape[1], oh, ow}, negInf, name + ".init");
  return linalg::PoolingNchwMaxOp::create(
             b, at(name), TypeRange{init.getType()}, ValueRange{x, window},
             ValueRange{init}, b.getI64TensorAttr({stride, stride}),
             b.getI64TensorAttr({1, 1}))
      ->getResult(0);
}

Value ModelBuilder::avgPool(Value x, int64_t k, int64_t stride,
                            int64_t padding, const Twine &name) {
  if (padding)
    x = pad(x, {0, 0, padding, padding}, {0, 0, padding, padding}, 0.0,
            name + ".pad");
  SmallVector<int64_t> shape = shapeOf(x);
  int64_t oh = (shape[2] - k) / stride + 1, ow = (shape[3] - k) / stride + 1;
  Value window = empty({k, k}, name + ".window");
  Value init = filled({shape[0], shape[1], oh, ow}, 0.0, name + ".init");
  Value sum = linalg::PoolingNchwSumOp::create(
                  b, at(name), TypeRange{init.getType()}, ValueRange{x, window},
                  ValueRange{init}, b.getI64TensorAttr({stride, stride}),
                  b.getI64TensorAttr({1, 1}))
                  ->getResult(0);
  return scale(sum, 1.0 / static_cast<double>(k * k), name + ".div");
}

Value ModelBuilder::globalAvgPool(Value x, const Twine &name) {
  SmallVector<int64_t> shape = shapeOf(x);
  int64_t h = shape[2], w = shape[3];
  Value window = empty({h, w}, name + ".window");
  Value init = filled({shape[0], shape[1], 1, 1}, 0.0, name + ".init");
  Value sum = linalg::PoolingNchwSumOp::create(
                  b, at(name), TypeRange{init.getType()}, ValueRange{x, window},
                  ValueRange{init}, b.getI64TensorAttr({1, 1}),
                  b.getI64TensorAttr({1, 1}))
                  ->getResult(0);
  Value mean = scale(sum, 1.0 / static_cast<double>(h * w), name + ".div");
  return collapse(mean, {{0}, {1, 2, 3}}, name + ".flatten");
}

Value ModelBuilder::flatten(Value x, const Twine &name) {
  return collapse(x, {{0}, {1, 2, 3}}, name);
}

Value ModelBuilder::linear(Value x, int64_t outFeatures, const Twine &name,
                           bool bias) {
  int64_t k = shapeOf(x)[1];
  Value weight = param({k, outFeatures}, name + ".weight");
  Value out = matmul(x, weight, name);
  if (bias)
    out = addBias(out, param({outFeatures}, name + ".bias"),
                  name + ".bias_add");
  return out;
}

Value ModelBuilder::matmul(Value x, Value w, const Twine &name, Value acc) {
  if (!acc)
    acc = filled({shapeOf(x)[0], shapeOf(w)[1]}, 0.0, name + ".init");
  return linalg::MatmulOp::create(b, at(name), TypeRange{acc.getType()},
                                  ValueRange{x, w}, ValueRange{acc})
      ->getResult(0);
}

Value ModelBuilder::matmulTransposedB(Value x, Value w, const Twine &name) {
  Value acc = filled({shapeOf(x)[0], shapeOf(w)[0]}, 0.0, name + ".init");
  auto op = linalg::MatmulOp::create(b, at(name), TypeRange{acc.getType()},
                                     ValueRange{x, w}, ValueRange{acc});
  MLIRContext *ctx = context();
  AffineExpr m = getAffineDimExpr(0, ctx), n = getAffineDimExpr(1, ctx),
             k = getAffineDimExpr(2, ctx);
  op.setIndexingMapsAttr(b.getAffineMapArrayAttr(
      {AffineMap::get(3, 0, {m, k}, ctx), AffineMap::get(3, 0, {n, k}, ctx),
       AffineMap::get(3, 0, {m, n}, ctx)}));
  return op->getResult(0);
}

Value ModelBuilder::addBias(Value x, Value bias, const Twine &name) {
  unsigned rank = shapeOf(x).size();
  return map(
      {x, bias}, name,
      [](OpBuilder &nb, Location loc, ValueRange a) {
        return arith::AddFOp::create(nb, loc, a[0], a[1]).getResult();
      },
      {b.getMultiDimIdentityMap(rank), lastOnlyMap(context(), rank)});
}

Value ModelBuilder::batchMatmul(Value x, Value y, const Twine &name) {
  SmallVector<int64_t> xs = shapeOf(x), ys = shapeOf(y);
  Value acc = filled({xs[0], xs[1], ys[2]}, 0.0, name + ".init");
  return linalg::BatchMatmulOp::create(b, at(name), TypeRange{acc.getType()},
                                       ValueRange{x, y}, ValueRange{acc})
      ->getResult(0);
}

Value ModelBuilder::embedding(Value tokens, Value table, const Twine &name) {
  SmallVector<int64_t> ts = shapeOf(tokens), tab = shapeOf(table);
  MLIRContext *ctx = context();
  AffineExpr bb = getAffineDimExpr(0, ctx), t = getAffineDimExpr(1, ctx),
             e = getAffineDimExpr(2, ctx), v = getAffineDimExpr(3, ctx);
  Value init = filled({ts[0], ts[1], tab[1]}, 0.0, name + ".init");
  Type i64Type = i64();
  return generic({tokens, table}, {init},
                 {AffineMap::get(4, 0, {bb, t}, ctx),
                  AffineMap::get(4, 0, {v, e}, ctx),
                  AffineMap::get(4, 0, {bb, t, e}, ctx)},
                 {utils::IteratorType::parallel, utils::IteratorType::parallel,
                  utils::IteratorType::parallel,
                  utils::IteratorType::reduction},
                 name, [&](OpBuilder &nb, Location loc, ValueRange a) {
                   Value row = linalg::IndexOp::create(nb, loc, 3);
                   Value rowId =
                       arith::IndexCastOp::create(nb, loc, i64Type, row);
                   Value hit = arith::CmpIOp::create(
                       nb, loc, arith::CmpIPredicate::eq, a[0], rowId);
                   return SmallVector<Value>{
                       arith::SelectOp::create(nb, loc, hit, a[1], a[2])};
                 })[0];
}

Value ModelBuilder::softmax(Value x, const Twine &name) {
  unsigned rank = shapeOf(x).size();
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = dropLastMap(context(), rank);
  Value max = reduceLast(x, -std::numeric_limits<double>::infinity(),
                         name + ".max",
                         [](OpBuilder &nb, Location loc, Value e, Value acc) {
                           return arith::MaximumFOp::create(nb, loc, e, acc)
                               .getResult();
                         });
  Value exp = map(
      {x, max}, name + ".exp",
      [](OpBuilder &nb, Location loc, ValueRange a) {
        return math::ExpOp::create(nb, loc,
                                   arith::SubFOp::create(nb, loc, a[0], a[1]))
            .getResult();
      },
      {id, rowMap});
  Value sum = reduceLast(exp, 0.0, name + ".sum",
                         [](OpBuilder &nb, Location loc, Value e, Value acc) {
                           return arith::AddFOp::create(nb, loc, e, acc)
                               .getResult();
                         });
  return map(
      {exp, sum}, name,
      [](OpBuilder &nb, Location loc, ValueRange a) {
        return arith::DivFOp::create(nb, loc, a[0], a[1]).getResult();
      },
      {id, rowMap});
}

Value ModelBuilder::layerNorm(Value x, const Twine &name) {
  SmallVector<int64_t> shape = shapeOf(x);
  unsigned rank = shape.size();
  int64_t n = shape.back();
  Value gamma = param({n}, name + ".weight");
  Value beta = param({n}, name + ".bias");
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap rowMap = dropLastMap(context(), rank);
  AffineMap colMap = lastOnlyMap(context(), rank);
  Value invN = constant(1.0 / static_cast<double>(n));
  Value eps = constant(1e-5);
  Value sum = reduceLast(x, 0.0, name + ".sum",
                         [](OpBuilder &nb, Location loc, Value e, Value acc) {
                           return arith::AddFOp::create(nb, loc, e, acc)
                               .getResult();
                         });
  // Sum of squared deviations from the mean.
  SmallVector<int64_t> rowShape(shape.begin(), shape.end() - 1);
  Value varInit = filled(rowShape, 0.0, name + ".var.init");
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.back() = utils::IteratorType::reduction;
  Value var = generic({x, sum}, {varInit}, {id, rowMap, rowMap}, iterators,
                      name + ".var",
                      [&](OpBuilder &nb, Location loc, ValueRange a) {
                        Value mean = arith::MulFOp::create(nb, loc, a[1], invN);
                        Value d = arith::SubFOp::create(nb, loc, a[0], mean);
                        Value sq = arith::MulFOp::create(nb, loc, d, d);
                        return SmallVector<Value>{
                            arith::AddFOp::create(nb, loc, sq, a[2])};
                      })[0];
  return map(
      {x, sum, var, gamma, beta}, name,
      [&](OpBuilder &nb, Location loc, ValueRange a) {
        Value mean = arith::MulFOp::create(nb, loc, a[1], invN);
        Value variance = arith::MulFOp::create(nb, loc, a[2], invN);
        Value inv = math::RsqrtOp::create(
            nb, loc, arith::AddFOp::create(nb, loc, variance, eps));
        Value norm = arith::MulFOp::create(
            nb, loc, arith::SubFOp::create(nb, loc, a[0], mean), inv);
        return arith::AddFOp::create(nb, loc,
                                     arith::MulFOp::create(nb, loc, norm, a[3]),
                                     a[4])
            .getResult();
      },
      {id, rowMap, rowMap, colMap, colMap});
}

ModelBuilder::LSTMLayer ModelBuilder::lstmLayer(int64_t inputSize,
                                                int64_t hidden,
                                                const Twine &name) {
  LSTMLayer layer;
  layer.hidden = hidden;
  layer.wih = param({inputSize, 4 * hidden}, name + ".weight_ih");
  layer.whh = param({hidden, 4 * hidden}, name + ".weight_hh");
  layer.bias = param({4, hidden}, name + ".bias");
  return layer;
}

std::pair<Value, Value> ModelBuilder::lstmStep(const LSTMLayer &layer, Value x,
                                               Value h, Value c,
                                               const Twine &name) {
  int64_t batch = shapeOf(x)[0], hidden = layer.hidden;
  Value gates = matmul(x, layer.wih, name + ".ih");
  gates = matmul(h, layer.whh, name + ".hh", gates);
  gates = expand(gates, {batch, 4, hidden}, {{0}, {1, 2}}, name + ".gates");
  MLIRContext *ctx = context();
  AffineExpr d0 = getAffineDimExpr(0, ctx), d1 = getAffineDimExpr(1, ctx);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (int64_t g = 0; g < 4; ++g) {
    inputs.push_back(gates);
    maps.push_back(
        AffineMap::get(2, 0, {d0, getAffineConstantExpr(g, ctx), d1}, ctx));
  }
  for (int64_t g = 0; g < 4; ++g) {
    inputs.push_back(layer.bias);
    maps.push_back(
        AffineMap::get(2, 0, {getAffineConstantExpr(g, ctx), d1}, ctx));
  }
  inputs.push_back(c);
  AffineMap id = b.getMultiDimIdentityMap(2);
  maps.push_back(id);
  maps.push_back(id);
  maps.push_back(id);
  Value hInit = empty({batch, hidden}, name + ".h.init");
  Value cInit = empty({batch, hidden}, name + ".c.init");
  Value one = constant(1.0);
  ValueRange results = generic(
      inputs, {hInit, cInit}, maps,
      {utils::IteratorType::parallel, utils::IteratorType::parallel}, name,
      [&](OpBuilder &nb, Location loc, ValueRange a) {
        auto gate = [&](int g) {
          return arith::AddFOp::create(nb, loc, a[g], a[4 + g]).getResult();
        };
        Value i = sigmoid(nb, loc, gate(0), one);
        Value f = sigmoid(nb, loc, gate(1), one);
        Value g = math::TanhOp::create(nb, loc, gate(2));
        Value o = sigmoid(nb, loc, gate(3), one);
        Value cNew = arith::AddFOp::create(
            nb, loc, arith::MulFOp::create(nb, loc, f, a[8]),
            arith::MulFOp::create(nb, loc, i, g));
        Value hNew = arith::MulFOp::create(
            nb, loc, o, math::TanhOp::create(nb, loc, cNew));
        return SmallVector<Value>{hNew, cNew};
      });
  return {results[0], results[1]};
}
