// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_DETAIL_CHECK_CONFIG_HPP
#define IDLEWHEEL_DETAIL_CHECK_CONFIG_HPP

// IDLEWHEEL_CHECK_EXECUTOR: whether calls are checked against the wheel's executor
// (detail/executor_check.hpp). Default: on, unless NDEBUG is defined. Define it to 0 or 1 (the
// same in every translation unit of a program) to choose.
#if !defined(IDLEWHEEL_CHECK_EXECUTOR)
#if defined(NDEBUG)
#define IDLEWHEEL_CHECK_EXECUTOR 0
#else
#define IDLEWHEEL_CHECK_EXECUTOR 1
#endif
#endif

#endif
