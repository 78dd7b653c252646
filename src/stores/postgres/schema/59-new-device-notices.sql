-- The new-device sign-in mail and "this wasn't me" (schema version 9, issue 33.2).
-- Where a user has signed in from, per organization: a browser's device cookie (kind 'cookie':
-- `device_hash` is SHA-256 of the cookie's secret; known from then on), or, for a client that sent
-- no device cookie and is not a browser, its IP address and user agent (kind 'source': SHA-256 of
-- both; known for 30 days from `noticed_at`, when it was last mailed about). Not tied to a
-- session: signing out keeps a device known.
CREATE TABLE known_devices (
  tenant_id    text NOT NULL,
  user_id      text NOT NULL,
  device_hash  text NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('cookie', 'source')),
  noticed_at   bigint NOT NULL,
  last_seen_at bigint NOT NULL,
  PRIMARY KEY (tenant_id, user_id, device_hash),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX known_devices_by_last_seen ON known_devices (tenant_id, last_seen_at);

-- The "this wasn't me" link of a new-device mail: SHA-256 of its token, the session that sign-in
-- opened (its id and start). Used once, within 7 days: it ends that session and every later one.
CREATE TABLE sign_in_notices (
  tenant_id          text NOT NULL,
  token_hash         text NOT NULL,
  user_id            text NOT NULL,
  session_id         text NOT NULL,
  session_created_at bigint NOT NULL,
  created_at         bigint NOT NULL,
  expires_at         bigint NOT NULL,
  used_at            bigint,
  PRIMARY KEY (tenant_id, token_hash),
  FOREIGN KEY (tenant_id, user_id) REFERENCES users (tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX sign_in_notices_by_expiry ON sign_in_notices (tenant_id, expires_at);
