// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_CORE_CHECK_CONFIG_HPP
#define IDLEWHEEL_CORE_CHECK_CONFIG_HPP

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

// IDLEWHEEL_CHECK_LIFETIME: whether destroying an object while one of its operations is
// pending (idlewheel::beast::tcp_stream with a read, write or connect in flight) prints what
// happened and what to do on stderr and calls std::abort(), instead of leaving the pending
// completion to read a destroyed object. Default: IDLEWHEEL_CHECK_EXECUTOR's value (so on
// unless NDEBUG, and on in a release build that opts in to the executor check). Define it to 0
// or 1 (the same in every translation unit of a program) to choose; the check is a compare.
#if !defined(IDLEWHEEL_CHECK_LIFETIME)
#define IDLEWHEEL_CHECK_LIFETIME IDLEWHEEL_CHECK_EXECUTOR
#endif

// IDLEWHEEL_CHECK_USAGE: whether a misuse that would otherwise pass silently is reported: it
// prints what happened and what to do on stderr and calls std::abort() (a Beast websocket
// timeout set after idlewheel::beast::websocket_liveness::start(), seen by accepted()).
// Without the check the library repairs what it can (it turns Beast's timeouts off again).
// Default: IDLEWHEEL_CHECK_EXECUTOR's value (so on unless NDEBUG). Define it to 0 or 1 (the
// same in every translation unit of a program) to choose; the check is a compare.
#if !defined(IDLEWHEEL_CHECK_USAGE)
#define IDLEWHEEL_CHECK_USAGE IDLEWHEEL_CHECK_EXECUTOR
#endif

// IDLEWHEEL_CHECK_STREAM_EXECUTOR: whether idlewheel::beast::tcp_stream checks, in every build
// (NDEBUG or not), that what it cannot carry onto its executor runs there: an operation whose
// completion handler is bound to another executor, a completion run elsewhere, a stream on an
// io_context's own executor used from two threads. An operation merely started from another
// executor (another strand, the listener's) is carried onto the stream's first, as Beast's
// stream tolerates it. A violation prints what happened and what to do on stderr and calls
// std::abort(): the alternative is a wheel whose lists two threads change at once. Default: 1
// (its cost, measured: bench/README.md). Define it to 0 (the same in every translation unit)
// to leave the stream to IDLEWHEEL_CHECK_EXECUTOR.
#if !defined(IDLEWHEEL_CHECK_STREAM_EXECUTOR)
#define IDLEWHEEL_CHECK_STREAM_EXECUTOR 1
#endif

#endif
