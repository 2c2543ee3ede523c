-- Chef-signed requests accepted by any gateway sharing this database: one signed request is accepted
-- once, across restarts and gateways. A row is useless once its timestamp is outside the clock-skew
-- window (`expires`, seconds since the epoch), and is deleted then.
CREATE TABLE IF NOT EXISTS signatures (
    digest   TEXT PRIMARY KEY,
    expires  BIGINT NOT NULL,
    claimant TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS signatures_expires ON signatures(expires);
