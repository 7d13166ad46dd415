// demo_server's black-box integration tests: one executable, one Boost.Test suite per
// behaviour (ctest runs each suite as its own test, see CMakeLists.txt). The binary under test
// is the first argument after "--".
#define BOOST_TEST_MODULE demo_server
#include <boost/test/unit_test.hpp>
