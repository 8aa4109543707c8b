// html_tags.cpp — names, kinds and attributes of tags (see html_tags.h).
#include "html_tags.h"

#include <gumbo.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sh::html::bounds
{
struct KnownTag
{
    const char *name;
    uint32_t kind;
};

constexpr uint32_t kBlock = kClosesPara | kSpecial;
constexpr uint32_t kVoidSpecial = kVoid | kSpecial;
constexpr uint32_t kRawSpecial = kRawText | kSpecial;

const KnownTag kKnown[] = {
    {"area", kVoidSpecial | kReconstructs},
    {"base", kVoidSpecial},
    {"br", kVoidSpecial | kReconstructs},
    {"col", kVoidSpecial},
    {"embed", kVoidSpecial | kReconstructs},
    {"hr", kVoidSpecial | kClosesPara},
    {"img", kVoidSpecial | kReconstructs},
    {"input", kVoidSpecial | kReconstructs},
    {"link", kVoidSpecial},
    {"meta", kVoidSpecial},
    {"param", kVoidSpecial},
    {"source", kVoidSpecial},
    {"track", kVoidSpecial},
    {"wbr", kVoidSpecial | kReconstructs},
    {"basefont", kVoidSpecial},
    {"bgsound", kVoidSpecial},
    {"frame", kVoidSpecial},
    {"keygen", kVoidSpecial | kReconstructs},
    {"script", kRawSpecial},
    {"style", kRawSpecial},
    {"textarea", kRawSpecial},
    {"title", kRawSpecial},
    {"xmp", kRawSpecial | kReconstructs},
    {"iframe", kRawSpecial},
    {"noembed", kRawSpecial},
    {"noframes", kRawSpecial},
    {"address", kBlock | kPastForLi},
    {"article", kBlock | kContent},
    {"aside", kBlock},
    {"blockquote", kBlock},
    {"center", kBlock},
    {"details", kBlock},
    {"dialog", kBlock},
    {"dir", kBlock},
    {"div", kBlock | kPastForLi},
    {"fieldset", kBlock},
    {"figcaption", kBlock},
    {"figure", kBlock},
    {"footer", kBlock},
    {"form", kBlock | kForm},
    {"isindex", kVoidSpecial | kClosesPara},  // a form with an <hr>: it closes a p
    {"h1", kBlock},
    {"h2", kBlock},
    {"h3", kBlock},
    {"h4", kBlock},
    {"h5", kBlock},
    {"h6", kBlock},
    {"header", kBlock},
    {"hgroup", kBlock},
    {"listing", kBlock},
    {"main", kBlock | kContent},
    {"nav", kBlock},
    {"pre", kBlock},
    {"section", kBlock | kContent},
    {"summary", kBlock},
    {"p", kBlock | kPara | kPastForLi},
    {"ul", kBlock | kList},
    {"ol", kBlock | kList},
    {"menu", kBlock | kList},
    {"li", kBlock | kListItem},
    {"dl", kBlock | kDefList},
    {"dt", kBlock | kDef},
    {"dd", kBlock | kDef},
    {"table", kBlock | kTable | kParaBarrier | kScope | kTablePart},
    {"td", kCell | kParaBarrier | kSpecial | kScope | kMarker | kTablePart},
    {"th", kCell | kParaBarrier | kSpecial | kScope | kMarker | kTablePart},
    {"tr", kRow | kSpecial | kTablePart},
    {"tbody", kSection | kSpecial | kTablePart},
    {"thead", kSection | kSpecial | kTablePart},
    {"tfoot", kSection | kSpecial | kTablePart},
    {"caption", kParaBarrier | kSpecial | kScope | kMarker | kTablePart},
    {"colgroup", kSpecial},
    {"button", kParaBarrier | kSelfClosing | kSpecial},
    {"object", kParaBarrier | kSpecial | kScope | kMarker | kReconstructs},
    {"applet", kParaBarrier | kSpecial | kScope | kMarker | kReconstructs},
    {"marquee", kParaBarrier | kSpecial | kScope | kMarker | kReconstructs},
    {"template", kParaBarrier | kSpecial | kScope | kMarker},
    {"noscript", kSpecial},
    {"frameset", kSpecial | kFrameset},
    {"head", kSpecial},
    {"html", kSpecial | kNotPushed},
    {"body", kSpecial | kNotPushed},
    {"option", kOption},
    {"select", kSelect | kSpecial | kReconstructs},
    {"a", kFormatting},
    {"b", kFormatting},
    {"big", kFormatting},
    {"code", kFormatting},
    {"em", kFormatting},
    {"font", kFormatting},
    {"i", kFormatting},
    {"nobr", kFormatting},
    {"s", kFormatting},
    {"small", kFormatting},
    {"strike", kFormatting},
    {"strong", kFormatting},
    {"tt", kFormatting},
    {"u", kFormatting},
    {"svg", kForeign | kSpecial},
    {"math", kForeign | kSpecial},
};

uint32_t kind_of(const TagName &t)
{
    for (const KnownTag &k : kKnown)
        if (t.is(k.name))
            return k.kind;
    return 0;
}

// What the element of this name does to the visible text (RoleTable).
Role role_of(const TagName &t)
{
    static const RoleTable table;
    return table.role[gumbo_tagn_enum(t.s, static_cast<unsigned int>(t.n))];
}

// Position just past the end of the tag whose name ends at i (quoted attribute
// values may hold '>'), or len.
size_t tag_end(const char *html, size_t len, size_t i)
{
    while (i < len && html[i] != '>')
    {
        if (html[i] == '=')
        {
            i++;
            while (i < len && ascii_space(html[i]))
                i++;
            if (i < len && (html[i] == '"' || html[i] == '\''))
            {
                const void *q = std::memchr(html + i + 1, html[i], len - i - 1);
                i = q == nullptr ? len : static_cast<size_t>(static_cast<const char *>(q) - html) + 1;
                continue;
            }
        }
        else
            i++;
    }
    return i < len ? i + 1 : len;
}

// Whether [s, s + n) is, ASCII case aside, the lowercase word w.
bool word_is(const char *s, size_t n, const char *w)
{
    if (std::strlen(w) != n)
        return false;
    for (size_t k = 0; k < n; k++)
        if (ascii_lower(s[k]) != w[k])
            return false;
    return true;
}

// The attributes between from and to (a start tag after its name, to just
// past its '>'), read as HTML's tokenizer does.
TagAttributes scan_attributes(const char *html, size_t from, size_t to)
{
    TagAttributes a;
    size_t p = from;
    while (p < to)
    {
        while (p < to && (ascii_space(html[p]) || html[p] == '/'))
        {
            if (html[p] == '/' && p + 1 < to && html[p + 1] == '>')
                a.self_closing = true;
            p++;
        }
        if (p >= to || html[p] == '>')
            return a;
        size_t start = p++;  // a name may begin with '='
        while (p < to && !ascii_space(html[p]) && html[p] != '/' && html[p] != '>' && html[p] != '=')
            p++;
        const char *name = html + start;
        size_t name_len = p - start;
        a.hidden |= word_is(name, name_len, "hidden");
        a.font_style |= word_is(name, name_len, "color") || word_is(name, name_len, "face") ||
                        word_is(name, name_len, "size");
        while (p < to && ascii_space(html[p]))
            p++;
        if (p < to && html[p] == '=')
        {
            p++;
            while (p < to && ascii_space(html[p]))
                p++;
            size_t value = p, value_end;
            if (p < to && (html[p] == '"' || html[p] == '\''))
            {
                const void *q = std::memchr(html + p + 1, html[p], to - p - 1);
                value++;
                value_end = q == nullptr ? to : static_cast<size_t>(static_cast<const char *>(q) - html);
                p = q == nullptr ? to : value_end + 1;
            }
            else
            {
                while (p < to && !ascii_space(html[p]) && html[p] != '>')
                    p++;
                value_end = p;
            }
            if (word_is(name, name_len, "encoding"))
                a.html_encoding = word_is(html + value, value_end - value, "text/html") ||
                                  word_is(html + value, value_end - value, "application/xhtml+xml");
        }
    }
    return a;
}

// Whether a start tag of this name leaves svg and MathML content: the
// parser closes the foreign elements and treats it as HTML.
bool breaks_out(const TagName &t, const TagAttributes &a)
{
    static const char *const kBreakout[] = {
        "b",     "big",   "blockquote", "body",   "br",   "center", "code",  "dd", "div",  "dl",   "dt",
        "em",    "embed", "h1",         "h2",     "h3",   "h4",     "h5",    "h6", "head", "hr",   "i",
        "img",   "li",    "listing",    "menu",   "meta", "nobr",   "ol",    "p",  "pre",  "ruby", "s",
        "small", "span",  "strong",     "strike", "sub",  "sup",    "table", "tt", "u",    "ul",   "var"};
    for (const char *b : kBreakout)
        if (t.is(b))
            return true;
    return t.is("font") && a.font_style;
}

// Position of the next "</name" (any case) at or after i, or len.
size_t find_end_tag(const char *html, size_t len, size_t i, const TagName &name)
{
    for (;;)
    {
        const void *lt = i < len ? std::memchr(html + i, '<', len - i) : nullptr;
        if (lt == nullptr)
            return len;
        i = static_cast<size_t>(static_cast<const char *>(lt) - html);
        if (i + 2 + name.n <= len && html[i + 1] == '/')
        {
            size_t k = 0;
            while (k < name.n && ascii_lower(html[i + 2 + k]) == name.s[k])
                k++;
            if (k == name.n)
                return i;
        }
        i++;
    }
}

}  // namespace sh::html::bounds
