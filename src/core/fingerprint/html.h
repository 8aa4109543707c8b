/*
 * html.h — visible text of an HTML page, and its fingerprint (C API of the
 * core; see simhash_core.h for conventions).
 *
 * The page is parsed as HTML5 by gumbo (every byte string is a document, so
 * parsing never fails), character references are decoded, and the text of
 * the element tree is written out, skipping what a reader does not see as
 * the page's content:
 *   - never rendered: head (with title), script, style, noscript, template,
 *     datalist, iframe fallback text, svg title/desc, elements with the
 *     `hidden` attribute, comments;
 *   - page boilerplate: nav and aside; header and footer unless inside an
 *     article, section or main element (there they belong to that content).
 * Block-level elements and <br> start a new line, table cells and replaced
 * elements (img, input, ...) separate words, inline elements (b, a, span...)
 * do not; runs of HTML whitespace collapse to one space except inside pre,
 * textarea, listing, xmp and plaintext; the result is trimmed.
 *
 * Input and output are UTF-8 (invalid input sequences become U+FFFD).
 */
#ifndef SIMHASH_HTML_H
#define SIMHASH_HTML_H

#include "text.h"

#ifdef __cplusplus
#include <string>
extern "C"
{
#endif

    /*
     * The interrupt callback (simhash_core.h) is polled while parsing: gumbo's
     * worst cases, such as thousands of nested elements, take time quadratic in
     * the nesting depth.
     *
     * The visible text of `html`.  On SH_OK, *out is a malloc'ed buffer of
     * *out_len bytes plus a NUL, released with sh_free.  SH_ERR_NOMEM when
     * the parse needs more than SH_HTML_MEMORY_LIMIT(len) bytes, or more
     * than memory_limit bytes when that is not 0.
     */
    sh_status sh_html_text(const char *html, size_t len, size_t memory_limit, sh_interrupt_fn interrupt,
                           void *interrupt_arg, char **out, size_t *out_len) SH_NOEXCEPT;

    /* sh_fingerprint_text of the visible text: simhash_html(h) = simhash(html_text(h)). */
    sh_status sh_fingerprint_html(const char *html, size_t len, size_t memory_limit,
                                  const sh_text_options *opts, sh_interrupt_fn interrupt, void *interrupt_arg,
                                  uint64_t *out) SH_NOEXCEPT;

/* The parser's memory budget for a page of n bytes. */
#define SH_HTML_MEMORY_LIMIT(n) ((size_t)256 * 1024 * 1024 + (size_t)32 * (n))

#ifdef __cplusplus
}

namespace sh
{
// sh_html_text into a std::string with an explicit parser memory budget
// (tests use a small one to exercise the out-of-memory path).
sh_status html_text(const char *html, size_t len, size_t memory_limit, sh_interrupt_fn interrupt,
                    void *interrupt_arg, std::string &out) noexcept;

// What a parse took: tests check that it grows linearly with the page.
struct HtmlParseStats
{
    size_t parser_bytes;  // taken from malloc by the parser
    size_t tree_depth;    // of the deepest node of the tree it built
};

// html_text with no memory budget, and its HtmlParseStats.
sh_status html_text_stats(const char *html, size_t len, std::string &out, HtmlParseStats &stats) noexcept;
}  // namespace sh
#endif

#endif /* SIMHASH_HTML_H */
