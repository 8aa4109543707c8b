// html_roles.h — what each HTML element does to the visible text: the one
// table that the tree walk (html.cpp) and the pass bounding the tree
// (html_bounds.cpp) share.  Internal to the core's HTML code.
#ifndef SIMHASH_HTML_ROLES_H
#define SIMHASH_HTML_ROLES_H

#include <gumbo.h>

#include <initializer_list>

namespace sh::html
{
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

}  // namespace sh::html

#endif  // SIMHASH_HTML_ROLES_H
