# idlewheel_boost_test_suites(<out> <source>...): the Boost.Test suites the sources declare, so
# that a CMakeLists registers one ctest test per suite without naming them. A suite is a line
#     BOOST_AUTO_TEST_SUITE(name)
#     BOOST_AUTO_TEST_SUITE(name, *boost::unit_test::label("io_threads") * ...)
# (the macro and its decorators on one line, at the top level: nested suites are refused, as
# is any other form of TEST_SUITE line, so a suite is never left out silently). Sets <out> to
# the suite names (each once, in file and declaration order) and <out>_<name>_labels to the
# labels of its decorators, which the CMakeLists read as "register this variant too". Every
# source becomes a configure dependency: a suite added to a file is registered at the next build.
function(idlewheel_boost_test_suites out)
  set(suites)
  foreach(source IN LISTS ARGN)
    set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${source})
    file(STRINGS ${source} lines REGEX "^[ \t]*BOOST_[A-Z_]*TEST_SUITE")
    set(depth 0)
    foreach(line IN LISTS lines)
      if(line MATCHES "^BOOST_AUTO_TEST_SUITE_END\\(\\)")
        math(EXPR depth "${depth} - 1")
      elseif(line MATCHES "^BOOST_AUTO_TEST_SUITE\\(([A-Za-z_][A-Za-z0-9_]*)(,.*)?\\)[ \t]*$" AND depth EQUAL 0)
        set(suite ${CMAKE_MATCH_1})
        string(REGEX MATCHALL "label\\(\"[A-Za-z0-9_]+\"\\)" decorators "${CMAKE_MATCH_2}")
        list(APPEND suites ${suite})
        foreach(decorator IN LISTS decorators)
          string(REGEX REPLACE "label\\(\"([A-Za-z0-9_]+)\"\\)" "\\1" label "${decorator}")
          list(APPEND ${out}_${suite}_labels ${label})
        endforeach()
        set(${out}_${suite}_labels ${${out}_${suite}_labels} PARENT_SCOPE)
        math(EXPR depth "${depth} + 1")
      else()
        message(FATAL_ERROR "${source}: cannot register the Boost.Test suite of '${line}': write "
                            "BOOST_AUTO_TEST_SUITE(name[, decorators]) on one line, at the top level "
                            "(tests/demo_server/boost_test_suites.cmake)")
      endif()
    endforeach()
  endforeach()
  list(REMOVE_DUPLICATES suites)
  if(NOT suites)
    message(FATAL_ERROR "no BOOST_AUTO_TEST_SUITE in ${ARGN}")
  endif()
  set(${out} ${suites} PARENT_SCOPE)
endfunction()
