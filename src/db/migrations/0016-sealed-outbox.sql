-- ---- version 16: the outbox keeps links sealed (issue 29) ----

-- A pending mail's link is a live credential; the store seals it (and the bodies that carry it)
-- under a subkey of the key file's encryption key (src/mail/outbox-seal.ts), so a copy of the
-- file holds no usable link. The rows an earlier release left clear are sealed before this step
-- runs (and before the `.v<N>.bak` copy), by the code that holds the key. From here on, a link
-- that is not sealed is refused, whoever writes it: an older release writing clear links into
-- this file (it refuses to open it anyway: the version is newer than it knows) or a code path
-- that forgot to seal.
CREATE TRIGGER mail_outbox_link_sealed_insert BEFORE INSERT ON mail_outbox
  WHEN new.link IS NOT NULL AND new.link NOT GLOB 'v1.*'
BEGIN
  SELECT RAISE(ABORT, 'mail_outbox.link must be sealed');
END;
CREATE TRIGGER mail_outbox_link_sealed_update BEFORE UPDATE OF link ON mail_outbox
  WHEN new.link IS NOT NULL AND new.link NOT GLOB 'v1.*'
BEGIN
  SELECT RAISE(ABORT, 'mail_outbox.link must be sealed');
END;
