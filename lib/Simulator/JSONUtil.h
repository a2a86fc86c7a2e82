//===- JSONUtil.h - Strict JSON field access with precise errors -*- C++ -*-===//
//
// Internal helper shared by the JSON readers of lib/Simulator (graph, machine,
// strategy, profile table). Every accessor names the field and its path in the
// document ("nodes[3].inputs[0]: missing field 'tensor'"), so a malformed
// file gets an error a user can act on. Not installed: lib/Simulator only.
//
//===----------------------------------------------------------------------===//

#ifndef SOAP_LIB_SIMULATOR_JSONUTIL_H
#define SOAP_LIB_SIMULATOR_JSONUTIL_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

#include <cstdint>
#include <string>

namespace soap {
namespace jsonutil {

/// Collects the first error; accessors return false once it is set.
class Reader {
public:
  bool failed() const { return !error.empty(); }
  const std::string &message() const { return error; }
  llvm::Error takeError(llvm::StringRef what) const {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   what.str() + ": " + error);
  }

  /// Records `path: message` (first error wins) and returns false.
  bool fail(llvm::StringRef path, const llvm::Twine &message);

  /// Rejects keys of `obj` not in `allowed`, naming the first unknown one.
  bool checkKeys(const llvm::json::Object &obj, llvm::StringRef path,
                 llvm::ArrayRef<llvm::StringRef> allowed);

  /// Field accessors. With `required == false` a missing field leaves `out`
  /// untouched and succeeds; a present field of the wrong type always fails.
  bool getString(const llvm::json::Object &obj, llvm::StringRef path,
                 llvm::StringRef key, std::string &out, bool required = true);
  bool getInt(const llvm::json::Object &obj, llvm::StringRef path,
              llvm::StringRef key, int64_t &out, bool required = true);
  bool getNumber(const llvm::json::Object &obj, llvm::StringRef path,
                 llvm::StringRef key, double &out, bool required = true);
  bool getBool(const llvm::json::Object &obj, llvm::StringRef path,
               llvm::StringRef key, bool &out, bool required = true);
  /// `out` is null when the field is absent and not required.
  bool getArray(const llvm::json::Object &obj, llvm::StringRef path,
                llvm::StringRef key, const llvm::json::Array *&out,
                bool required = true);
  bool getObject(const llvm::json::Object &obj, llvm::StringRef path,
                 llvm::StringRef key, const llvm::json::Object *&out,
                 bool required = true);

  /// Element accessors for arrays.
  bool asObject(const llvm::json::Value &v, llvm::StringRef path,
                const llvm::json::Object *&out);
  bool asInt(const llvm::json::Value &v, llvm::StringRef path, int64_t &out);
  bool asString(const llvm::json::Value &v, llvm::StringRef path,
                std::string &out);

private:
  std::string error;
};

/// `path[index]` and `path.key`.
std::string indexPath(llvm::StringRef path, size_t index);
std::string keyPath(llvm::StringRef path, llvm::StringRef key);

/// Parses `text` into a top-level object, or an error prefixed by `what`.
llvm::Expected<llvm::json::Value> parseTopObject(llvm::StringRef text,
                                                 llvm::StringRef what);

} // namespace jsonutil
} // namespace soap

#endif // SOAP_LIB_SIMULATOR_JSONUTIL_H
