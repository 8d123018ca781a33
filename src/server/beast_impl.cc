// Beast and Asio are compiled once, here (BOOST_BEAST_SEPARATE_COMPILATION and
// BOOST_ASIO_SEPARATE_COMPILATION), which keeps every other server file quick to build.
#include <boost/asio/impl/src.hpp>
#include <boost/asio/ssl/impl/src.hpp>
#include <boost/beast/src.hpp>
