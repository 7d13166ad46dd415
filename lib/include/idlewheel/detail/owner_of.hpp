// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_OWNER_OF_HPP
#define IDLEWHEEL_DETAIL_OWNER_OF_HPP

// The library's liveness objects find their session with idlewheel::owner_offset, which is
// public (idlewheel/owner_offset.hpp); this name is kept for the headers that use it.

#include <idlewheel/owner_offset.hpp>

namespace idlewheel::detail {

using idlewheel::owner_offset;

}  // namespace idlewheel::detail

#endif
