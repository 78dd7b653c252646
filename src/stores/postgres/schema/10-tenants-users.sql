-- Organizations, their modules, profiles and users. Times are bigint milliseconds since the epoch
-- (UTC); ids are nanoid text; 0/1 flags are integers, as on SQLite, so rows look the same.
-- Every key and index of tenant data starts with tenant_id, and every reference between tenant
-- rows names the tenant too: a row can never point at another organization's row, and a
-- distributed PostgreSQL (Citus, by tenant_id) keeps each organization's rows together.

CREATE TABLE settings (
  key   text PRIMARY KEY,
  value text NOT NULL
);

CREATE TABLE tenants (
  id          text COLLATE "C" PRIMARY KEY,
  name        text NOT NULL,
  subdomain   text NOT NULL UNIQUE,
  created_at  bigint NOT NULL,
  disabled_at bigint
);

CREATE TABLE tenant_modules (
  tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  module    text NOT NULL,
  PRIMARY KEY (tenant_id, module)
);

CREATE TABLE profiles (
  tenant_id  text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id         text COLLATE "C" NOT NULL,
  name       text NOT NULL,
  is_admin   integer NOT NULL DEFAULT 0 CHECK (is_admin IN (0, 1)),
  created_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, name),
  UNIQUE (id)
);

CREATE TABLE users (
  tenant_id         text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id                text COLLATE "C" NOT NULL,
  email             text NOT NULL,          -- trimmed and lower-cased
  full_name         text,
  role              text NOT NULL CHECK (role IN ('admin', 'member')),
  profile_id        text,
  password_hash     text NOT NULL,
  created_at        bigint NOT NULL,
  updated_at        bigint NOT NULL,
  email_verified_at bigint,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, email),
  UNIQUE (id),
  FOREIGN KEY (tenant_id, profile_id) REFERENCES profiles (tenant_id, id) ON DELETE SET NULL (profile_id)
);
-- Sign-in without a tenant looks an address up across organizations (by design: the one
-- cross-tenant read of users; see docs/decisions.md for what it becomes when distributed).
CREATE INDEX users_by_email ON users (email);
