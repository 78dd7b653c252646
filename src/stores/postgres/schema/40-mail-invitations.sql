-- Invitations and the mail outbox.

CREATE TABLE invitations (
  tenant_id        text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  id               text COLLATE "C" NOT NULL,
  email            text NOT NULL,       -- trimmed and lower-cased
  profile_id       text,
  invited_by       text,
  token_hash       text NOT NULL,       -- SHA-256 of the mailed token; a resend replaces it
  expires_at       bigint NOT NULL,
  accepted_at      bigint,
  accepted_user_id text,
  revoked_at       bigint,
  created_at       bigint NOT NULL,
  updated_at       bigint NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (id),
  FOREIGN KEY (tenant_id, profile_id) REFERENCES profiles (tenant_id, id) ON DELETE SET NULL (profile_id),
  FOREIGN KEY (tenant_id, invited_by) REFERENCES users (tenant_id, id) ON DELETE SET NULL (invited_by),
  FOREIGN KEY (tenant_id, accepted_user_id) REFERENCES users (tenant_id, id) ON DELETE SET NULL (accepted_user_id)
);
CREATE UNIQUE INDEX invitations_by_token ON invitations (token_hash);
CREATE INDEX invitations_by_tenant ON invitations (tenant_id, created_at, id);
CREATE INDEX invitations_by_email ON invitations (tenant_id, email);

-- Transactional outbox: a mail row is written in the same transaction as the token it carries,
-- then delivered by SMTP with retries. Every instance's sender claims rows with
-- FOR UPDATE SKIP LOCKED, so each mail is sent by one of them. A system queue, not tenant data.
CREATE TABLE mail_outbox (
  id              text COLLATE "C" PRIMARY KEY,
  tenant_id       text REFERENCES tenants(id) ON DELETE CASCADE,
  kind            text NOT NULL,
  recipient       text NOT NULL,
  subject         text NOT NULL,
  text_body       text,
  html_body       text,
  link            text,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'sent', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  next_attempt_at bigint NOT NULL,
  locked_until    bigint,
  last_error      text,
  created_at      bigint NOT NULL,
  sent_at         bigint
);
CREATE INDEX mail_outbox_due ON mail_outbox (status, next_attempt_at);
CREATE INDEX mail_outbox_by_created ON mail_outbox (created_at);
