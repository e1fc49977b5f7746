# Rooms the build enforces. A room is a folder of the tree with a target of its own (engine/ir is cclab_ir,
# sim/ is cclab_sim_headers, ...). A room's target puts on the include path a directory that holds one link,
# ${PROJECT_BINARY_DIR}/rooms/<target>/<folder> -> ${PROJECT_SOURCE_DIR}/<folder>, instead of the whole source
# tree: `#include "engine/plan/<name>.hpp"` resolves only in targets that link cclab_plan, so an include against the
# dependency direction (docs/design.md, "Rooms") fails to compile rather than waiting to fail at link time.
function(cclab_room target folder)
  get_target_property(kind ${target} TYPE)
  set(scope PUBLIC)
  if(kind STREQUAL "INTERFACE_LIBRARY")
    set(scope INTERFACE)
  endif()
  set(root ${PROJECT_BINARY_DIR}/rooms/${target})
  get_filename_component(parent ${root}/${folder} DIRECTORY)
  file(MAKE_DIRECTORY ${parent})
  file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${folder} ${root}/${folder} SYMBOLIC)
  target_include_directories(${target} ${scope} ${root})
endfunction()
