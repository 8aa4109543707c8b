// html.cpp — visible text of HTML pages through gumbo (see html.h).
#include "html.h"

#include "boundary.hpp"

#include <gumbo.h>
#include <unicode/utf8.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <vector>

namespace
{

// ---- memory ---------------------------------------------------------------
//
// gumbo allocates through our callbacks.  A bump arena makes its many small
// allocations cheap, frees the whole tree at once (no recursive
// gumbo_destroy_output over deep trees), and bounds the memory of one parse.
// gumbo does not check for allocation failure, so running out throws
// std::bad_alloc through gumbo's C frames (built with unwind tables, holding
// no resources of their own: everything is in the arena) to sh_html_text.
class Arena
{
public:
    Arena(size_t limit, sh_interrupt_fn interrupt, void *interrupt_arg)
        : limit_(limit), interrupt_(interrupt), interrupt_arg_(interrupt_arg)
    {
    }
    Arena(const Arena &) = delete;
    Arena &operator=(const Arena &) = delete;

    ~Arena()
    {
        while (head_ != nullptr)
        {
            Chunk *next = head_->next;
            std::free(head_);
            head_ = next;
        }
    }

    // n bytes, aligned for any type; polls the interrupt callback first.
    void *allocate(size_t n)
    {
        // gumbo allocates for every token: a fine-grained place to poll.
        if (interrupt_ != nullptr && interrupt_(interrupt_arg_) != 0)
            throw sh::Interrupted();
        n = (n + kAlign - 1) & ~(kAlign - 1);
        if (n > static_cast<size_t>(end_ - next_))
            grow(n);
        void *p = next_;
        next_ += n;
        return p;
    }

private:
    static constexpr size_t kAlign = alignof(std::max_align_t);
    struct alignas(std::max_align_t) Chunk
    {
        Chunk *next;
    };

    // A new chunk of at least n bytes; std::bad_alloc past the budget or when malloc fails.
    void grow(size_t n)
    {
        if (chunk_size_ < (size_t{4} << 20))
            chunk_size_ *= 2;
        size_t size = n + sizeof(Chunk) > chunk_size_ ? n + sizeof(Chunk) : chunk_size_;
        if (size > limit_ - used_)
            throw std::bad_alloc();
        auto *chunk = static_cast<Chunk *>(std::malloc(size));
        if (chunk == nullptr)
            throw std::bad_alloc();
        used_ += size;
        chunk->next = head_;
        head_ = chunk;
        next_ = reinterpret_cast<char *>(chunk) + sizeof(Chunk);
        end_ = reinterpret_cast<char *>(chunk) + size;
    }

    size_t limit_;
    sh_interrupt_fn interrupt_;
    void *interrupt_arg_;
    size_t used_ = 0;
    size_t chunk_size_ = size_t{32} * 1024;
    Chunk *head_ = nullptr;
    char *next_ = nullptr;
    char *end_ = nullptr;
};

// gumbo's allocator callbacks; release is a no-op, the arena frees everything at once.
void *arena_allocate(void *arena, size_t n)
{
    return static_cast<Arena *>(arena)->allocate(n);
}

// gumbo's release callback: nothing to do, the arena frees everything at once.
void arena_release(void *, void *) {}

// ---- what each element does to the text ------------------------------------

enum Role : unsigned char
{
    kInline = 0,    // its text runs on with the surrounding text
    kSkip,          // neither it nor anything inside is visible content
    kBlock,         // starts and ends a line
    kBreak,         // <br>: ends a line
    kSeparate,      // table cells and replaced elements: a word boundary
    kPreformatted,  // a block whose whitespace is kept
    kSection,       // a block in which header/footer are content
    kPageFurniture  // header/footer: skipped unless inside a kSection
};

struct RoleTable
{
    Role role[GUMBO_TAG_LAST + 1];

    RoleTable() : role()
    {
        for (GumboTag t : {GUMBO_TAG_HEAD, GUMBO_TAG_TITLE, GUMBO_TAG_SCRIPT, GUMBO_TAG_STYLE,
                           GUMBO_TAG_NOSCRIPT, GUMBO_TAG_TEMPLATE, GUMBO_TAG_DATALIST, GUMBO_TAG_IFRAME,
                           GUMBO_TAG_DESC, GUMBO_TAG_NAV, GUMBO_TAG_ASIDE})
            role[t] = kSkip;
        for (GumboTag t : {GUMBO_TAG_HTML,       GUMBO_TAG_BODY,    GUMBO_TAG_ADDRESS, GUMBO_TAG_BLOCKQUOTE,
                           GUMBO_TAG_CENTER,     GUMBO_TAG_DD,      GUMBO_TAG_DETAILS, GUMBO_TAG_DIR,
                           GUMBO_TAG_DIV,        GUMBO_TAG_DL,      GUMBO_TAG_DT,      GUMBO_TAG_FIELDSET,
                           GUMBO_TAG_FIGCAPTION, GUMBO_TAG_FIGURE,  GUMBO_TAG_FORM,    GUMBO_TAG_FRAMESET,
                           GUMBO_TAG_H1,         GUMBO_TAG_H2,      GUMBO_TAG_H3,      GUMBO_TAG_H4,
                           GUMBO_TAG_H5,         GUMBO_TAG_H6,      GUMBO_TAG_HGROUP,  GUMBO_TAG_HR,
                           GUMBO_TAG_LEGEND,     GUMBO_TAG_LI,      GUMBO_TAG_MENU,    GUMBO_TAG_OL,
                           GUMBO_TAG_P,          GUMBO_TAG_SUMMARY, GUMBO_TAG_TABLE,   GUMBO_TAG_CAPTION,
                           GUMBO_TAG_THEAD,      GUMBO_TAG_TBODY,   GUMBO_TAG_TFOOT,   GUMBO_TAG_TR,
                           GUMBO_TAG_UL,         GUMBO_TAG_OPTION,  GUMBO_TAG_OPTGROUP})
            role[t] = kBlock;
        role[GUMBO_TAG_BR] = kBreak;
        for (GumboTag t : {GUMBO_TAG_TD, GUMBO_TAG_TH, GUMBO_TAG_IMG, GUMBO_TAG_INPUT, GUMBO_TAG_BUTTON,
                           GUMBO_TAG_SELECT, GUMBO_TAG_EMBED, GUMBO_TAG_OBJECT, GUMBO_TAG_VIDEO,
                           GUMBO_TAG_AUDIO, GUMBO_TAG_CANVAS, GUMBO_TAG_SVG, GUMBO_TAG_MATH})
            role[t] = kSeparate;
        for (GumboTag t :
             {GUMBO_TAG_PRE, GUMBO_TAG_TEXTAREA, GUMBO_TAG_LISTING, GUMBO_TAG_XMP, GUMBO_TAG_PLAINTEXT})
            role[t] = kPreformatted;
        for (GumboTag t : {GUMBO_TAG_ARTICLE, GUMBO_TAG_SECTION, GUMBO_TAG_MAIN})
            role[t] = kSection;
        role[GUMBO_TAG_HEADER] = kPageFurniture;
        role[GUMBO_TAG_FOOTER] = kPageFurniture;
    }
};

// What an element does to the text (see RoleTable); foreign (svg, MathML) elements apart.
Role role_of(const GumboElement &e)
{
    static const RoleTable table;
    // svg and MathML reuse a few HTML names (title, style, script, a...);
    // only their text-hiding elements matter there.
    if (e.tag_namespace != GUMBO_NAMESPACE_HTML)
    {
        switch (e.tag)
        {
            case GUMBO_TAG_TITLE:
            case GUMBO_TAG_DESC:
            case GUMBO_TAG_STYLE:
            case GUMBO_TAG_SCRIPT:
                return kSkip;
            default:
                return e.tag == GUMBO_TAG_SVG || e.tag == GUMBO_TAG_MATH ? kSeparate : kInline;
        }
    }
    return table.role[e.tag];
}

// ---- writing the text ----------------------------------------------------------

// HTML's ASCII white space.
inline bool html_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

// Collects text with collapsed whitespace: separators are pending until the
// next visible character, so there is no leading, trailing or doubled one.
class TextWriter
{
public:
    explicit TextWriter(std::string &out) : out_(out) {}

    // A word separator before the next visible text.
    void space()
    {
        if (pending_ < kSpace)
            pending_ = kSpace;
    }

    // A line break before the next visible text.
    void line()
    {
        pending_ = kLine;
    }

    // A text node: white space runs collapse to one separator unless preformatted.
    void text(const char *s, size_t n, bool preformatted)
    {
        if (preformatted)
        {
            if (n > 0)
                emit(s, n);
            return;
        }
        size_t i = 0;
        while (i < n)
        {
            if (html_space(static_cast<unsigned char>(s[i])))
            {
                space();
                i++;
                continue;
            }
            size_t start = i;
            while (i < n && !html_space(static_cast<unsigned char>(s[i])))
                i++;
            emit(s + start, i - start);
        }
    }

private:
    enum Pending
    {
        kNone,
        kSpace,
        kLine
    };

    // Visible characters, after the pending separator (none at the very start).
    void emit(const char *s, size_t n)
    {
        if (pending_ != kNone && !out_.empty())
            out_.push_back(pending_ == kLine ? '\n' : ' ');
        pending_ = kNone;
        out_.append(s, n);
    }

    std::string &out_;
    Pending pending_ = kNone;
};

// Gumbo can hand out ill-formed UTF-8: a numeric character reference past
// 2^31 (&#xcccccccc;) wraps to a negative code point, written as one byte.
// Returns the text itself when it is well-formed, else a copy in scratch
// with each ill-formed sequence replaced by U+FFFD.
std::string_view well_formed(const char *t, std::string &scratch)
{
    const int64_t n = static_cast<int64_t>(std::strlen(t));
    const auto *u = reinterpret_cast<const uint8_t *>(t);
    int64_t i = 0;
    UChar32 c;
    while (i < n)
    {
        int64_t at = i;
        U8_NEXT(u, i, n, c);
        if (c < 0)
        {
            scratch.assign(t, static_cast<size_t>(at));
            while (at < n)
            {
                int64_t next = at;
                U8_NEXT(u, next, n, c);
                if (c < 0)
                    scratch += "\xEF\xBF\xBD";
                else
                    scratch.append(t + at, static_cast<size_t>(next - at));
                at = next;
            }
            return scratch;
        }
    }
    return std::string_view(t, static_cast<size_t>(n));
}

// Whether the element has the `hidden` attribute.
bool hidden(const GumboElement &e)
{
    return e.attributes.length > 0 && gumbo_get_attribute(&e.attributes, "hidden") != nullptr;
}

// Walks the tree without recursion (documents may nest arbitrarily deep).
void visible_text(const GumboNode *root, std::string &out)
{
    struct Frame
    {
        const GumboNode *node;
        unsigned int next_child;
        Role role;
    };
    TextWriter writer(out);
    std::string scratch;
    std::vector<Frame> stack;
    int preformatted = 0, sections = 0;

    auto enter = [&](const GumboNode *node)
    {
        switch (node->type)
        {
            case GUMBO_NODE_TEXT:
            case GUMBO_NODE_CDATA:
            case GUMBO_NODE_WHITESPACE:
            {
                std::string_view t = well_formed(node->v.text.text, scratch);
                writer.text(t.data(), t.size(), preformatted > 0);
                return;
            }
            case GUMBO_NODE_ELEMENT:
            case GUMBO_NODE_DOCUMENT:
                break;
            default:
                return;  // comments, template contents
        }
        Role role = node->type == GUMBO_NODE_DOCUMENT ? kBlock : role_of(node->v.element);
        if (role == kSkip || (role == kPageFurniture && sections == 0))
            return;
        if (node->type == GUMBO_NODE_ELEMENT && hidden(node->v.element))
            return;
        switch (role)
        {
            case kBreak:
                writer.line();
                return;  // void element
            case kSeparate:
                writer.space();
                break;
            case kPreformatted:
                preformatted++;
                writer.line();
                break;
            case kSection:
                sections++;
                writer.line();
                break;
            case kInline:
                break;
            default:
                writer.line();
                break;
        }
        stack.push_back({node, 0, role});
    };
    auto leave = [&](const Frame &f)
    {
        switch (f.role)
        {
            case kSeparate:
                writer.space();
                break;
            case kInline:
                break;
            case kPreformatted:
                preformatted--;
                writer.line();
                break;
            case kSection:
                sections--;
                writer.line();
                break;
            default:
                writer.line();
                break;
        }
    };

    enter(root);
    while (!stack.empty())
    {
        Frame &top = stack.back();
        const GumboVector &children = top.node->type == GUMBO_NODE_DOCUMENT ? top.node->v.document.children
                                                                            : top.node->v.element.children;
        if (top.next_child < children.length)
        {
            const auto *child = static_cast<const GumboNode *>(children.data[top.next_child++]);
            enter(child);  // may grow the stack: `top` is not used after this
            continue;
        }
        Frame done = top;
        stack.pop_back();
        leave(done);
    }
}

// ---- nesting bound ----------------------------------------------------------
//
// gumbo's tree construction walks the stack of open elements (scope checks)
// and the list of active formatting elements for many tags, so its time grows
// with the square of the nesting depth: 200,000 unclosed <div>s take 20 s.
// Browsers bound the depth of the tree (Blink at 512); so do we, before the
// parse, in one linear pass over the tags: a start tag that would open an
// element deeper than kMaxDepth is left out, with the end tag that closes it,
// and the text inside stays, as text of the element at depth kMaxDepth.  The
// pass follows HTML's nesting only roughly (void elements, raw text, comments,
// the elements a same-kind start tag closes: p, li, table cells and rows, ...)
// and rewrites nothing unless a page goes past the bound, so every page
// within it is parsed byte for byte as before.
namespace nesting
{
constexpr size_t kMaxDepth = 512;
constexpr size_t kNameMax = 15;

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
    kSelfClosing = 1u << 15,  // a start tag closes an open one of the same name: a, button, nobr
};

struct KnownTag
{
    const char *name;
    uint32_t kind;
};

const KnownTag kKnown[] = {
    {"area", kVoid},
    {"base", kVoid},
    {"br", kVoid},
    {"col", kVoid},
    {"embed", kVoid},
    {"hr", kVoid | kClosesPara},
    {"img", kVoid},
    {"input", kVoid},
    {"link", kVoid},
    {"meta", kVoid},
    {"param", kVoid},
    {"source", kVoid},
    {"track", kVoid},
    {"wbr", kVoid},
    {"basefont", kVoid},
    {"bgsound", kVoid},
    {"frame", kVoid},
    {"keygen", kVoid},
    {"script", kRawText},
    {"style", kRawText},
    {"textarea", kRawText},
    {"title", kRawText},
    {"xmp", kRawText},
    {"iframe", kRawText},
    {"noembed", kRawText},
    {"noframes", kRawText},
    {"address", kClosesPara},
    {"article", kClosesPara},
    {"aside", kClosesPara},
    {"blockquote", kClosesPara},
    {"center", kClosesPara},
    {"details", kClosesPara},
    {"dialog", kClosesPara},
    {"dir", kClosesPara},
    {"div", kClosesPara},
    {"fieldset", kClosesPara},
    {"figcaption", kClosesPara},
    {"figure", kClosesPara},
    {"footer", kClosesPara},
    {"form", kClosesPara},
    {"h1", kClosesPara},
    {"h2", kClosesPara},
    {"h3", kClosesPara},
    {"h4", kClosesPara},
    {"h5", kClosesPara},
    {"h6", kClosesPara},
    {"header", kClosesPara},
    {"hgroup", kClosesPara},
    {"listing", kClosesPara},
    {"main", kClosesPara},
    {"nav", kClosesPara},
    {"pre", kClosesPara},
    {"section", kClosesPara},
    {"summary", kClosesPara},
    {"p", kClosesPara | kPara},
    {"ul", kClosesPara | kList},
    {"ol", kClosesPara | kList},
    {"menu", kClosesPara | kList},
    {"li", kClosesPara | kListItem},
    {"dl", kClosesPara | kDefList},
    {"dt", kClosesPara | kDef},
    {"dd", kClosesPara | kDef},
    {"table", kClosesPara | kTable | kParaBarrier},
    {"td", kCell | kParaBarrier},
    {"th", kCell | kParaBarrier},
    {"tr", kRow},
    {"tbody", kSection},
    {"thead", kSection},
    {"tfoot", kSection},
    {"caption", kParaBarrier},
    {"button", kParaBarrier | kSelfClosing},
    {"object", kParaBarrier},
    {"template", kParaBarrier},
    {"marquee", kParaBarrier},
    {"applet", kParaBarrier},
    {"option", kOption},
    {"select", kSelect},
    {"a", kSelfClosing},
    {"nobr", kSelfClosing},
};

uint32_t kind_of(const TagName &t)
{
    for (const KnownTag &k : kKnown)
        if (t.is(k.name))
            return k.kind;
    return 0;
}

struct OpenElement
{
    TagName name;
    uint32_t kind;
};

// Pops the open elements down to (and with) the nearest one of a `target`
// kind (or, with target 0, of the given name), unless one of a `barrier`
// kind comes first.
void close_nearest(std::vector<OpenElement> &open, uint32_t target, uint32_t barrier, const TagName *name)
{
    for (size_t d = open.size(); d > 0; d--)
    {
        const OpenElement &e = open[d - 1];
        if (target != 0 ? (e.kind & target) != 0 : e.name.same(*name))
        {
            open.resize(d - 1);
            return;
        }
        if ((e.kind & barrier) != 0)
            return;
    }
}

// The open elements a start tag closes first, as HTML's tree construction
// does (roughly: enough that ordinary pages do not seem to nest).
void close_implied(std::vector<OpenElement> &open, const TagName &t, uint32_t kind)
{
    if (kind & kClosesPara)
        close_nearest(open, kPara, kParaBarrier, nullptr);
    if (kind & kListItem)
        close_nearest(open, kListItem, kList, nullptr);
    else if (kind & kDef)
        close_nearest(open, kDef, kDefList, nullptr);
    else if (kind & kCell)
        close_nearest(open, kCell, kRow | kTable, nullptr);
    else if (kind & kRow)
        close_nearest(open, kRow, kTable, nullptr);
    else if (kind & kSection)
        close_nearest(open, kSection | kRow, kTable, nullptr);
    else if (kind & kOption)
        close_nearest(open, kOption, kSelect, nullptr);
    else if (kind & kSelfClosing)
        close_nearest(open, 0, 0, &t);
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

// Copies html into out without the tags that would nest deeper than
// kMaxDepth; false (out untouched) when there are none.
bool bound_depth(const char *html, size_t len, std::string &out)
{
    std::vector<OpenElement> open;
    size_t i = 0, copied = 0, dropped = 0;
    bool rewrote = false;

    open.reserve(kMaxDepth);
    auto drop = [&](size_t from, size_t to)
    {
        if (!rewrote)
            out.reserve(len);
        rewrote = true;
        out.append(html + copied, from - copied);
        copied = to;
    };
    while (i < len)
    {
        const void *lt = std::memchr(html + i, '<', len - i);
        if (lt == nullptr)
            break;
        i = static_cast<size_t>(static_cast<const char *>(lt) - html);
        if (i + 3 < len && std::memcmp(html + i, "<!--", 4) == 0)
        {
            const char *close = static_cast<const char *>(memmem(html + i + 4, len - i - 4, "-->", 3));
            i = close == nullptr ? len : static_cast<size_t>(close - html) + 3;
            continue;
        }
        bool end = i + 1 < len && html[i + 1] == '/';
        size_t n0 = i + 1 + (end ? 1 : 0);
        if (n0 >= len || !ascii_alpha(html[n0]))
        {
            if (n0 < len && (html[i + 1] == '!' || html[i + 1] == '?'))
            {
                i = tag_end(html, len, i + 1);  // doctype, bogus comment
                continue;
            }
            i++;
            continue;
        }
        TagName name{};
        size_t k = n0;
        while (k < len && !ascii_space(html[k]) && html[k] != '/' && html[k] != '>')
        {
            if (name.n < kNameMax)
                name.s[name.n++] = ascii_lower(html[k]);
            k++;
        }
        size_t next = tag_end(html, len, k);
        if (end)
        {
            if (dropped > 0)
            {
                dropped--;
                drop(i, next);
            }
            else
            {
                close_nearest(open, 0, 0, &name);
            }
        }
        else if (name.is("plaintext"))
            break;  // the rest of the page is text
        else if (kind_of(name) & kRawText)
        {
            // its text, and its end tag, are not tags
            size_t close = find_end_tag(html, len, next, name);
            next = close < len ? tag_end(html, len, close + 2 + name.n) : len;
        }
        else if (!(kind_of(name) & kVoid))
        {
            uint32_t kind = kind_of(name);

            close_implied(open, name, kind);
            if (open.size() < kMaxDepth)
                open.push_back({name, kind});
            else
            {
                dropped++;
                drop(i, next);
            }
        }
        i = next;
    }
    if (rewrote)
        out.append(html + copied, len - copied);
    return rewrote;
}

}  // namespace nesting

// The visible text of html into out, within memory_limit bytes of parser memory.
sh_status parse_visible_text(const char *html, size_t len, size_t memory_limit, sh_interrupt_fn interrupt,
                             void *interrupt_arg, std::string &out)
{
    out.clear();
    std::string bounded;
    if (nesting::bound_depth(html, len, bounded))
    {
        html = bounded.data();
        len = bounded.size();
    }
    Arena arena(memory_limit, interrupt, interrupt_arg);
    GumboOptions options = kGumboDefaultOptions;
    options.allocator = arena_allocate;
    options.deallocator = arena_release;
    options.userdata = &arena;
    options.max_errors = 0;  // parse errors are not recorded: nobody reads them
    GumboOutput *parsed = gumbo_parse_with_options(&options, html, len);
    out.reserve(len / 4);
    visible_text(parsed->document, out);
    return SH_OK;  // the arena frees the tree
}

// Runs use(text) on the visible text of html, parsed within the default
// memory budget; the status of the parse when it fails, else use's.
template <class Use>
sh_status with_visible_text(const char *html, size_t len, sh_interrupt_fn interrupt, void *interrupt_arg,
                            Use &&use) noexcept
{
    return sh::guard(
        [&]
        {
            std::string text;
            sh_status st =
                parse_visible_text(html, len, SH_HTML_MEMORY_LIMIT(len), interrupt, interrupt_arg, text);
            return st != SH_OK ? st : use(text);
        });
}

}  // namespace

namespace sh
{
// The visible text of an HTML document (the boundary entry point; see html.h).
sh_status html_text(const char *html, size_t len, size_t memory_limit, sh_interrupt_fn interrupt,
                    void *interrupt_arg, std::string &out) noexcept
{
    return guard([&] { return parse_visible_text(html, len, memory_limit, interrupt, interrupt_arg, out); });
}
}  // namespace sh

extern "C"
{
    sh_status sh_html_text(const char *html, size_t len, sh_interrupt_fn interrupt, void *interrupt_arg,
                           char **out, size_t *out_len) noexcept
    {
        return with_visible_text(html, len, interrupt, interrupt_arg,
                                 [&](const std::string &text)
                                 {
                                     auto *buf = static_cast<char *>(std::malloc(text.size() + 1));
                                     if (buf == nullptr)
                                         return SH_ERR_NOMEM;
                                     std::memcpy(buf, text.c_str(), text.size() + 1);
                                     *out = buf;
                                     *out_len = text.size();
                                     return SH_OK;
                                 });
    }

    sh_status sh_fingerprint_html(const char *html, size_t len, const sh_text_options *opts,
                                  sh_interrupt_fn interrupt, void *interrupt_arg, uint64_t *out) noexcept
    {
        return with_visible_text(html, len, interrupt, interrupt_arg,
                                 [&](const std::string &text)
                                 { return sh_fingerprint_text(text.data(), text.size(), opts, out); });
    }

}  // extern "C"
