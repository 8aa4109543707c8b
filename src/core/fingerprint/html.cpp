// html.cpp — visible text of HTML pages through gumbo (see html.h).
#include "html.h"

#include "boundary.hpp"
#include "html_bounds.h"
#include "html_roles.h"

#include <gumbo.h>
#include <unicode/utf8.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <utility>
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

    // Bytes taken from malloc so far (chunks included).
    size_t used() const
    {
        return used_;
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

// ---- what each element does to the text: html_roles.h ---------------------

using namespace sh::html;

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

// The visible text of html into out, within memory_limit bytes of parser memory.
// The depth of the deepest node under root.
size_t tree_depth(const GumboNode *root)
{
    std::vector<std::pair<const GumboNode *, size_t>> todo{{root, 0}};
    size_t deepest = 0;
    while (!todo.empty())
    {
        auto [node, depth] = todo.back();
        todo.pop_back();
        deepest = depth > deepest ? depth : deepest;
        if (node->type != GUMBO_NODE_ELEMENT && node->type != GUMBO_NODE_DOCUMENT &&
            node->type != GUMBO_NODE_TEMPLATE)
            continue;
        const GumboVector &children =
            node->type == GUMBO_NODE_DOCUMENT ? node->v.document.children : node->v.element.children;
        for (unsigned int k = 0; k < children.length; k++)
            todo.push_back({static_cast<const GumboNode *>(children.data[k]), depth + 1});
    }
    return deepest;
}

sh_status parse_visible_text(const char *html, size_t len, size_t memory_limit, sh_interrupt_fn interrupt,
                             void *interrupt_arg, std::string &out, sh::HtmlParseStats *stats = nullptr)
{
    out.clear();
    std::string bounded;
    if (sh::html::bounds::bound_tree(html, len, bounded))
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
    if (stats != nullptr)
    {
        stats->parser_bytes = arena.used();
        stats->tree_depth = tree_depth(parsed->document);
    }
    return SH_OK;  // the arena frees the tree
}

// Runs use(text) on the visible text of html, parsed within the default
// memory budget; the status of the parse when it fails, else use's.
template <class Use>
sh_status with_visible_text(const char *html, size_t len, size_t memory_limit, sh_interrupt_fn interrupt,
                            void *interrupt_arg, Use &&use) noexcept
{
    size_t limit = SH_HTML_MEMORY_LIMIT(len);
    if (memory_limit != 0 && memory_limit < limit)
        limit = memory_limit;
    return sh::guard(
        [&]
        {
            std::string text;
            sh_status st = parse_visible_text(html, len, limit, interrupt, interrupt_arg, text);
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

sh_status html_text_stats(const char *html, size_t len, std::string &out, HtmlParseStats &stats) noexcept
{
    return guard([&] { return parse_visible_text(html, len, SIZE_MAX, nullptr, nullptr, out, &stats); });
}
}  // namespace sh

extern "C"
{
    sh_status sh_html_text(const char *html, size_t len, size_t memory_limit, sh_interrupt_fn interrupt,
                           void *interrupt_arg, char **out, size_t *out_len) noexcept
    {
        return with_visible_text(html, len, memory_limit, interrupt, interrupt_arg,
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

    sh_status sh_fingerprint_html(const char *html, size_t len, size_t memory_limit,
                                  const sh_text_options *opts, sh_interrupt_fn interrupt, void *interrupt_arg,
                                  uint64_t *out) noexcept
    {
        return with_visible_text(html, len, memory_limit, interrupt, interrupt_arg,
                                 [&](const std::string &text)
                                 { return sh_fingerprint_text(text.data(), text.size(), opts, out); });
    }

}  // extern "C"
