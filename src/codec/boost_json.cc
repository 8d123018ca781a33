// Boost.JSON's compiled part (error categories, the parser's stack), built once here rather than
// linked from a library: the static image then needs no Boost library beyond the headers.
#include <boost/json/src.hpp>
