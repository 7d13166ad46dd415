#include <idlewheel/detail/wheel.hpp>

#define BOOST_TEST_MODULE detail_wheel
#include <boost/test/unit_test.hpp>

using idlewheel::detail::hook_list;
using idlewheel::detail::wheel;
using idlewheel::detail::wheel_node;

BOOST_AUTO_TEST_CASE(fires_at_exact_tick)
{
    wheel w;
    wheel_node n;
    w.insert(n, 100);
    BOOST_TEST(w.next_due().value() == 100U);
    hook_list out;
    BOOST_TEST(w.advance(99, out) == 0U);
    BOOST_TEST(out.empty());
    BOOST_TEST(w.advance(100, out) == 1U);
    BOOST_TEST(out.front() == &n);
}
