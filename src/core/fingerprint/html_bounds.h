// html_bounds.h — the pass that bounds the tree gumbo builds (html_bounds.cpp).
// Internal to the core's HTML code.
#ifndef SIMHASH_HTML_BOUNDS_H
#define SIMHASH_HTML_BOUNDS_H

#include <cstddef>
#include <string>

namespace sh::html::bounds
{
// When the page passes a bound, writes into out the page with the tags past
// it left out (see html_bounds.cpp) and returns true; else returns false and
// leaves out alone, and the page is parsed as it is.
bool bound_tree(const char *html, size_t len, std::string &out);
}  // namespace sh::html::bounds

#endif  // SIMHASH_HTML_BOUNDS_H
