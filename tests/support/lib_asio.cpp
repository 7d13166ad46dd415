// Asio and Beast compiled once for all of idlewheel's own programs (see the top-level
// CMakeLists.txt): every other translation unit only instantiates templates.
#include <boost/asio/impl/src.hpp>
#include <boost/beast/src.hpp>
