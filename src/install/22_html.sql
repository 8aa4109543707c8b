-- ---------------------------------------------------------------------------
-- Web pages: visible text of HTML and its fingerprint.
-- ---------------------------------------------------------------------------
CREATE FUNCTION html_text(html text) RETURNS text
    AS 'MODULE_PATHNAME', 'simhash_html_text' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION html_text(text) IS
    'Visible text of an HTML page (HTML5 parse by gumbo): entities decoded, head/script/style/noscript/template/nav/aside/hidden and page-level header/footer dropped, one line per block';

CREATE FUNCTION simhash_html(html text, shingle int DEFAULT 3, tokens text DEFAULT 'words',
                             casefold bool DEFAULT true) RETURNS simhash
    AS 'MODULE_PATHNAME', 'simhash_html' LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
COMMENT ON FUNCTION simhash_html(text, int, text, bool) IS
    'SimHash of the visible text of an HTML page: simhash(html_text(html), shingle, tokens, casefold)';
