// The bad-client suite's entry point: demo_server's path comes after "--" on the command line.
#define BOOST_TEST_MODULE idlewheel reliability : demo_server against bad clients
#include <boost/test/unit_test.hpp>
