# Fails when README.md or a page under docs/ refers to something a user of the repository does
# not have: the development workspace's files or the project's issue numbers (test
# docs.self_contained).
file(GLOB_RECURSE pages "${SRC}/docs/*.md")
foreach(page "${SRC}/README.md" ${pages})
  file(STRINGS "${page}" lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    if(line MATCHES "\\.\\./shared|[Ii]ssue #[0-9]|development workspace")
      message(FATAL_ERROR "${page}:${n}: refers outside the repository: ${line}")
    endif()
  endforeach()
endforeach()
