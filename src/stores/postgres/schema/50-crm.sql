-- CRM: pipeline stages, accounts, contacts, deals. The deal list's search indexes and counters
-- are in 51-deal-search.sql.

CREATE TABLE pipeline_stages (
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id          text COLLATE "C" NOT NULL,
  key         text NOT NULL,
  name        text NOT NULL,
  color       text NOT NULL,
  position    integer NOT NULL,
  probability integer NOT NULL CHECK (probability BETWEEN 0 AND 100),
  is_won      integer NOT NULL DEFAULT 0 CHECK (is_won IN (0, 1)),
  is_lost     integer NOT NULL DEFAULT 0 CHECK (is_lost IN (0, 1)),
  created_at  bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, key),
  UNIQUE (id)
);

-- Per-tenant CRM numbering (deal seq = tenant_no * 2^32 + n, as on SQLite).
CREATE TABLE crm_tenants (
  tenant_id text PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
  tenant_no bigint NOT NULL UNIQUE,
  next_deal bigint NOT NULL DEFAULT 0
);

CREATE TABLE accounts (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         text COLLATE "C" NOT NULL,
  name       text NOT NULL,
  domain     text,
  industry   text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id)
);
CREATE INDEX accounts_by_tenant ON accounts (tenant_id, created_at, id);

CREATE TABLE contacts (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         text COLLATE "C" NOT NULL,
  first_name text NOT NULL,
  last_name  text,
  email      text,
  phone      text,
  account_id text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id),
  FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id) ON DELETE SET NULL (account_id)
);
CREATE INDEX contacts_by_tenant ON contacts (tenant_id, created_at, id);
CREATE INDEX contacts_by_account ON contacts (tenant_id, account_id);

-- Deals, with the copies of the names a deal shows and their sort keys, as on SQLite. The keys
-- compare byte by byte (COLLATE "C"), as SQLite's do, whatever the database's locale.
CREATE TABLE deals (
  tenant_id      text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id             text COLLATE "C" NOT NULL,
  seq            bigint NOT NULL,
  title          text NOT NULL,
  account_id     text NOT NULL,
  contact_id     text,
  assigned_to    text,
  stage          text NOT NULL,
  value_cents    bigint NOT NULL DEFAULT 0,
  currency       text NOT NULL DEFAULT 'USD',
  close_date     text,                  -- YYYY-MM-DD
  probability    integer CHECK (probability BETWEEN 0 AND 100),
  notes          text,
  custom_data    text,                  -- JSON object
  created_at     bigint NOT NULL,
  updated_at     bigint NOT NULL,
  title_key text COLLATE "C" NOT NULL,
  account_key text COLLATE "C" NOT NULL,
  contact_key text COLLATE "C",
  assignee_key text COLLATE "C",
  search_text    text NOT NULL,
  account_name   text NOT NULL,
  contact_name   text,
  assignee_name  text,
  assignee_email text,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id),
  UNIQUE (tenant_id, seq),
  FOREIGN KEY (tenant_id, account_id) REFERENCES accounts (tenant_id, id),
  FOREIGN KEY (tenant_id, contact_id) REFERENCES contacts (tenant_id, id),
  FOREIGN KEY (tenant_id, assigned_to) REFERENCES users (tenant_id, id)
);
-- One index per sort order (ties by id); nullable keys sort nulls last both ways.
CREATE INDEX deals_by_created ON deals (tenant_id, created_at, id);
CREATE INDEX deals_by_updated ON deals (tenant_id, updated_at, id);
CREATE INDEX deals_by_title ON deals (tenant_id, title_key, id);
CREATE INDEX deals_by_value ON deals (tenant_id, value_cents, id);
CREATE INDEX deals_by_stage ON deals (tenant_id, stage, id);
CREATE INDEX deals_by_account ON deals (tenant_id, account_key, id);
CREATE INDEX deals_by_stage_created ON deals (tenant_id, stage, created_at, id);
CREATE INDEX deals_by_assignee_created ON deals (tenant_id, assigned_to, created_at, id);
CREATE INDEX deals_by_close_asc ON deals (tenant_id, (close_date IS NULL), close_date, id);
CREATE INDEX deals_by_close_desc ON deals (tenant_id, (close_date IS NULL), close_date DESC, id DESC);
CREATE INDEX deals_by_probability_asc ON deals (tenant_id, (probability IS NULL), probability, id);
CREATE INDEX deals_by_probability_desc ON deals (tenant_id, (probability IS NULL), probability DESC, id DESC);
CREATE INDEX deals_by_contact_asc ON deals (tenant_id, (contact_key IS NULL), contact_key, id);
CREATE INDEX deals_by_contact_desc ON deals (tenant_id, (contact_key IS NULL), contact_key DESC, id DESC);
CREATE INDEX deals_by_assignee_asc ON deals (tenant_id, (assignee_key IS NULL), assignee_key, id);
CREATE INDEX deals_by_assignee_desc ON deals (tenant_id, (assignee_key IS NULL), assignee_key DESC, id DESC);
-- Renames find the deals that copy a name.
CREATE INDEX deals_by_account_id ON deals (tenant_id, account_id);
CREATE INDEX deals_by_contact_id ON deals (tenant_id, contact_id);
