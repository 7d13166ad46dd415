#define BOOST_TEST_MODULE test_beast_liveness
#include <boost/test/unit_test.hpp>
BOOST_AUTO_TEST_CASE(placeholder) { BOOST_TEST(false); }
