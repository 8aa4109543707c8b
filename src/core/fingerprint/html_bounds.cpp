// html_bounds.cpp — bounds on the tree gumbo builds (see html_bounds.h).
#include "html_bounds.h"

#include "html_roles.h"
#include "html_tags.h"

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
//   - In svg and MathML the model follows the parser's foreign rules: no
//     void or raw-text HTML elements, "/>" closes, <a> is no formatting
//     element, the tags that leave foreign content close it (a left-out one
//     becomes <meta>, which closes it as well), integration points
//     (foreignObject, mi, ...) go back to HTML.  Past the depth bound, no
//     start tag reaches the parser at all, void and raw-text ones included.
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
constexpr size_t kNone = SIZE_MAX;

// An element the model holds open.
struct OpenElement
{
    TagName name;
    uint32_t kind;
    uint32_t inside;      // the kinds of it and of every element it is in
    uint64_t marker;      // the innermost marker element it is in (or is), 0 for none
    uint64_t formatting;  // its entry on the formatting list, 0 for none
    bool left_out;        // not passed to the parser
    // a template: whether a start tag came in it yet (the first decides how
    // the parser reads its content), and whether that was <col>: then the
    // parser ignores every start tag in it but col and template
    bool started;
    bool columns;
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
                if (len_ - i >= 9 && std::memcmp(html_ + i, "<![CDATA[", 9) == 0)
                {
                    // No CDATA section reaches the parser (gumbo 0.10 aborts
                    // on one in a table, and whether it is one depends on
                    // where the parser is): in svg and MathML its text,
                    // up to "]]>", goes on as plain text; in HTML, where it
                    // is a bogus comment, it is left out.
                    text_before(i);
                    bool foreign = (current_kind() & kForeignNs) != 0;
                    const char *close =
                        static_cast<const char *>(memmem(html_ + i + 9, len_ - i - 9, "]]>", 3));
                    size_t content_end = close == nullptr ? len_ : static_cast<size_t>(close - html_);
                    size_t after = close != nullptr ? content_end + 3
                                   : foreign        ? len_
                                                    : tag_end(html_, len_, i + 1);
                    if (!skipping_ && foreign)
                        replace_escaped(i, i + 9, content_end, after);
                    else if (!skipping_)
                        replace(i, after, "");
                    i = text_from_ = after;
                    continue;
                }
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
            else if (name.is("plaintext") && !foreign_start(name))
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
        if (i > text_from_ && !skipping_ && !foreign_text())
            reconstruct();
    }

    // Whether start tags go to a select (the innermost select, template or
    // table part is a select).
    bool in_select() const
    {
        if (!overflow_.empty() || !(current_inside() & kSelect))
            return false;
        for (size_t d = open_.size(); d > 0; d--)
        {
            const OpenElement &e = open_[d - 1];
            if (e.kind & kSelect)
                return true;
            if ((e.kind & (kScope | kTablePart | kForeignNs)) || e.name.is("template"))
                return false;
        }
        return false;
    }

    bool template_open() const
    {
        for (const OpenElement &e : open_)
            if (e.name.is("template"))
                return true;
        return false;
    }

    // The kind of the current node (the innermost open element).
    uint32_t current_kind() const
    {
        if (!overflow_.empty())
            return overflow_.back().kind;
        return open_.empty() ? 0 : open_.back().kind;
    }

    // Whether text goes into svg or MathML content (no formatting re-created).
    bool foreign_text() const
    {
        uint32_t k = current_kind();
        return (k & kForeignNs) && !(k & kIntegration);
    }

    // Whether a start tag of this name is svg or MathML content (before
    // the elements it leaves are closed, see breaks_out).
    bool foreign_start(const TagName &name) const
    {
        uint32_t k = current_kind();
        if (!(k & kForeignNs))
            return false;
        const TagName &current = overflow_.empty() ? open_.back().name : overflow_.back().name;
        if (k & kIntegration)  // MathML text integration points keep mglyph and malignmark
            return (k & kMathNs) && !current.is("annotation-xml") &&
                   (name.is("mglyph") || name.is("malignmark"));
        return !((k & kMathNs) && current.is("annotation-xml") && name.is("svg"));
    }

    // The kind of an element that a start tag in svg or MathML content opens.
    uint32_t foreign_kind(const TagName &name, const TagAttributes &a) const
    {
        uint32_t ns = current_kind() & kForeignNs;
        ns = (ns & kMathNs) ? kMathNs : kSvgNs;
        uint32_t k = ns | kSpecial | (a.self_closing ? uint32_t{kVoid} : 0u);
        bool svg_point = ns == kSvgNs && (name.is("foreignobject") || name.is("desc") || name.is("title"));
        bool math_point = ns == kMathNs && (name.is("mi") || name.is("mo") || name.is("mn") ||
                                            name.is("ms") || name.is("mtext"));
        if (svg_point || math_point)
            k |= kIntegration | kScope;
        else if (ns == kMathNs && name.is("annotation-xml"))
            k |= kScope | (a.html_encoding ? uint32_t{kIntegration} : 0u);
        return k;
    }

    // A start tag that leaves svg and MathML content: the foreign elements
    // up to the innermost HTML element or integration point close.  Returns
    // whether any did.
    bool leave_foreign(size_t i)
    {
        if (!overflow_.empty())
            return false;  // the model keeps them (the deep side)
        size_t d = open_.size();
        while (d > 0 && (open_[d - 1].kind & kForeignNs) && !(open_[d - 1].kind & kIntegration))
            d--;
        if (d == open_.size())
            return false;
        pop_to(d);
        if (skipping_ && open_.size() <= skip_at_)
            end_skip(i);
        return true;
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
        TagAttributes attrs = scan_attributes(html_, name_end, next);
        if (overflow_.empty() && !open_.empty() && open_.back().name.is("template"))
        {
            OpenElement &t = open_.back();
            if (!t.started)
                t.columns = name.is("col");
            t.started = true;
            if (t.columns && !name.is("col") && !name.is("template"))
                return next;  // ignored
        }
        bool foreign = foreign_start(name);
        bool left_foreign = false;
        if (foreign && breaks_out(name, attrs))
        {
            left_foreign = leave_foreign(i);
            foreign = false;
        }
        if (foreign)
            kind = foreign_kind(name, attrs);  // no HTML rule applies to it
        else if (kind & kForeign)
            kind |= (name.is("svg") ? kSvgNs : kMathNs) | (attrs.self_closing ? uint32_t{kVoid} : 0u);
        bool reconstructs = !foreign && (!(kind & kSpecial) || (kind & kReconstructs));
        // Past the depth bound no start tag reaches the parser: whether it
        // opens an element there depends on where the parser is, which the
        // model no longer follows.
        bool beyond = !skipping_ && open_.size() + overflow_.size() >= kMaxDepth;
        if ((kind & kRawText) && !name.is("script") && !name.is("textarea") && in_select())
            kind &= ~kRawText;  // a select ignores the tag
        if (kind & kRawText)
        {
            // its text, and its end tag, are not tags
            size_t close = find_end_tag(html_, len_, next, name);
            size_t end = close < len_ ? tag_end(html_, len_, close + 2 + name.n) : len_;
            if (beyond)
                replace_start(i, end, role_of(name), left_foreign);
            else if (!skipping_ && reconstructs)
                reconstruct();
            return end;
        }
        if (kind & (kVoid | kNotPushed))
        {
            if (beyond)
            {
                replace_start(i, next, role_of(name), left_foreign);
                return next;
            }
            // <hr> closes an open p; so does <isindex>, unless a form is open
            if (!foreign && (kind & kClosesPara) && !(name.is("isindex") && form_open_))
                close_implied(name, kind, i);
            if (!skipping_ && reconstructs)
                reconstruct();
            return next;
        }
        if (!overflow_.empty() || open_.size() >= kModelMax)
        {
            uint32_t inside = kind | current_inside();
            overflow_.push_back({name, kind, inside});
            if (!skipping_)
                leave_out(name, attrs, i, next, open_.size() + overflow_.size() - 1, left_foreign);
            return next;
        }
        if (!foreign)
            close_implied(name, kind, i);
        if (!foreign && (kind & kForm))
            form_open_ = true;
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
        leave_out(name, attrs, i, next, open_.size() - 1, left_foreign);
        return next;
    }

    // A start tag [i, next) left out, of an element at depth `at`: its
    // content too when that is not shown, else a separator for what it did
    // to the text.
    // A tag that closed svg or MathML elements (breaks_out) is replaced by
    // one that closes them as well and shows nothing, <meta>.
    void leave_out(const TagName &name, const TagAttributes &attrs, size_t i, size_t next, size_t at,
                   bool left_foreign)
    {
        Role role = role_of(name);
        uint32_t inside = current_inside();
        if (role == kSkip || (role == kPageFurniture && !(inside & kContent)) || attrs.hidden)
        {
            skipping_ = true;
            skip_at_ = at;
            skip_from_ = i;
            skip_with_ = left_foreign ? "<meta>" : "";
            return;
        }
        replace_start(i, next, role, left_foreign);
    }

    // Puts a separator (see leave_out) in place of the start tag [i, next).
    void replace_start(size_t i, size_t next, Role role, bool left_foreign)
    {
        const char *sep = role == kSkip ? "" : separator(role, current_inside());
        if (left_foreign)
        {
            replace(i, next, "<meta>");
            out_.append(sep);
        }
        else
            replace(i, next, sep);
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
        // in svg and MathML, it closes the nearest foreign element of its
        // name above the innermost HTML one; else HTML's rules apply
        size_t d = kNone;
        for (size_t k = open_.size(); k > 0 && (open_[k - 1].kind & kForeignNs); k--)
            if (open_[k - 1].name.same(name))
            {
                d = k - 1;
                break;
            }
        bool foreign = d != kNone;
        if (!foreign)
            d = find_open(name, kind);
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
        if ((kind & kFormatting) && !foreign)
        {
            size_t e = last_entry(name);
            if (e != kNone)
            {
                close_formatting(e);
                return;
            }
        }
        if ((kind & kForm) && !foreign && !template_open())
            form_open_ = false;
        if (d != kNone && (kind & kForm) && !foreign)
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
            if ((e.kind & barrier) || ((kind & kTablePart) && e.name.is("template")))
                return kNone;  // a template bounds the table scope
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
            if ((target & (kCell | kRow | kSection)) && e.name.is("template"))
                return;  // a template bounds the table scope
        }
    }

    // The open elements a start tag at i closes first, as HTML's tree
    // construction does (roughly, erring on keeping them open).
    void close_implied(const TagName &t, uint32_t kind, size_t i)
    {
        uint32_t inside = open_.empty() ? 0 : open_.back().inside;
        if ((kind & (kCell | kRow | kSection)) && !(inside & kTable))
            return;  // ignored outside a table
        // li, dd and dt look for an open one first, then close a p
        if (kind & kListItem)
            close_nearest(kListItem, kSpecial, kPastForLi, i);
        else if (kind & kDef)
            close_nearest(kDef, kSpecial, kPastForLi, i);
        if (kind & kClosesPara)
            close_nearest(kPara, kParaBarrier | kScope, 0, i);
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
        OpenElement e{name, kind, kind, 0, 0, left_out, false, false};
        if (!open_.empty())
        {
            e.inside |= open_.back().inside;
            e.marker = open_.back().marker;
        }
        if (e.kind & kForeignNs)
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
        replace(skip_from_, to, skip_with_);
    }

    // Copies the page up to `from`, then in place of [from, to) the text
    // [text, text_end) with '<' and '&' as character references.
    void replace_escaped(size_t from, size_t text, size_t text_end, size_t to)
    {
        replace(from, from, "");
        for (size_t k = text; k < text_end; k++)
        {
            if (html_[k] == '<')
                out_.append("&lt;");
            else if (html_[k] == '&')
                out_.append("&amp;");
            else
                out_.push_back(html_[k]);
        }
        copied_ = to;
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
        uint32_t kind;
        uint32_t inside;
    };
    std::vector<Overflowed> overflow_;  // elements left out past kModelMax
    bool skipping_ = false;
    size_t skip_at_ = 0, skip_from_ = 0;  // the element left out with its content, from
    const char *skip_with_ = "";          // what stands in its place
    // The parser's form element pointer may be set: <isindex> is then
    // ignored (set by any form start tag, cleared only by a </form> the
    // parser sees outside a template: the deep side).
    bool form_open_ = false;
};

// Copies html into out with the tags past the bounds left out or replaced;
// false (out untouched) when there are none.
bool bound_tree(const char *html, size_t len, std::string &out)
{
    return Bounder(html, len, out).run();
}

}  // namespace sh::html::bounds
