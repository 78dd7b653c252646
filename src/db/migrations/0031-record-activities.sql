-- ---- version 31: an account's and a contact's activity timeline (issue 32) ----

-- What happened to an account, to a contact, newest first by `n` (1, 2, ... per record, taken in
-- the writing transaction), as a deal's (deal_activities): written in the same transaction as
-- the change; removed with the record (triggers below: a foreign key's cascade would look the
-- rows up by the record id alone, outside any tenant-first index).
CREATE TABLE account_activities (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  account_id TEXT NOT NULL,
  n          INTEGER NOT NULL,
  id         TEXT NOT NULL,
  type       TEXT NOT NULL,
  actor_id   TEXT,
  created_at INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, account_id, n)
) STRICT, WITHOUT ROWID;

CREATE TABLE contact_activities (
  tenant_id  TEXT NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  contact_id TEXT NOT NULL,
  n          INTEGER NOT NULL,
  id         TEXT NOT NULL,
  type       TEXT NOT NULL,
  actor_id   TEXT,
  created_at INTEGER NOT NULL,
  data       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, contact_id, n)
) STRICT, WITHOUT ROWID;

CREATE TRIGGER account_activities_with_account AFTER DELETE ON accounts BEGIN
  DELETE FROM account_activities WHERE tenant_id = old.tenant_id AND account_id = old.id;
END;
CREATE TRIGGER contact_activities_with_contact AFTER DELETE ON contacts BEGIN
  DELETE FROM contact_activities WHERE tenant_id = old.tenant_id AND contact_id = old.id;
END;
