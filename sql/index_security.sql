-- Who may run simhash_index_check(), and as whom it runs the index's code.
\set VERBOSITY default
CREATE ROLE regress_simhash_owner;
CREATE ROLE regress_simhash_other;
GRANT CREATE ON SCHEMA public TO regress_simhash_owner;

-- EXECUTE is not granted to PUBLIC.
SELECT has_function_privilege('public', 'simhash_index_check(regclass)', 'EXECUTE') AS public_may_execute;

-- A table owner's index expression that would take the caller's rights: it
-- reports who runs it, tries to make its author superuser and to change a
-- setting of the caller's session.
SET ROLE regress_simhash_owner;
CREATE FUNCTION sec_escalate() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
    ALTER ROLE regress_simhash_owner SUPERUSER;
  END IF;
END $$;
CREATE FUNCTION sec_trap(fp simhash) RETURNS simhash LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  IF current_setting('regress.trap_armed', true) = 'on' THEN
    RAISE NOTICE 'index expression runs as %', current_user;
    PERFORM set_config('work_mem', '1234kB', false);
    PERFORM sec_escalate();
  END IF;
  RETURN fp;
END $$;
CREATE TABLE sec_t (id int, fp simhash);
INSERT INTO sec_t VALUES (1, 'fedcba9876543210');
CREATE INDEX sec_t_trap ON sec_t USING simhash (sec_trap(fp));
CREATE INDEX sec_t_fp ON sec_t USING simhash (fp);
CREATE INDEX sec_t_id ON sec_t (id);
RESET ROLE;

-- The superuser checks the index: the expression runs as the owner, in a
-- security-restricted operation, and its setting does not outlive the check.
SET regress.trap_armed = on;
SET work_mem = '4MB';
SELECT simhash_index_check('sec_t_trap');
SHOW work_mem;
SELECT rolsuper FROM pg_roles WHERE rolname = 'regress_simhash_owner';
RESET regress.trap_armed;

-- The owner may check its table once granted EXECUTE; another role may not,
-- even with EXECUTE (42501 before any lock; test/specs/index_check_lock.spec).
SET ROLE regress_simhash_owner;
SELECT simhash_index_check('sec_t_fp');
RESET ROLE;
GRANT EXECUTE ON FUNCTION simhash_index_check(regclass) TO regress_simhash_owner, regress_simhash_other;
SET ROLE regress_simhash_owner;
SELECT simhash_index_check('sec_t_fp');
SET ROLE regress_simhash_other;
SELECT simhash_index_check('sec_t_fp');
\echo :LAST_ERROR_SQLSTATE
-- the same refusal for any index of the table, whatever its access method
SELECT simhash_index_check('sec_t_id');
\echo :LAST_ERROR_SQLSTATE
-- a member of the owner role may
RESET ROLE;
GRANT regress_simhash_owner TO regress_simhash_other;
SET ROLE regress_simhash_other;
SELECT simhash_index_check('sec_t_fp');
RESET ROLE;
REVOKE regress_simhash_owner FROM regress_simhash_other;

-- What is not a simhash index.
SELECT simhash_index_check(4294967295::oid::regclass);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_index_check(0::oid::regclass);
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_index_check('sec_t');
\echo :LAST_ERROR_SQLSTATE
SELECT simhash_index_check('sec_t_id');
\echo :LAST_ERROR_SQLSTATE
CREATE TABLE sec_p (fp simhash) PARTITION BY RANGE (fp);
CREATE INDEX sec_p_fp ON sec_p USING simhash (fp);
SELECT simhash_index_check('sec_p_fp');
\echo :LAST_ERROR_SQLSTATE

DROP TABLE sec_p;
DROP TABLE sec_t;
DROP FUNCTION sec_trap(simhash);
DROP FUNCTION sec_escalate();
REVOKE EXECUTE ON FUNCTION simhash_index_check(regclass) FROM regress_simhash_owner, regress_simhash_other;
REVOKE CREATE ON SCHEMA public FROM regress_simhash_owner;
DROP ROLE regress_simhash_owner;
DROP ROLE regress_simhash_other;
