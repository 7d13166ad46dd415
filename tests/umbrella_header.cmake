# The two umbrella headers include what they promise, so that a header added to the directory
# and forgotten in its umbrella fails this test:
#  - idlewheel/idlewheel.hpp, "the whole API in one include": every public header of
#    lib/include/idlewheel/ (not core/, detail/ or impl/), except beast.hpp (the Beast umbrella,
#    separate so that users without Beast need not have it);
#  - idlewheel/beast.hpp, as <boost/beast.hpp>: every header of lib/include/idlewheel/beast/
#    (not impl/) except ssl_stream.hpp, which needs OpenSSL (Beast keeps <boost/beast/ssl.hpp>
#    apart likewise).
# Run: cmake -DSOURCE_DIR=<repo> -P <this file>
cmake_minimum_required(VERSION 3.20)
get_filename_component(source_dir "${SOURCE_DIR}" ABSOLUTE)
set(dir "${source_dir}/lib/include/idlewheel")

# umbrella: the header; prefix: what its includes start with; glob: the headers it must have;
# skip: the ones it must not.
function(check_umbrella umbrella prefix glob_dir skip minimum)
  file(READ "${dir}/${umbrella}" text)
  file(GLOB headers RELATIVE "${glob_dir}" "${glob_dir}/*.hpp")
  set(missing "")
  set(wrongly "")
  foreach(h IN LISTS headers)
    string(FIND "${text}" "#include <${prefix}${h}>" at)
    if(h IN_LIST skip)
      if(NOT at EQUAL -1)
        list(APPEND wrongly "${h}")
      endif()
    elseif(at EQUAL -1)
      list(APPEND missing "${h}")
    endif()
  endforeach()
  list(LENGTH headers count)
  if(count LESS minimum)
    message(FATAL_ERROR "umbrella_header: found only ${count} headers in ${glob_dir}: wrong SOURCE_DIR?")
  endif()
  if(missing)
    message(FATAL_ERROR "idlewheel/${umbrella} does not include: ${missing}")
  endif()
  if(wrongly)
    message(FATAL_ERROR "idlewheel/${umbrella} includes ${wrongly}, which it must leave out")
  endif()
  message(STATUS "idlewheel/${umbrella} includes every header of ${glob_dir} but ${skip}")
endfunction()

check_umbrella(idlewheel.hpp "idlewheel/" "${dir}" "idlewheel.hpp;beast.hpp" 10)
check_umbrella(beast.hpp "idlewheel/beast/" "${dir}/beast" "ssl_stream.hpp" 4)
