-- Per-request cost independent of the number of organizations (schema version 4, issues 27 and 28).
--
-- 1. The address directory. A lookup that names no organization (sign-in, magic link or password
-- reset without a tenant) finds the address's accounts here by the SHA-256 of the address, then
-- reads each account by its (tenant_id, id) key: the cost follows the address's accounts, not the
-- organizations (schema 53 left it one probe of users (tenant_id, email) per organization). Under
-- Citus it is distributed by email_hash (a lookup reads one shard); it is not tenant data and not
-- co-located with users, so the stores write it beside users in the same transaction (no
-- trigger, no foreign key: Citus allows neither across distributions). A stale row is harmless
-- (the lookup re-reads the account and compares its address); a missing one would hide an
-- account, so every write of users writes it, and copy-to-postgres rebuilds it.
-- email_hash is lower-case hex, as src/stores/postgres/user-directory.ts computes it.
CREATE TABLE user_directory (
  email_hash text COLLATE "C" NOT NULL,
  tenant_id  text NOT NULL,
  user_id    text COLLATE "C" NOT NULL,
  PRIMARY KEY (email_hash, tenant_id, user_id)
);
INSERT INTO user_directory (email_hash, tenant_id, user_id)
  SELECT encode(sha256(convert_to(email, 'UTF8')), 'hex'), tenant_id, id FROM users
  ON CONFLICT DO NOTHING;

-- 2. Tenant numbers without a lock. A tenant's first deal drew max(tenant_no) + 1 under one
-- advisory lock held to its commit, so a long first import in one organization made every other
-- organization's first deal wait for it. A sequence never waits (nextval is not rolled back; a gap
-- is harmless: the number only has to be distinct), and every organization now gets its numbering
-- row when it is created, so a first deal only updates its own row.
CREATE SEQUENCE crm_tenant_no;
SELECT setval('crm_tenant_no', greatest(1, (SELECT coalesce(max(tenant_no), 0) FROM crm_tenants)), (SELECT count(*) > 0 FROM crm_tenants));
INSERT INTO crm_tenants (tenant_id, tenant_no, next_deal)
  SELECT id, nextval('crm_tenant_no'), 0 FROM (SELECT id FROM tenants t WHERE NOT EXISTS (SELECT 1 FROM crm_tenants c WHERE c.tenant_id = t.id) ORDER BY created_at, id) fresh;

-- 3. Links that name no organization. A link mailed before links named their organization (a bare
-- secret; schema 53, version 3) is found by one probe of (tenant_id, token_hash) per organization.
-- Such a link can be live only until the last row written before version 3 expires: that time is
-- kept here (one row at most; not in settings, whose rows copy-to-postgres copies and counts),
-- and after it, or at once in a database that never had such rows, a bare secret is refused
-- without a query. A database made new has no schema_version row 3 while this file runs.
CREATE TABLE unnamed_links_until (
  until bigint NOT NULL
);
DO $$
DECLARE
  upgraded bigint;
BEGIN
  IF to_regclass('schema_version') IS NULL THEN RETURN; END IF;
  SELECT applied_at INTO upgraded FROM schema_version WHERE version = 3;
  IF upgraded IS NULL THEN RETURN; END IF;
  INSERT INTO unnamed_links_until (until)
    SELECT e FROM (SELECT max(e) AS e FROM (
      SELECT max(expires_at) AS e FROM magic_links WHERE created_at <= upgraded
      UNION ALL SELECT max(expires_at) FROM account_tokens WHERE created_at <= upgraded
      UNION ALL SELECT max(expires_at) FROM invitations WHERE created_at <= upgraded) x) y
    WHERE e IS NOT NULL;
END $$;
