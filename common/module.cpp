#include "common/module.hpp"

#include <dlfcn.h>

#include "common/error.hpp"
#include "common/files.hpp"

namespace cclab {

const void* load_module_entry(std::string_view file, const char* entry, std::string_view what,
                              std::string_view hint) {
  const std::string path = beside_executable(file);
  void* handle = dlopen(path.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr)
    throw BackendError(fmt::format("{} could not be loaded from {}: {} ({})", what, path, dlerror(), hint));
  using EntryFn = const void* (*)();
  auto fn = reinterpret_cast<EntryFn>(dlsym(handle, entry));
  if (fn == nullptr)
    throw BackendError(fmt::format("{} is not a module of this cclab build (no {})", path, entry));
  return fn();
}

}  // namespace cclab
