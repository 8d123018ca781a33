# What the three generated tables (RuleCatalog.cmake, ModeTable.cmake, FormatTable.cmake) share:
# a unit is a file named by its unit's name, sometimes with a partner file of the same name in a
# second folder, and a table generated from those names.
#
# rw_unit_names(<out-var> <dir> <ext> <name-regex> <naming>
#               [<partner-dir> <partner-ext> <partner-is> <this-is>])
# sets <out-var> to the sorted names of <dir>/*.<ext>. A name that does not match <name-regex>
# fails the configure run with <naming> (the convention); with a partner folder, so does a file
# of either folder whose partner is missing. Adding or removing a file re-runs the configure
# step (CONFIGURE_DEPENDS).
function(rw_unit_names out dir ext regex naming)
  file(RELATIVE_PATH rel ${PROJECT_SOURCE_DIR} ${dir})
  file(GLOB files CONFIGURE_DEPENDS ${dir}/*.${ext})
  set(names "")
  foreach(f ${files})
    get_filename_component(name ${f} NAME_WE)
    if(NOT name MATCHES "${regex}")
      message(FATAL_ERROR "${rel}/${name}.${ext}: ${naming}")
    endif()
    list(APPEND names ${name})
  endforeach()
  if(ARGC GREATER 5)
    set(pdir ${ARGV5})
    set(pext ${ARGV6})
    file(RELATIVE_PATH prel ${PROJECT_SOURCE_DIR} ${pdir})
    foreach(name ${names})
      if(NOT EXISTS ${pdir}/${name}.${pext})
        message(FATAL_ERROR "${rel}/${name}.${ext} has no ${ARGV7} ${prel}/${name}.${pext}")
      endif()
    endforeach()
    file(GLOB partner_files CONFIGURE_DEPENDS ${pdir}/*.${pext})
    foreach(f ${partner_files})
      get_filename_component(name ${f} NAME_WE)
      if(NOT EXISTS ${dir}/${name}.${ext})
        message(FATAL_ERROR "${prel}/${name}.${pext} has no ${ARGV8} ${rel}/${name}.${ext}")
      endif()
    endforeach()
  endif()
  list(SORT names)
  set(${out} ${names} PARENT_SCOPE)
endfunction()

# Writes <content> to <file> only when it differs, so a configure run does not rebuild what did
# not change.
function(rw_write_if_changed file content)
  file(WRITE ${file}.new "${content}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${file}.new ${file})
endfunction()
