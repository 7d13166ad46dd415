// Asio compiled once for all of idlewheel's own programs (see the top-level CMakeLists.txt).
#include <boost/asio/impl/src.hpp>
