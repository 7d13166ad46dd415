// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// Standalone Asio compiled once for the unit tests of the IDLEWHEEL_STANDALONE_ASIO build (the
// Boost builds use the project's idlewheel_asio): every test only instantiates templates.
#include <asio/impl/src.hpp>
