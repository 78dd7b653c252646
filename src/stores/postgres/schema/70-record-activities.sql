-- An account's and a contact's activity timeline (schema version 20, issue 32): the same tables
-- as SQLite's migration 31, numbered as deal_activities is (n per record, taken while the
-- record's row is locked by the writing transaction). Removed with the record (the foreign key
-- cascades, through the primary key's tenant-first prefix).
CREATE TABLE account_activities (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  account_id text COLLATE "C" NOT NULL,
  n          bigint NOT NULL,
  id         text COLLATE "C" NOT NULL,
  type       text NOT NULL,
  actor_id   text,
  created_at bigint NOT NULL,
  data       text NOT NULL,
  PRIMARY KEY (tenant_id, account_id, n),
  FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE CASCADE
);

CREATE TABLE contact_activities (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  contact_id text COLLATE "C" NOT NULL,
  n          bigint NOT NULL,
  id         text COLLATE "C" NOT NULL,
  type       text NOT NULL,
  actor_id   text,
  created_at bigint NOT NULL,
  data       text NOT NULL,
  PRIMARY KEY (tenant_id, contact_id, n),
  FOREIGN KEY (tenant_id, contact_id) REFERENCES contacts (tenant_id, id) ON DELETE CASCADE
);
