-- html_text(html) and simhash_html(html, shingle, tokens, casefold).
SELECT html_text('<p>Hello <b>wor</b>ld</p><p>second
   paragraph</p>') AS blocks_and_inline;
SELECT html_text('<html><head><title>Title</title><style>p {}</style><script>var x = 1;</script></head>
<body><nav>Home | About</nav><header>Site banner</header>
<article><header>Article title</header><p>Body text &amp; more.</p><footer>By someone</footer></article>
<aside>Related links</aside><noscript>Enable JavaScript</noscript><p hidden>secret</p>
<template><p>template</p></template><!-- a comment --><footer>Copyright</footer></body></html>') AS visible_text;
SELECT html_text('caf&eacute; &lt;3 &#x4E2D;&#25991; AT&T &copy') AS entities;
SELECT html_text('<ul><li>one<li>two</ul><table><tr><td>a<td>b<tr><td>c</table>x<br>y<pre>  keep
   this</pre>') AS lists_tables_pre;
-- malformed HTML never fails: HTML5 parsing is total
SELECT html_text('<p>unclosed <b>bold <i>both</p>after</div></span><<>>&&') AS malformed,
       html_text('') AS empty, html_text('   ') AS blank, html_text('plain text, no tags') AS plain;
-- simhash_html(h) = simhash(html_text(h)) with the same options
\set page `cat test/data/lighthouse.txt`
CREATE TABLE pages (id int, html text);
INSERT INTO pages VALUES
  (1, '<p>hello <i>world</i></p>'),
  (2, ''),
  (3, '<html><head><title>x</title></head><body><h1>The Quick Brown Fox</h1><p>jumps over the lazy dog</p></body>'),
  (4, '<div>日本語の<b>テキスト</b></div>'),
  (5, '<article><p>' || replace(:'page', E'\n\n', '</p><p>') || '</p></article><nav>menu</nav>');
SELECT id, simhash_html(html) = simhash(html_text(html)) AS default_options,
       simhash_html(html, 1) = simhash(html_text(html), 1) AS shingle_1,
       simhash_html(html, tokens => 'chars') = simhash(html_text(html), tokens => 'chars') AS chars,
       simhash_html(html, 2, 'words', false) = simhash(html_text(html), 2, 'words', false) AS no_casefold
  FROM pages ORDER BY id;
SELECT simhash_html('<p>hello <i>world</i></p>') AS hello_world, simhash(text 'hello world') AS text_value;
-- the page's fingerprint ignores its markup and boilerplate
SELECT simhash_html(html) <~> simhash(:'page'::text) AS bits_from_plain_text,
       simhash_html(html) = simhash_html('<nav>Other menu</nav>' || html || '<footer>(c) another site</footer><script>track()</script>') AS boilerplate_ignored
  FROM pages WHERE id = 5;
-- options are checked exactly as simhash(text) checks them
SELECT simhash_html('x', shingle => 0);
SELECT simhash_html('x', shingle => 65);
SELECT simhash_html('x', tokens => 'bytes');
SELECT simhash_html('<p>ONE two</p>', tokens => 'WORDS') = simhash(text 'one two') AS mode_case_insensitive;
-- NULL in, NULL out
SELECT html_text(NULL) IS NULL AS null_html, simhash_html(NULL) IS NULL AS null_fp,
       simhash_html('x', NULL) IS NULL AS null_option;
SELECT p.proname, pg_get_function_identity_arguments(p.oid) AS args, p.provolatile, p.proisstrict, p.proparallel,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS documented
  FROM pg_proc p WHERE p.proname IN ('html_text', 'simhash_html') ORDER BY 1;
-- deep nesting is bounded at 512 levels (gumbo's parse is quadratic in the depth): a
-- pathological page parses in linear time, and text below the bound is kept
SET statement_timeout = '60s';
SELECT length(html_text(repeat('<div><span>', 200000)));
SELECT html_text(repeat('<div>', 100000) || 'deep text' || repeat('</div>', 100000));
SELECT simhash_html(repeat('<b><i>', 100000) || 'deep text') = simhash_html('<b><i>deep text') AS deep_text_votes;
-- formatting elements a block's end closed are re-created at the next text;
-- with distinct attributes each stays active: bounded too (was 53200)
SELECT length(html_text((SELECT string_agg('<div><b a='||g||'>x</div>','') FROM generate_series(1,1400) g))) AS reconstructed;
-- below the depth bound the same elements are dropped and the same ones
-- separate words as above it (was 'tplhidnossidebody' under 600 <div>s)
SELECT html_text(repeat('<div>',600)||'<template>tpl</template><p hidden>hid</p><noscript>nos</noscript><aside>side</aside>body') AS below_bound,
       html_text(repeat('<div>',500)||'<template>tpl</template><p hidden>hid</p><noscript>nos</noscript><aside>side</aside>body') AS above_bound;
SELECT html_text(repeat('<div>',600)||'<p>one<p>two<table><td>three</td><td>four</td></table><b>fi</b>ve') AS below_bound_words;
RESET statement_timeout;
-- a LATIN1 database: the page is converted to UTF-8 for the parser and back
CREATE DATABASE simhash_html_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
SELECT simhash_html('<p>Café crème &eacute;t&eacute;</p>') AS utf8_value,
       simhash_html('<p>中文 text</p>') AS cjk_value \gset
\c simhash_html_latin1
SET client_encoding = UTF8;
CREATE EXTENSION simhash;
SELECT current_setting('server_encoding') AS server_encoding;
SELECT html_text('<p>Café crème &eacute;t&eacute;</p>') AS latin1_text,
       simhash_html('<p>Café crème &eacute;t&eacute;</p>') = :'utf8_value' AS same_in_latin1;
-- a character the server encoding lacks becomes "?" in html_text; simhash_html fingerprints it
SELECT simhash_html('<p>&#x4E2D;&#25991; text</p>') = :'cjk_value' AS fingerprints_anyway;
SELECT html_text('<p>&#x4E2D;&#25991;</p>');
-- C0 and C1 control bytes (Windows-1252 quotes stored as LATIN1 are C1
-- controls), which the parser turns into U+FFFD: "?" too, the rest intact
SELECT html_text(convert_from('\x3c703e636166e920933f9420c3a90120610b62853c2f703e'::bytea, 'LATIN1'));
SELECT count(*) AS pages, count(html_text(p)) AS texts FROM (
    SELECT convert_from(decode(string_agg(lpad(to_hex((i * 37 + j * 101) % 256), 2, '0'), ''), 'hex'), 'LATIN1') AS p
      FROM generate_series(1, 50) i, generate_series(1, 200) j
     WHERE (i * 37 + j * 101) % 256 <> 0
     GROUP BY i) s;
\c contrib_regression
DROP DATABASE simhash_html_latin1;
-- SQL_ASCII: valid UTF-8 is parsed as such; other bytes are rejected with the conversion error
CREATE DATABASE simhash_html_ascii ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
\c simhash_html_ascii
CREATE EXTENSION simhash;
SELECT html_text('<p>Café crème &eacute;t&eacute;</p>') AS utf8_text,
       simhash_html('<p>Café crème &eacute;t&eacute;</p>') = :'utf8_value' AS same_in_sql_ascii;
SELECT html_text(E'<p>a\xffb</p>');
SELECT simhash_html(E'<p>a\xffb</p>');
SELECT simhash(E'a\xffb'::text);   -- simhash(text) converts the same way
\c contrib_regression
DROP DATABASE simhash_html_ascii;
-- simhash.html_memory_limit bounds the memory of one parse: 53200 with a hint naming it
SET simhash.html_memory_limit = '1MB';
SELECT length(html_text(repeat('<p>x', 100000)));
SELECT simhash_html(repeat('<p>x', 100000)) IS NULL;
SELECT html_text('<p>a small page</p>');
RESET simhash.html_memory_limit;
SELECT length(html_text(repeat('<p>x', 100000)));
DROP TABLE pages;
