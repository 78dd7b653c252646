-- The outbox keeps links sealed (schema version 6, issue 29). A pending mail's link is a live
-- credential; the store seals it (and the bodies that carry it) under a subkey of the key file's
-- encryption key (src/mail/outbox-seal.ts), so a dump of the database holds no usable link. From
-- here on a clear link is refused, whoever writes it. NOT VALID: rows an earlier release left
-- clear are sealed by the first instance that starts after this step (it holds the key), not here.
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_link_sealed CHECK (link IS NULL OR link LIKE 'v1.%') NOT VALID;
