-- The last link checks (declared links against LLDP), shared by every gateway: the status page's
-- topology shows the newest, whichever gateway made it (src/pg/history/link_checks.rs). `origin` is
-- `page` (the "Check links" button; `source` the identity) or `atomic` (an atomic run's check_links;
-- `source` the run id); `report` the comparison's JSON.
CREATE TABLE link_checks (
    id      BIGSERIAL PRIMARY KEY,
    at      TEXT NOT NULL,
    origin  TEXT NOT NULL,
    source  TEXT NOT NULL,
    report  TEXT NOT NULL,
    gateway TEXT NOT NULL
);
