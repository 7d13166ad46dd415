#include <idlewheel/detail/wheel.hpp>
#define BOOST_TEST_MODULE wheel_differential
#include <boost/test/unit_test.hpp>
BOOST_AUTO_TEST_CASE(placeholder_replaced_by_the_differential_test) { BOOST_TEST(false); }
