// Asio and Beast compiled once for all of idlewheel's own programs and tests (see
// program_support/CMakeLists.txt): every other translation unit only instantiates templates.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
