-- simhash_seomoz(text): the seomoz simhash-cpp text fingerprint, bit for bit.
-- Golden values: test/golden/seomoz_reference.py (independent reference that
-- checks itself against upstream's published values).
SELECT simhash_seomoz('hello world') AS hello_world,
       simhash_seomoz('hello, world!') AS punctuation_ignored,
       simhash_seomoz('Hello World') AS case_kept,
       simhash_seomoz('hello') AS one_token,
       simhash_seomoz('') AS empty,
       simhash_seomoz('123 ... !!!') AS no_letters;
-- digits and non-ASCII letters separate tokens
SELECT simhash_seomoz('x1y2z3') = simhash_seomoz('x y z') AS digits_separate,
       simhash_seomoz('café crème') AS cafe, simhash_seomoz('café') = simhash_seomoz('caf') AS accent_separates;
-- upstream's own test (simhash-cpp src/hash_test.cpp): the Jabberwocky
\set jabberwocky 'Twas brillig, and the slithy toves  Did gyre and gimble in the wabe:All mimsy were the borogoves,  And the mome raths outgrabe.Beware the Jabberwock, my son!  The jaws that bite, the claws that catch!Beware the Jubjub bird, and shun  The frumious Bandersnatch!He took his vorpal sword in hand:  Long time the manxome foe he sought --So rested he by the Tumtum tree,  And stood awhile in thought.And, as in uffish thought he stood,  The Jabberwock, with eyes of flame,Came whiffling through the tulgey wood,  And burbled as it came!One, two! One, two! And through and through  The vorpal blade went snicker-snack!He left it dead, and with its head  He went galumphing back.And, has thou slain the Jabberwock?  Come to my arms, my beamish boy!O frabjous day! Callooh! Callay!''  He chortled in his joy.'
SELECT simhash_seomoz(:'jabberwocky') AS jabberwocky,
       simhash_seomoz(:'jabberwocky') = '0x041379A587C66880' AS matches_upstream,
       simhash_seomoz(:'jabberwocky') <~> simhash_seomoz(:'jabberwocky' || ' - Lewis Carroll ''Alice In Wonderland''') AS byline_bits,
       simhash_seomoz(:'jabberwocky') <~> simhash_seomoz('There once was a man named Popewho loved an oscilloscope.  and the cyclical trace  of their carnal embracehad a damned-near-infinite slope') > 5 AS limerick_far;
-- as unsigned decimals, the way the seomoz tools and Python write them
SELECT simhash_seomoz('hello world')::numeric AS hello_world_decimal;
-- NULL in, NULL out; properties of the function
SELECT simhash_seomoz(NULL) IS NULL AS null_text;
SELECT p.proname, p.provolatile, p.proisstrict, p.proparallel, obj_description(p.oid, 'pg_proc') IS NOT NULL AS documented
  FROM pg_proc p WHERE p.proname = 'simhash_seomoz';
-- real pages (test/data/*.txt)
\set page `cat test/data/lighthouse.txt`
\set other `cat test/data/bakery.txt`
SELECT simhash_seomoz(:'page') AS lighthouse, simhash_seomoz(:'other') AS bakery,
       simhash_seomoz(:'page') <~> simhash_seomoz(replace(:'page', 'porridge', 'oatmeal')) <= 3 AS one_word_changed,
       simhash_seomoz(:'page') <~> simhash_seomoz(:'other') > 10 AS unrelated_far;
-- the same bytes in any server encoding: only ASCII letters make tokens
CREATE DATABASE simhash_seomoz_latin1 ENCODING 'LATIN1' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0;
SELECT simhash_seomoz('Café crème brûlée') AS utf8_value \gset
\c simhash_seomoz_latin1
SET client_encoding = UTF8;
CREATE EXTENSION simhash;
SELECT current_setting('server_encoding') AS server_encoding;
SELECT simhash_seomoz('Café crème brûlée') = :'utf8_value' AS same_in_latin1;
\c contrib_regression
DROP DATABASE simhash_seomoz_latin1;
