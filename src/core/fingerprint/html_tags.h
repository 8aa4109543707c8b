// html_tags.h — what the pass bounding the tree (html_bounds.cpp) knows of
// tags: their names, kinds and attributes (html_tags.cpp).  Internal to the
// core's HTML code.
#ifndef SIMHASH_HTML_TAGS_H
#define SIMHASH_HTML_TAGS_H

#include "html_roles.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sh::html::bounds
{
constexpr size_t kNameMax = 15;

// A tag's name, lowercase, cut at kNameMax characters.
struct TagName
{
    char s[kNameMax + 1];
    size_t n;

    bool is(const char *name) const
    {
        return std::strlen(name) == n && std::memcmp(name, s, n) == 0;
    }
    bool same(const TagName &o) const
    {
        return o.n == n && std::memcmp(o.s, s, n) == 0;
    }
};

inline bool ascii_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

inline char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

inline bool ascii_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// What the pass knows of an element, as bits.
enum : uint32_t
{
    kVoid = 1u << 0,        // has no content: br, img, ...
    kRawText = 1u << 1,     // its content is text up to its end tag: script, style, ...
    kClosesPara = 1u << 2,  // its start tag closes an open p
    kPara = 1u << 3,
    kParaBarrier = 1u << 4,  // where the search for an open p stops ("button scope")
    kListItem = 1u << 5,
    kList = 1u << 6,
    kDef = 1u << 7,
    kDefList = 1u << 8,
    kCell = 1u << 9,
    kRow = 1u << 10,
    kTable = 1u << 11,
    kSection = 1u << 12,
    kOption = 1u << 13,
    kSelect = 1u << 14,
    kSelfClosing = 1u << 15,   // button: a start tag closes an open one
    kSpecial = 1u << 16,       // HTML's "special" elements: most end tags stop at them
    kScope = 1u << 17,         // scope boundaries: table, cells, caption, object, ...
    kFormatting = 1u << 18,    // b, i, a, font, ...: on the list of active formatting elements
    kMarker = 1u << 19,        // opens a new scope of that list
    kPastForLi = 1u << 20,     // address, div, p: li, dd and dt look past them
    kContent = 1u << 21,       // article, section, main: header and footer inside are content
    kReconstructs = 1u << 22,  // a special element whose start tag re-creates formatting
    kTablePart = 1u << 23,     // its end tag searches down to a table
    kNotPushed = 1u << 24,     // html, body: a start tag merges into the one element
    kForeign = 1u << 25,       // svg, math: inside, tags follow other rules
    kForm = 1u << 26,          // its end tag removes it alone from the stack
    kFrameset = 1u << 27,      // left out: gumbo honours or ignores it by rules the model lacks
    // Of an element (not of those it is in): its namespace when not HTML,
    // and whether it is an integration point (start tags and text inside
    // it follow HTML's rules again: svg foreignObject, desc, title; MathML
    // mi, mo, mn, ms, mtext, and annotation-xml of an HTML encoding).
    kSvgNs = 1u << 28,
    kMathNs = 1u << 29,
    kIntegration = 1u << 30,
};
constexpr uint32_t kForeignNs = kSvgNs | kMathNs;

// What the pass reads from the attributes of a start tag.
struct TagAttributes
{
    bool hidden = false;         // has `hidden`
    bool self_closing = false;   // ends in "/>" (not a '/' ending an unquoted value)
    bool font_style = false;     // has color, face or size (a font that leaves svg and MathML)
    bool html_encoding = false;  // encoding is text/html or application/xhtml+xml
};

// The kinds (the enum above) of an HTML element of this name.
uint32_t kind_of(const TagName &t);

// What the element of this name does to the visible text (RoleTable).
Role role_of(const TagName &t);

// Position just past the end of the tag whose name ends at i (quoted attribute
// values may hold '>'), or len.
size_t tag_end(const char *html, size_t len, size_t i);

// The attributes between from and to (a start tag after its name, to just
// past its '>'), read as HTML's tokenizer does.
TagAttributes scan_attributes(const char *html, size_t from, size_t to);

// Whether a start tag of this name leaves svg and MathML content: the
// parser closes the foreign elements and treats it as HTML.
bool breaks_out(const TagName &t, const TagAttributes &a);

// Position of the next "</name" (any case) at or after i, or len.
size_t find_end_tag(const char *html, size_t len, size_t i, const TagName &name);
}  // namespace sh::html::bounds

#endif  // SIMHASH_HTML_TAGS_H
