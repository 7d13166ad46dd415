// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
// Boost.Test compiled from its headers, once, into the static library the unit tests link when
// they build against a Boost that comes without compiled libraries (IDLEWHEEL_BOOST_ROOT, e.g.
// the headers scripts/fetch_boost.sh unpacks). Without BOOST_TEST_MODULE this is exactly the
// static unit_test_framework: its main() calls the init_unit_test_suite() that each test
// file's BOOST_TEST_MODULE defines.
#include <boost/test/included/unit_test.hpp>

#include <boost/version.hpp>

#if defined(IDLEWHEEL_TEST_BOOST_VERSION)
static_assert(BOOST_VERSION == IDLEWHEEL_TEST_BOOST_VERSION,
              "Boost.Test compiles against another Boost than the one the tests were configured for");
#endif
