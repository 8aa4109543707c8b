-- Hamming distance.
SELECT '0'::simhash <~> 'ffffffffffffffff' AS all_bits, 'f0f0'::simhash <~> '0f0f' AS sixteen,
       simhash_distance('1'::simhash, '3'::simhash) AS one, simhash_distance(-1::bigint, 0::bigint) AS sixty_four;
SELECT 0::bigint <~> 7::bigint AS three;
-- commutative
SELECT count(*) FILTER (WHERE a <~> b <> b <~> a) AS asymmetric
  FROM generate_series(1, 50) i,
       LATERAL (SELECT (hashint8(i) * 4294967296::bigint + hashint8(-i))::simhash a,
                       (hashint8(i * 7) * 4294967296::bigint)::simhash b) s;
SELECT oprcom::regoperator FROM pg_operator WHERE oprname = '<~>' ORDER BY 1;
