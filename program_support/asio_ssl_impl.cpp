// Asio's SSL part, compiled once for the programs that speak TLS (idlewheel_asio_ssl): the tree
// compiles Asio separately (asio_impl.cpp, BOOST_ASIO_SEPARATE_COMPILATION), which leaves out its
// SSL sources (Beast's test/lib_asio_ssl.cpp does the same).
#include <boost/asio/ssl/impl/src.hpp>
