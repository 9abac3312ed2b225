# Defines the imported target quire::utf8proc (libutf8proc, the one dependency),
# found through pkg-config when it is available, else by name on the default
# paths. quire's own build and the installed quireConfig.cmake both include this
# file, so the exported package names the target, never an absolute path of the
# machine quire was built on.
if(NOT TARGET quire::utf8proc)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(QUIRE_PC_UTF8PROC QUIET libutf8proc)
  endif()
  find_path(QUIRE_UTF8PROC_INCLUDE_DIR utf8proc.h HINTS ${QUIRE_PC_UTF8PROC_INCLUDE_DIRS})
  find_library(QUIRE_UTF8PROC_LIBRARY NAMES utf8proc HINTS ${QUIRE_PC_UTF8PROC_LIBRARY_DIRS})
  if(QUIRE_UTF8PROC_INCLUDE_DIR AND QUIRE_UTF8PROC_LIBRARY)
    add_library(quire::utf8proc UNKNOWN IMPORTED)
    set_target_properties(quire::utf8proc PROPERTIES
      IMPORTED_LOCATION "${QUIRE_UTF8PROC_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${QUIRE_UTF8PROC_INCLUDE_DIR}")
  endif()
endif()
