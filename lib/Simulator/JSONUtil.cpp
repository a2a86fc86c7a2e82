//===- JSONUtil.cpp - Strict JSON field access with precise errors --------===//

#include "JSONUtil.h"

#include <cmath>

using namespace soap;
using namespace soap::jsonutil;
using llvm::StringRef;

std::string jsonutil::indexPath(StringRef path, size_t index) {
  return (path + "[" + llvm::Twine(index) + "]").str();
}

std::string jsonutil::keyPath(StringRef path, StringRef key) {
  if (path.empty())
    return key.str();
  return (path + "." + key).str();
}

bool Reader::fail(StringRef path, const llvm::Twine &message) {
  if (error.empty())
    error = path.empty() ? message.str() : (path + ": " + message).str();
  return false;
}

bool Reader::checkKeys(const llvm::json::Object &obj, StringRef path,
                       llvm::ArrayRef<StringRef> allowed) {
  if (failed())
    return false;
  // Report the alphabetically first unknown key so errors are deterministic.
  std::string firstUnknown;
  bool found = false;
  for (const auto &kv : obj) {
    StringRef key = kv.first;
    bool known = false;
    for (StringRef a : allowed)
      if (a == key) {
        known = true;
        break;
      }
    if (!known && (!found || key < StringRef(firstUnknown))) {
      firstUnknown = key.str();
      found = true;
    }
  }
  if (found)
    return fail(path, "unknown key '" + firstUnknown + "'");
  return true;
}

static const char *kindName(const llvm::json::Value &v) {
  switch (v.kind()) {
  case llvm::json::Value::Null:
    return "null";
  case llvm::json::Value::Boolean:
    return "a boolean";
  case llvm::json::Value::Number:
    return "a number";
  case llvm::json::Value::String:
    return "a string";
  case llvm::json::Value::Array:
    return "an array";
  case llvm::json::Value::Object:
    return "an object";
  }
  return "unknown";
}

#define SOAP_LOOKUP(required)                                                  \
  if (failed())                                                                \
    return false;                                                              \
  const llvm::json::Value *v = obj.get(key);                                   \
  if (!v) {                                                                    \
    if (!(required))                                                           \
      return true;                                                             \
    return fail(path, "missing field '" + key + "'");                          \
  }

bool Reader::getString(const llvm::json::Object &obj, StringRef path,
                       StringRef key, std::string &out, bool required) {
  SOAP_LOOKUP(required)
  auto s = v->getAsString();
  if (!s)
    return fail(keyPath(path, key),
                llvm::Twine("expected a string, got ") + kindName(*v));
  out = s->str();
  return true;
}

bool Reader::getInt(const llvm::json::Object &obj, StringRef path,
                    StringRef key, int64_t &out, bool required) {
  SOAP_LOOKUP(required)
  return asInt(*v, keyPath(path, key), out);
}

bool Reader::getNumber(const llvm::json::Object &obj, StringRef path,
                       StringRef key, double &out, bool required) {
  SOAP_LOOKUP(required)
  auto d = v->getAsNumber();
  if (!d)
    return fail(keyPath(path, key),
                llvm::Twine("expected a number, got ") + kindName(*v));
  if (!std::isfinite(*d))
    return fail(keyPath(path, key), "expected a finite number");
  out = *d;
  return true;
}

bool Reader::getBool(const llvm::json::Object &obj, StringRef path,
                     StringRef key, bool &out, bool required) {
  SOAP_LOOKUP(required)
  auto b = v->getAsBoolean();
  if (!b)
    return fail(keyPath(path, key),
                llvm::Twine("expected a boolean, got ") + kindName(*v));
  out = *b;
  return true;
}

bool Reader::getArray(const llvm::json::Object &obj, StringRef path,
                      StringRef key, const llvm::json::Array *&out,
                      bool required) {
  out = nullptr;
  SOAP_LOOKUP(required)
  out = v->getAsArray();
  if (!out)
    return fail(keyPath(path, key),
                llvm::Twine("expected an array, got ") + kindName(*v));
  return true;
}

bool Reader::getObject(const llvm::json::Object &obj, StringRef path,
                       StringRef key, const llvm::json::Object *&out,
                       bool required) {
  out = nullptr;
  SOAP_LOOKUP(required)
  out = v->getAsObject();
  if (!out)
    return fail(keyPath(path, key),
                llvm::Twine("expected an object, got ") + kindName(*v));
  return true;
}

#undef SOAP_LOOKUP

bool Reader::asObject(const llvm::json::Value &v, StringRef path,
                      const llvm::json::Object *&out) {
  if (failed())
    return false;
  out = v.getAsObject();
  if (!out)
    return fail(path, llvm::Twine("expected an object, got ") + kindName(v));
  return true;
}

bool Reader::asInt(const llvm::json::Value &v, StringRef path, int64_t &out) {
  if (failed())
    return false;
  auto i = v.getAsInteger();
  if (!i)
    return fail(path, llvm::Twine("expected an integer, got ") + kindName(v));
  out = *i;
  return true;
}

bool Reader::asString(const llvm::json::Value &v, StringRef path,
                      std::string &out) {
  if (failed())
    return false;
  auto s = v.getAsString();
  if (!s)
    return fail(path, llvm::Twine("expected a string, got ") + kindName(v));
  out = s->str();
  return true;
}

llvm::Expected<llvm::json::Value>
jsonutil::parseTopObject(StringRef text, StringRef what) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what.str() + ": invalid JSON: " +
                                       llvm::toString(parsed.takeError()));
  if (!parsed->getAsObject())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what.str() +
                                       ": expected a JSON object at top level");
  return parsed;
}
