// html_bounds.cpp — bounds on the tree gumbo builds (see html_bounds.h).
#include "html_bounds.h"

#include "html_roles.h"

#include <gumbo.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// ---- bounds on the tree --------------------------------------------------------
//
// gumbo's tree construction walks the stack of open elements (scope checks)
// and the list of active formatting elements for many tags, so its time grows
// with the square of the nesting depth: 200,000 unclosed <div>s took 20 s.
// It also re-creates ("reconstructs") at the next text every formatting
// element (b, i, font, a, ...) that a block's end closed; with distinct
// attributes (HTML drops only the fourth identical one) they all stay
// active, so 1,400 `<div><b a=N>x</div>` made a million elements (53200).
// Browsers bound the depth of the tree (Blink at 512); we bound the depth and
// the active formatting elements of each scope, before the parse, in one
// linear pass over the tags that models gumbo's stack and list:
//   - a start tag that would open an element deeper than kMaxDepth, or the
//     kMaxFormatting+1st active formatting element of a scope, is left out,
//     with the end tag that closes it.  What it did to the text stays: a
//     block gives a <br> (a line), a table cell or replaced element a space,
//     an element whose content is not shown (script, template, nav, aside,
//     hidden, ...) is left out with that content, an inline one leaves nothing.
//   - The model errs on the deep side: it closes an element only where
//     gumbo's rules surely do (an end tag stops at the elements that stop
//     gumbo's search), so gumbo's tree is never much deeper than the model's.
// Nothing is rewritten unless a page passes a bound: every page within them
// is parsed byte for byte as before.
namespace sh::html::bounds
{
constexpr size_t kMaxDepth = 512;
constexpr size_t kMaxFormatting = 12;
// The elements the model holds (every search of it takes at most this many
// steps, as gumbo's own take kMaxDepth); past it, only the names of the
// elements left out are kept, and an end tag closes the nearest of that
// name among the last kOverflowSearch of them.
constexpr size_t kModelMax = 2 * kMaxDepth;
constexpr size_t kOverflowSearch = 64;
constexpr size_t kNameMax = 15;
constexpr size_t kNone = SIZE_MAX;

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

bool ascii_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r';
}

char ascii_lower(char c)
{
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
}

bool ascii_alpha(char c)
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
};

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

// Whether the attributes between from and to (a start tag after its name)
// include `hidden`.
bool has_hidden(const char *html, size_t from, size_t to)
{
    size_t p = from;
    while (p < to)
    {
        while (p < to && (ascii_space(html[p]) || html[p] == '/'))
            p++;
        if (p >= to || html[p] == '>')
            return false;
        size_t start = p++;  // a name may begin with '='
        while (p < to && !ascii_space(html[p]) && html[p] != '/' && html[p] != '>' && html[p] != '=')
            p++;
        if (p - start == 6)
        {
            char name[6];
            for (size_t k = 0; k < 6; k++)
                name[k] = ascii_lower(html[start + k]);
            if (std::memcmp(name, "hidden", 6) == 0)
                return true;
        }
        while (p < to && ascii_space(html[p]))
            p++;
        if (p < to && html[p] == '=')
        {
            p++;
            while (p < to && ascii_space(html[p]))
                p++;
            if (p < to && (html[p] == '"' || html[p] == '\''))
            {
                const void *q = std::memchr(html + p + 1, html[p], to - p - 1);
                p = q == nullptr ? to : static_cast<size_t>(static_cast<const char *>(q) - html) + 1;
            }
            else
                while (p < to && !ascii_space(html[p]) && html[p] != '>')
                    p++;
        }
    }
    return false;
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

// An element the model holds open.
struct OpenElement
{
    TagName name;
    uint32_t kind;
    uint32_t inside;      // the kinds of it and of every element it is in
    uint64_t marker;      // the innermost marker element it is in (or is), 0 for none
    uint64_t formatting;  // its entry on the formatting list, 0 for none
    bool left_out;        // not passed to the parser
};

// An entry of the list of active formatting elements.
struct FormattingEntry
{
    TagName name;
    uint32_t kind;
    uint64_t marker;  // the marker element whose scope it is in
    uint64_t id;
    bool open;  // its element is open; closed ones are re-created at the next text
};

// The pass (see above): copies html into out with the tags past a bound
// left out or replaced; run() says whether there were any.
class Bounder
{
public:
    Bounder(const char *html, size_t len, std::string &out) : html_(html), len_(len), out_(out) {}

    bool run()
    {
        size_t i = 0;
        open_.reserve(kMaxDepth);
        while (i < len_)
        {
            const void *lt = std::memchr(html_ + i, '<', len_ - i);
            if (lt == nullptr)
                break;
            i = static_cast<size_t>(static_cast<const char *>(lt) - html_);
            if (i + 3 < len_ && std::memcmp(html_ + i, "<!--", 4) == 0)
            {
                text_before(i);
                const char *close = static_cast<const char *>(memmem(html_ + i + 4, len_ - i - 4, "-->", 3));
                i = text_from_ = close == nullptr ? len_ : static_cast<size_t>(close - html_) + 3;
                continue;
            }
            bool end = i + 1 < len_ && html_[i + 1] == '/';
            size_t n0 = i + 1 + (end ? 1 : 0);
            if (n0 >= len_ || !ascii_alpha(html_[n0]))
            {
                if (n0 < len_ && (html_[i + 1] == '!' || html_[i + 1] == '?'))
                {
                    text_before(i);
                    i = text_from_ = tag_end(html_, len_, i + 1);  // doctype, bogus comment
                    continue;
                }
                i++;
                continue;
            }
            TagName name{};
            size_t k = n0;
            while (k < len_ && !ascii_space(html_[k]) && html_[k] != '/' && html_[k] != '>')
            {
                if (name.n < kNameMax)
                    name.s[name.n++] = ascii_lower(html_[k]);
                k++;
            }
            size_t next = tag_end(html_, len_, k);
            text_before(i);
            if (end)
                end_tag(name, i, next);
            else if (name.is("plaintext") && !(!open_.empty() && (open_.back().inside & kForeign)))
                break;  // the rest of the page is text (not in svg or MathML)
            else
                next = start_tag(name, i, k, next);
            i = text_from_ = next;
        }
        if (skipping_)
            replace(skip_from_, len_, "");
        if (rewrote_)
            out_.append(html_ + copied_, len_ - copied_);
        return rewrote_;
    }

private:
    // Text before a tag at i re-creates the closed formatting elements.
    void text_before(size_t i)
    {
        if (i > text_from_ && !skipping_)
            reconstruct();
    }

    // A start tag [i, next) whose name ends at name_end; returns where the
    // pass goes on (past a raw text element's content).
    size_t start_tag(const TagName &name, size_t i, size_t name_end, size_t next)
    {
        uint32_t kind = kind_of(name);
        if (kind & kFrameset)
        {
            if (!skipping_)
                replace(i, next, "");  // see kFrameset
            return next;
        }
        if ((kind & kForeign) || (!open_.empty() && (open_.back().inside & kForeign)))
        {
            // in svg and MathML no element's text is raw, and <x/> has no content
            kind &= ~kRawText;
            if (next >= 2 && html_[next - 2] == '/' && html_[next - 1] == '>')
                kind |= kVoid;
        }
        bool reconstructs = !(kind & kSpecial) || (kind & kReconstructs);
        if (kind & kRawText)
        {
            // its text, and its end tag, are not tags
            size_t close = find_end_tag(html_, len_, next, name);
            if (!skipping_ && reconstructs)
                reconstruct();
            return close < len_ ? tag_end(html_, len_, close + 2 + name.n) : len_;
        }
        if (kind & (kVoid | kNotPushed))
        {
            if (!skipping_ && reconstructs)
                reconstruct();
            return next;
        }
        if (!overflow_.empty() || open_.size() >= kModelMax)
        {
            overflow_.push_back({name, kind | current_inside()});
            if (!skipping_)
                leave_out(name, i, name_end, next, open_.size() + overflow_.size() - 1);
            return next;
        }
        close_implied(name, kind, i);
        if (!skipping_ && (kind & kFormatting) && (name.is("a") || name.is("nobr")))
        {
            size_t e = last_entry(name);
            if (e != kNone)
                close_formatting(e);  // an open a closes first
        }
        if (!skipping_ && reconstructs)
            reconstruct();
        bool over_formatting = (kind & kFormatting) && !skipping_ && segment_size() >= kMaxFormatting;
        bool left_out = skipping_ || open_.size() >= kMaxDepth || over_formatting;
        push(name, kind, left_out);
        if (skipping_)
            return next;  // inside an element left out with its content
        if (!left_out)
        {
            if (kind & kFormatting)
            {
                list_.push_back({name, kind, open_.back().marker, ++serial_, true});
                open_.back().formatting = serial_;
            }
            return next;
        }
        leave_out(name, i, name_end, next, open_.size() - 1);
        return next;
    }

    // A start tag [i, next) left out, of an element at depth `at`: its
    // content too when that is not shown, else a separator for what it did
    // to the text.
    void leave_out(const TagName &name, size_t i, size_t name_end, size_t next, size_t at)
    {
        Role role = role_of(name);
        uint32_t inside = current_inside();
        if (role == kSkip || (role == kPageFurniture && !(inside & kContent)) ||
            has_hidden(html_, name_end, next))
        {
            skipping_ = true;
            skip_at_ = at;
            skip_from_ = i;
            return;
        }
        replace(i, next, separator(role, inside));
    }

    // An end tag [i, next).
    void end_tag(const TagName &name, size_t i, size_t next)
    {
        uint32_t kind = kind_of(name);
        if (kind & kNotPushed)
            return;
        if (!overflow_.empty())
        {
            size_t j = overflow_.size();
            while (j > 0 && overflow_.size() - j < kOverflowSearch && !overflow_[j - 1].name.same(name))
                j--;
            if (j == 0 || !overflow_[j - 1].name.same(name))
                return;  // gumbo finds none either (or, far down, ignores it)
            uint32_t inside = overflow_[j - 1].inside;
            overflow_.resize(j - 1);
            if (!skipping_)
                replace(i, next, separator(role_of(name), inside));
            else if (open_.size() + overflow_.size() <= skip_at_)
                end_skip(next);
            return;
        }
        size_t d = find_open(name, kind);
        if (skipping_)
        {
            if (d == kNone || d > skip_at_)
            {
                if (d != kNone)
                    pop_to(d);
                return;  // left out with the rest
            }
            if (d == skip_at_)
            {
                pop_to(d);
                end_skip(next);
                return;
            }
            end_skip(i);  // it closes an element the skipped one is in
        }
        if (d != kNone && open_[d].left_out)
        {
            uint32_t inside = open_[d].inside;
            pop_to(d);
            replace(i, next, separator(role_of(name), inside));
            return;
        }
        if (kind & kFormatting)
        {
            size_t e = last_entry(name);
            if (e != kNone)
            {
                close_formatting(e);
                return;
            }
        }
        if (d != kNone && (kind & kForm))
            bury(d);  // the elements in it stay open
        else if (d != kNone)
            pop_to(d);
    }

    // Takes element d off the stack alone, as gumbo does: it stays in the
    // model, nameless and of no kind, so that the model's depth stays.
    void bury(size_t d)
    {
        OpenElement &e = open_[d];
        if (e.formatting != 0)
            for (size_t k = list_.size(); k > 0; k--)
                if (list_[k - 1].id == e.formatting)
                {
                    list_[k - 1].open = false;
                    break;
                }
        e.name = TagName{};
        e.kind = 0;
        e.formatting = 0;
    }

    // The text of a block left out: a line; of a cell or replaced element: a space.
    static const char *separator(Role role, uint32_t inside)
    {
        switch (role)
        {
            case kInline:
            case kSkip:
                return "";
            case kSeparate:
                return " ";
            default:
                return (inside & kSelect) ? " " : "<br>";  // a select ignores <br>
        }
    }

    // The open element an end tag of this name closes, kNone when gumbo's
    // search would stop (or might) before one.
    size_t find_open(const TagName &name, uint32_t kind) const
    {
        uint32_t barrier = kScope;
        if (kind & kTablePart)
            barrier = kTable;
        else if (!(kind & (kSpecial | kFormatting)))
            barrier |= kSpecial;  // "any other end tag"
        if (kind & kListItem)
            barrier |= kList;
        if (kind & kPara)
            barrier |= kParaBarrier;
        for (size_t d = open_.size(); d > 0; d--)
        {
            const OpenElement &e = open_[d - 1];
            if (e.name.same(name))
                return d - 1;
            if (e.kind & barrier)
                return kNone;
        }
        return kNone;
    }

    // Pops the nearest open element of a `target` kind (with those above it),
    // unless one of a `barrier` kind but not of a `pass` kind comes first.
    void close_nearest(uint32_t target, uint32_t barrier, uint32_t pass, size_t i)
    {
        if (open_.empty() || !(open_.back().inside & target))
            return;  // none open
        for (size_t d = open_.size(); d > 0; d--)
        {
            const OpenElement &e = open_[d - 1];
            if (e.kind & target)
            {
                pop_to(d - 1);
                if (skipping_ && open_.size() <= skip_at_)
                    end_skip(i);
                return;
            }
            if ((e.kind & barrier) && !(e.kind & pass))
                return;
        }
    }

    // The open elements a start tag at i closes first, as HTML's tree
    // construction does (roughly, erring on keeping them open).
    void close_implied(const TagName &t, uint32_t kind, size_t i)
    {
        uint32_t inside = open_.empty() ? 0 : open_.back().inside;
        if (inside & kForeign)
            return;  // svg and MathML elements close nothing
        if ((kind & (kCell | kRow | kSection)) && !(inside & kTable))
            return;  // ignored outside a table
        if (kind & kClosesPara)
            close_nearest(kPara, kParaBarrier | kScope, 0, i);
        if (kind & kListItem)
            close_nearest(kListItem, kSpecial, kPastForLi, i);
        else if (kind & kDef)
            close_nearest(kDef, kSpecial, kPastForLi, i);
        else if (kind & kCell)
            close_nearest(kCell, kRow | kTable, 0, i);
        else if (kind & kRow)
            close_nearest(kRow, kTable, 0, i);
        else if (kind & kSection)
            close_nearest(kSection | kRow, kTable, 0, i);
        else if (kind & kOption)
        {
            if (!open_.empty() && (open_.back().kind & kOption))
                close_nearest(kOption, 0, 0, i);
        }
        else if (kind & kSelfClosing)
        {
            size_t d = find_open(t, kind);
            if (d != kNone)
            {
                pop_to(d);
                if (skipping_ && open_.size() <= skip_at_)
                    end_skip(i);
            }
        }
    }

    void push(const TagName &name, uint32_t kind, bool left_out)
    {
        OpenElement e{name, kind, kind, 0, 0, left_out};
        if (!open_.empty())
        {
            e.inside |= open_.back().inside;
            e.marker = open_.back().marker;
        }
        if (e.inside & kForeign)
            e.kind |= kSpecial;  // svg and MathML elements stop searches: gumbo's rules differ there
        // a cell or caption outside a table is ignored: no new scope
        bool marks = (kind & kMarker) && (!(kind & kTablePart) || (e.inside & kTable));
        if (marks && !left_out)
            e.marker = ++serial_;
        open_.push_back(e);
    }

    // Pops the open elements from d up; their formatting entries stay, closed.
    void pop_to(size_t d)
    {
        for (size_t k = d; k < open_.size(); k++)
            if (open_[k].formatting != 0)
                for (size_t e = list_.size(); e > 0; e--)
                    if (list_[e - 1].id == open_[k].formatting)
                    {
                        list_[e - 1].open = false;
                        break;
                    }
        open_.resize(d);
        prune();
    }

    // The kinds of the innermost element and all it is in.
    uint32_t current_inside() const
    {
        if (!overflow_.empty())
            return overflow_.back().inside;
        return open_.empty() ? 0 : open_.back().inside;
    }

    uint64_t current_marker() const
    {
        return open_.empty() ? 0 : open_.back().marker;
    }

    // Drops the entries of scopes whose marker element has closed.
    void prune()
    {
        uint64_t m = current_marker();
        while (!list_.empty() && list_.back().marker > m)
            list_.pop_back();
    }

    // The entries of the current scope.
    size_t segment_size()
    {
        prune();
        uint64_t m = current_marker();
        size_t n = 0;
        for (size_t e = list_.size(); e > 0 && list_[e - 1].marker == m; e--)
            n++;
        return n;
    }

    // The last entry of the current scope with this name, or kNone.
    size_t last_entry(const TagName &name)
    {
        prune();
        uint64_t m = current_marker();
        for (size_t e = list_.size(); e > 0 && list_[e - 1].marker == m; e--)
            if (list_[e - 1].name.same(name))
                return e - 1;
        return kNone;
    }

    // The adoption agency (an end tag of a formatting element, or an a
    // start tag while one is active), modelled on the deep side: the entry
    // goes; its element is popped with those above it unless a special
    // element is among them (then it alone goes); out of scope nothing moves.
    void close_formatting(size_t e)
    {
        uint64_t id = list_[e].id;
        if (!list_[e].open)
        {
            list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(e));
            return;
        }
        size_t d = open_.size();
        while (d > 0 && open_[d - 1].formatting != id)
            d--;
        if (d == 0)
        {
            list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(e));
            return;
        }
        d--;
        bool special_above = false;
        for (size_t k = d + 1; k < open_.size(); k++)
        {
            if (open_[k].kind & kScope)
                return;  // not in scope: gumbo ignores the tag
            special_above |= (open_[k].kind & kSpecial) != 0;
        }
        list_.erase(list_.begin() + static_cast<std::ptrdiff_t>(e));
        if (!special_above)
            pop_to(d);
        else
            bury(d);
    }

    // Re-creates, as gumbo does before text and most start tags, the closed
    // entries at the end of the current scope.
    void reconstruct()
    {
        prune();
        uint64_t m = current_marker();
        size_t r = list_.size();
        while (r > 0 && list_[r - 1].marker == m && !list_[r - 1].open)
            r--;
        for (; r < list_.size() && open_.size() < kModelMax; r++)
        {
            push(list_[r].name, list_[r].kind, false);
            open_.back().formatting = list_[r].id;
            list_[r].open = true;
        }
    }

    // Ends the element left out with its content, which ended just before `to`.
    void end_skip(size_t to)
    {
        skipping_ = false;
        replace(skip_from_, to, "");
    }

    // Copies the page up to `from`, then `with` in place of [from, to).
    void replace(size_t from, size_t to, const char *with)
    {
        if (!rewrote_)
            out_.reserve(len_ + len_ / 8);
        rewrote_ = true;
        out_.append(html_ + copied_, from - copied_);
        out_.append(with);
        copied_ = to;
    }

    const char *html_;
    size_t len_;
    std::string &out_;
    std::vector<OpenElement> open_;
    std::vector<FormattingEntry> list_;
    uint64_t serial_ = 0;
    size_t copied_ = 0, text_from_ = 0;
    bool rewrote_ = false;
    struct Overflowed
    {
        TagName name;
        uint32_t inside;
    };
    std::vector<Overflowed> overflow_;  // elements left out past kModelMax
    bool skipping_ = false;
    size_t skip_at_ = 0, skip_from_ = 0;  // the element left out with its content, from
};

// Copies html into out with the tags past the bounds left out or replaced;
// false (out untouched) when there are none.
bool bound_tree(const char *html, size_t len, std::string &out)
{
    return Bounder(html, len, out).run();
}

}  // namespace sh::html::bounds
