// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
//
// Asio's SSL part, compiled once for the examples that use TLS: the tree compiles Asio separately
// (idlewheel_asio, BOOST_ASIO_SEPARATE_COMPILATION), which leaves out its SSL sources (Beast's
// test/lib_asio_ssl.cpp does the same).
#include <boost/asio/ssl/impl/src.hpp>
